/**
 * @module lib/a2a/store/postgres/retention — the shared store's retention for one node:
 * terminal tasks past the count bound (oldest first), past the byte bound (oldest first, until
 * the rest fits), or past the age bound are deleted in batches, never one a process still holds
 * or streams.
 */

import type { SQL } from 'bun';
import { countTasks, ROW_BYTES, type Pruned } from './task-count.ts';

/** Tasks deleted per retention statement, so one statement never locks many rows for long. */
const PRUNE_BATCH = 1000;

export interface PruneOptions {
  node: string;
  maxStored: number;
  /** Stored bytes of the node's tasks (task, push configs, events) kept at most. */
  maxBytes: number;
  maxAgeMs: number;
  /** True once the store closed: the run stops between batches. */
  closed: () => boolean;
  /** A task deleted: the cache lets it go. */
  deleted: (id: string) => void;
}

/** Of the oldest terminal tasks `found`, those whose bytes bring the store under its byte bound. */
function pastBytes(found: { id: string; b: string | number }[], excess: number) {
  const out: string[] = [];
  for (const r of found) {
    if (excess <= 0) break;
    out.push(r.id);
    excess -= Number(r.b);
  }
  return out;
}

/** Deletes what the bounds allow; answers how many tasks went, how many were counted first, the bytes left. */
export async function pruneTasks(sql: SQL, o: PruneOptions): Promise<Pruned> {
  const { node } = o;
  let deleted = 0;
  const { n: counted, bytes: countedBytes } = await countTasks(sql, node);
  let bytes = countedBytes;
  let excess = counted - o.maxStored;
  const cutoff = Date.now() - o.maxAgeMs;
  const done = () => ({ deleted, counted, bytes });
  for (;;) {
    if (o.closed()) return done();
    const overBytes = excess <= 0 && bytes > o.maxBytes;
    const n = excess > 0 ? Math.min(excess, PRUNE_BATCH) : PRUNE_BATCH;
    // Terminal only, and none a process holds or streams (its lease or watch still runs). The
    // ids are chosen first and deleted by list: a LIMIT inside the DELETE may be re-run when a
    // concurrent write rechecks a row, and delete more than asked.
    const found = await sql.unsafe<{ id: string; b: string }[]>(
      `SELECT id, ${ROW_BYTES} AS b FROM lume_a2a_tasks
      WHERE node = $1 AND state IN ('completed', 'failed', 'canceled', 'rejected')
        AND ($2::boolean OR ts < $3)
      ORDER BY ts LIMIT $4`,
      [node, excess > 0 || overBytes, cutoff, n],
    );
    if (!found.length) return done();
    const chosen = overBytes ? pastBytes(found, bytes - o.maxBytes) : found.map((r) => r.id);
    const rows = await sql.unsafe<{ id: string; b: string }[]>(
      `WITH gone AS (
        DELETE FROM lume_a2a_tasks
        WHERE node = $1 AND id = ANY(string_to_array($2, ',')::uuid[])
          AND state IN ('completed', 'failed', 'canceled', 'rejected')
          AND coalesce(lease_until < now(), true) AND coalesce(watched_until < now(), true)
        RETURNING id, ${ROW_BYTES} AS b
      )
      SELECT id, b FROM gone`,
      [node, chosen.join(',')],
    );
    for (const r of rows) o.deleted(r.id);
    deleted += rows.length;
    excess -= rows.length;
    for (const r of rows) bytes -= Number(r.b);
    if (found.length < n || !rows.length) return done();
  }
}
