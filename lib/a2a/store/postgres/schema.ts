/**
 * @module lib/a2a/store/postgres/schema — the shared task store's tables (tasks with their event
 * logs, live processes), created once under an advisory lock, the migrations of tables made by
 * earlier versions, and the row shape read back from them.
 */

import type { SQL } from 'bun';
import type { PushConfig, Task } from '../../types.ts';
import { readEventLog } from '../event-log.ts';
import type { TaskRecord } from '../task-store.ts';

/** The LISTEN/NOTIFY channel carrying `id version process node` of every change. */
export const CHANNEL = 'lume_a2a_tasks';
/**
 * The schema this code writes, kept in each process's heartbeat row: 2 drops
 * `lume_a2a_task_events` (the events of recent writes, which schema 1 wrote for streams on other
 * processes; the task's event log in its row holds them now).
 */
export const SCHEMA_VERSION = 2;

export interface Row {
  version: string;
  task: string | null;
  push: string;
  /** The process that last wrote the task (not its push configs). */
  writer?: string | null;
  /** The owner key of the principal that created the task (not the `owner` column, a process). */
  creator?: string | null;
  /** The task's event log as JSON (lib/a2a/store/event-log.ts), null when it has none or was not read. */
  events?: string | null;
}

export function toRecord(row: Row): TaskRecord | undefined {
  if (row.task === null) return undefined;
  const events = row.events ? readEventLog(JSON.parse(row.events)) : undefined;
  return {
    task: JSON.parse(row.task) as Task,
    push: JSON.parse(row.push) as PushConfig[],
    version: Number(row.version),
    ...(row.creator ? { creator: row.creator } : {}),
    ...(events ? { events } : {}),
  };
}

/** The task's `ts` column: its status time in ms. */
export function timeOf(task: Task): number {
  return Date.parse(task.status.timestamp) || 0;
}

/** The payload of a change's notification. */
export function notice(id: string, version: number, origin: string, node: string): string {
  return `${id} ${version} ${origin} ${node}`;
}

/**
 * Creates the tables and brings those of earlier versions up to this schema; answers whether
 * every table this schema drops is gone (`dropOldTables`).
 */
export async function migrate(sql: SQL): Promise<boolean> {
  // Two processes starting together must not both create the tables: one lock for the DDL.
  await sql.begin(async (tx) => {
    await tx`SELECT pg_advisory_xact_lock(hashtext('lume_a2a_tasks'))`;
    await tx`CREATE TABLE IF NOT EXISTS lume_a2a_tasks (
      node text NOT NULL,
      id uuid NOT NULL,
      context_id text NOT NULL,
      state text NOT NULL,
      ts bigint NOT NULL,
      version bigint NOT NULL,
      task text NOT NULL,
      push text NOT NULL DEFAULT '[]',
      writer text,
      owner text,
      lease_until timestamptz,
      watched_until timestamptz,
      creator text,
      events text,
      PRIMARY KEY (node, id))`;
    // Tables made before tasks had creators gain the column; their tasks belong to anonymous.
    await tx`ALTER TABLE lume_a2a_tasks ADD COLUMN IF NOT EXISTS creator text`;
    // The task's bounded event log, written with the task (a resuming stream replays it).
    await tx`ALTER TABLE lume_a2a_tasks ADD COLUMN IF NOT EXISTS events text`;
    await tx`CREATE INDEX IF NOT EXISTS lume_a2a_tasks_by_time ON lume_a2a_tasks (node, ts DESC, id DESC)`;
    await tx`CREATE INDEX IF NOT EXISTS lume_a2a_tasks_terminal ON lume_a2a_tasks (node, ts) WHERE state IN ('completed', 'failed', 'canceled', 'rejected')`;
    await tx`CREATE INDEX IF NOT EXISTS lume_a2a_tasks_running ON lume_a2a_tasks (node) WHERE state IN ('submitted', 'working')`;
    await tx`CREATE TABLE IF NOT EXISTS lume_a2a_processes (
      process text PRIMARY KEY,
      node text NOT NULL,
      alive_until timestamptz NOT NULL)`;
    // The schema each live process writes (null: schema 1, which had no column).
    await tx`ALTER TABLE lume_a2a_processes ADD COLUMN IF NOT EXISTS schema integer`;
  });
  // Not in the way of a start: a heartbeat tries again.
  return dropOldTables(sql).catch(() => false);
}

/**
 * Drops the tables this schema no longer reads or writes, once no live process of an earlier
 * schema (which still writes them) is left; answers whether they are gone. Until then the store
 * tries again at each heartbeat, so a node's processes may be replaced one by one.
 */
export function dropOldTables(sql: SQL): Promise<boolean> {
  return sql.begin(async (tx) => {
    await tx`SELECT pg_advisory_xact_lock(hashtext('lume_a2a_tasks'))`;
    const older = await tx`SELECT 1 FROM lume_a2a_processes
      WHERE alive_until > now() AND coalesce(schema, 1) < ${SCHEMA_VERSION} LIMIT 1`;
    if (older.length) return false;
    await tx`DROP TABLE IF EXISTS lume_a2a_task_events`;
    return true;
  });
}
