/**
 * @module lib/a2a/store/postgres/transactions — the shared store's read-change-write of one
 * task under its row lock: a turn's change (told whether another live process runs the task or
 * left it orphaned, optionally claiming its lease) and a change of its push configs; each
 * notifies the other processes at commit.
 */

import type { SQL } from 'bun';
import { isA2AError, type A2AError } from '../../errors.ts';
import type { PushConfig, TaskEvent } from '../../types.ts';
import type { TaskRecord, TurnState } from '../task-store.ts';
import { CHANNEL, notice, timeOf, toRecord, type Row } from './schema.ts';
import { logText, type Writer } from './statements.ts';

/**
 * Applies `change` to the task as stored; `lease` (ms) claims the turn for this process. The
 * change's answer: null leaves the task as it is (undefined), an error is passed back.
 */
export function updateInTransaction(
  sql: SQL,
  w: Writer,
  id: string,
  change: (rec: TaskRecord, turn: TurnState) => TaskEvent[] | A2AError | null,
  lease: number | null,
): Promise<{ rec: TaskRecord; events: TaskEvent[] } | A2AError | undefined> {
  return sql.begin(async (tx) => {
    const [row] = await tx<(Row & { busy: boolean; orphaned: boolean })[]>`
      SELECT version, task, push, creator, events,
        (owner IS DISTINCT FROM ${w.process} AND lease_until > now() AND state IN ('submitted', 'working')) AS busy,
        (owner IS DISTINCT FROM ${w.process} AND state IN ('submitted', 'working') AND NOT EXISTS (
          SELECT 1 FROM lume_a2a_processes p WHERE p.process = t.owner AND p.alive_until > now())) AS orphaned
      FROM lume_a2a_tasks t WHERE node = ${w.node} AND id = ${id} FOR UPDATE`;
    const rec = row && toRecord(row);
    if (!rec) return undefined;
    const events = change(rec, { busyElsewhere: row!.busy, orphaned: row!.orphaned });
    if (events === null) return undefined;
    if (isA2AError(events)) return events;
    const version = rec.version! + 1;
    const t = rec.task;
    await tx`
      UPDATE lume_a2a_tasks SET context_id = ${t.contextId}, state = ${t.status.state}, ts = ${timeOf(t)},
        task = ${JSON.stringify(t)}, events = ${logText(rec)}, version = ${version}, writer = ${w.process},
        owner = CASE WHEN ${lease}::int IS NULL THEN owner ELSE ${w.process} END,
        lease_until = CASE WHEN ${lease}::int IS NULL THEN lease_until ELSE now() + ${lease}::int * interval '1 millisecond' END
      WHERE node = ${w.node} AND id = ${id}`;
    // Delivered at commit; every process holding or watching the task reads the row.
    await tx`SELECT pg_notify(${CHANNEL}, ${notice(id, version, w.process, w.node)})`;
    rec.version = version;
    return { rec, events };
  });
}

/** Applies `change` to the task's push configs (their own column: no conflict with turn writes). */
export function updatePushInTransaction(
  sql: SQL,
  w: Writer,
  id: string,
  change: (push: PushConfig[]) => PushConfig[] | A2AError,
): Promise<PushConfig[] | A2AError | undefined> {
  return sql.begin(async (tx) => {
    const [row] = await tx<{ version: string; push: string }[]>`
      SELECT version, push FROM lume_a2a_tasks WHERE node = ${w.node} AND id = ${id} FOR UPDATE`;
    if (!row) return undefined;
    const push = change(JSON.parse(row.push) as PushConfig[]);
    if (isA2AError(push)) return push;
    // Push configs have their own column, so they never conflict with a turn's task writes.
    await tx`UPDATE lume_a2a_tasks SET push = ${JSON.stringify(push)} WHERE node = ${w.node} AND id = ${id}`;
    await tx`SELECT pg_notify(${CHANNEL}, ${notice(id, Number(row.version), w.process, w.node)})`;
    return push;
  });
}
