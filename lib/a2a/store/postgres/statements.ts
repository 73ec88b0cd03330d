/**
 * @module lib/a2a/store/postgres/statements — the shared store's writes and reads of one
 * task as SQL (a new task's insert: lib/a2a/store/postgres/insert-batch.ts): the
 * version-guarded update (the task with its event log) that notifies the processes watching it,
 * the read of a changed task, and the liveness rows (process heartbeat, turn leases, stream
 * watches, orphaned tasks).
 */

import type { SQL } from 'bun';
import type { TaskRecord } from '../task-store.ts';
import { CHANNEL, SCHEMA_VERSION, timeOf, type Row } from './schema.ts';

/** Who writes: the node whose rows these are and the process writing them. */
export interface Writer {
  node: string;
  process: string;
}

/** A lease length in ms, or null for none. */
type Lease = number | null;

/** A record's event log as its column holds it (null: none). */
export const logText = (rec: TaskRecord): string | null =>
  rec.events?.length ? JSON.stringify(rec.events) : null;

/**
 * A later write, only over version `expected` (the task and its event log in one row), notifying
 * the other processes when one of them streams the task. The new version, or undefined when
 * another process wrote first.
 */
export async function updateTaskAt(
  sql: SQL,
  w: Writer,
  id: string,
  rec: TaskRecord,
  body: string,
  expected: number,
  lease: Lease,
): Promise<number | undefined> {
  const t = rec.task;
  const [row] = await sql<{ version: string }[]>`
    WITH up AS (
      UPDATE lume_a2a_tasks SET context_id = ${t.contextId}, state = ${t.status.state}, ts = ${timeOf(t)}, task = ${body},
        events = ${logText(rec)}, version = version + 1, writer = ${w.process}, owner = ${w.process},
        lease_until = CASE WHEN ${lease}::int IS NULL THEN NULL ELSE now() + ${lease}::int * interval '1 millisecond' END
      WHERE node = ${w.node} AND id = ${id} AND version = ${expected}
      RETURNING version, coalesce(watched_until > now(), false) AS watched
    )
    SELECT version, CASE WHEN watched THEN pg_notify(${CHANNEL}, ${id} || ' ' || version || ' ' || ${w.process} || ' ' || ${w.node}) END AS sent
    FROM up`;
  return row ? Number(row.version) : undefined;
}

/** A task's row as stored (with its event log). */
export async function readTask(sql: SQL, node: string, id: string): Promise<Row | undefined> {
  const [row] = await sql<Row[]>`
    SELECT version, task, push, writer, creator, events
    FROM lume_a2a_tasks WHERE node = ${node} AND id = ${id}`;
  return row;
}

/** This process is alive for one more lease (the others read it to tell whose tasks are orphaned). */
export async function heartbeat(sql: SQL, w: Writer, leaseMs: number): Promise<void> {
  await sql`
    INSERT INTO lume_a2a_processes (process, node, alive_until, schema) VALUES (${w.process}, ${w.node}, now() + ${leaseMs} * interval '1 millisecond', ${SCHEMA_VERSION})
    ON CONFLICT (process) DO UPDATE SET alive_until = excluded.alive_until, schema = excluded.schema`;
}

/** Running tasks of the node whose owner is no live process (at most 100). */
export async function orphanedTasks(sql: SQL, w: Writer): Promise<string[]> {
  const rows = await sql<{ id: string }[]>`
    SELECT id FROM lume_a2a_tasks t
    WHERE node = ${w.node} AND state IN ('submitted', 'working') AND owner IS DISTINCT FROM ${w.process}
      AND NOT EXISTS (SELECT 1 FROM lume_a2a_processes p WHERE p.process = t.owner AND p.alive_until > now())
    LIMIT 100`;
  return rows.map((r) => r.id);
}

/** Renews the leases of the turns running here and the watches of the streams open here. */
export async function renewLeases(
  sql: SQL,
  w: Writer,
  leaseMs: number,
  held: string[],
  watched: string[],
): Promise<void> {
  // Processes gone for a day are forgotten (their tasks were taken over long before).
  await sql`DELETE FROM lume_a2a_processes WHERE alive_until < now() - interval '1 day'`;
  if (held.length)
    await sql`UPDATE lume_a2a_tasks SET lease_until = now() + ${leaseMs} * interval '1 millisecond'
      WHERE node = ${w.node} AND id = ANY(${sql.array(held, 'UUID' as never)}) AND owner = ${w.process}`;
  if (watched.length)
    await sql`UPDATE lume_a2a_tasks SET watched_until = now() + ${leaseMs} * interval '1 millisecond'
      WHERE node = ${w.node} AND id = ANY(${sql.array(watched, 'UUID' as never)})`;
}
