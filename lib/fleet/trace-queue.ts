/**
 * @module lib/fleet/trace-queue — the call trace's records on their way into the table
 * (lib/fleet/trace-table.ts): committed in groups, after at most 20 ms or 512 waiting rows, in a
 * timer of their own rather than in the call that made them, and with retention run after the
 * commits that bring it due. The group cap bounds the queue, and nothing is dropped: a read
 * commits what waits first (lib/fleet/trace.ts).
 */

import type { TraceTable } from './trace-table.ts';
import type { TraceRecord } from './trace-types.ts';

/** Rows wait at most this long (or until this many wait) before they are committed together. */
const FLUSH_MS = 20;
export const TRACE_QUEUE_ROWS = 512;
/** Retention runs after this many new rows or this much time, whichever comes first. */
const PRUNE_EVERY_ROWS = 1_000;
const PRUNE_EVERY_MS = 60_000;

export interface TraceQueue {
  add(r: TraceRecord): void;
  /** Commits every waiting record now, and runs retention if it is due. */
  flush(): void;
  /** Runs retention now, after a flush. */
  prune(): void;
}

export interface Retention {
  maxRows: number;
  maxAgeMs: number;
  now: () => number;
}

export function createTraceQueue(table: TraceTable, keep: Retention): TraceQueue {
  let rows: TraceRecord[] = [];
  let timer: ReturnType<typeof setTimeout> | null = null;
  let sincePrune = 0;
  let prunedAt = 0;
  const prune = () => {
    sincePrune = 0;
    prunedAt = keep.now();
    table.prune(prunedAt, keep.maxAgeMs, keep.maxRows);
  };
  const flush = () => {
    if (timer) clearTimeout(timer);
    timer = null;
    if (!rows.length) return;
    const all = rows;
    rows = [];
    table.write(all);
    sincePrune += all.length;
    const due = sincePrune >= Math.min(PRUNE_EVERY_ROWS, keep.maxRows);
    if (due || keep.now() - prunedAt >= PRUNE_EVERY_MS) prune();
  };
  return {
    add(r) {
      rows.push(r);
      if (rows.length >= TRACE_QUEUE_ROWS) flush();
      else timer ??= setTimeout(flush, FLUSH_MS);
    },
    flush,
    prune() {
      flush();
      prune();
    },
  };
}
