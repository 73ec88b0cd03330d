/**
 * @module lib/a2a/store/postgres/retention — the shared store's retention for one node:
 * terminal tasks past the count bound (oldest first) or the age bound are deleted in batches,
 * never one a process still holds or streams.
 */

import type { SQL } from 'bun';

/** Tasks deleted per retention statement, so one statement never locks many rows for long. */
const PRUNE_BATCH = 1000;

export interface PruneOptions {
  node: string;
  maxStored: number;
  maxAgeMs: number;
  /** True once the store closed: the run stops between batches. */
  closed: () => boolean;
  /** A task deleted: the cache lets it go. */
  deleted: (id: string) => void;
}

/** Deletes what the bounds allow; answers how many tasks went and how many were counted first. */
export async function pruneTasks(
  sql: SQL,
  o: PruneOptions,
): Promise<{ deleted: number; counted: number }> {
  const { node } = o;
  let deleted = 0;
  const [row] = await sql<
    { n: string }[]
  >`SELECT count(*) AS n FROM lume_a2a_tasks WHERE node = ${node}`;
  const counted = Number(row!.n);
  let excess = counted - o.maxStored;
  const cutoff = Date.now() - o.maxAgeMs;
  for (;;) {
    if (o.closed()) return { deleted, counted };
    const n = excess > 0 ? Math.min(excess, PRUNE_BATCH) : PRUNE_BATCH;
    // Terminal only, and none a process holds or streams (its lease or watch still runs). The
    // ids are chosen first and deleted by list: a LIMIT inside the DELETE may be re-run when a
    // concurrent write rechecks a row, and delete more than asked.
    const chosen = await sql<{ id: string }[]>`
      SELECT id FROM lume_a2a_tasks
      WHERE node = ${node} AND state IN ('completed', 'failed', 'canceled', 'rejected')
        AND (${excess > 0}::boolean OR ts < ${cutoff})
      ORDER BY ts LIMIT ${n}`;
    if (!chosen.length) return { deleted, counted };
    const list = chosen.map((r) => r.id).join(',');
    const rows = await sql<{ id: string }[]>`
      WITH gone AS (
        DELETE FROM lume_a2a_tasks
        WHERE node = ${node} AND id = ANY(string_to_array(${list}, ',')::uuid[])
          AND state IN ('completed', 'failed', 'canceled', 'rejected')
          AND coalesce(lease_until < now(), true) AND coalesce(watched_until < now(), true)
        RETURNING id
      ), ev AS (
        DELETE FROM lume_a2a_task_events e USING gone WHERE e.node = ${node} AND e.id = gone.id
      )
      SELECT id FROM gone`;
    for (const r of rows) o.deleted(r.id);
    deleted += rows.length;
    excess -= rows.length;
    if (chosen.length < n || !rows.length) return { deleted, counted };
  }
}
