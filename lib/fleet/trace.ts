/**
 * @module lib/fleet/trace — the call trace: one record per cross-node call the hub makes (time, from, to,
 * capability, duration, outcome, error code, bytes, and the W3C trace, span and parent span ids that
 * link a call to the call that caused it), kept in SQLite through `bun:sqlite` (the table in
 * lib/fleet/trace-table.ts, committed in groups by lib/fleet/trace-queue.ts), paged newest
 * first, and pushed live to subscribers. Bounded: names and codes are cut to a fixed length
 * before they are stored, and rows past the row cap or older than the age cap are deleted.
 */

import type { Database } from 'bun:sqlite';
import { LIMITS } from '../limits.ts';
import { createTraceQueue } from './trace-queue.ts';
import { openTraceTable } from './trace-table.ts';
import type { TraceQuery, TraceRecord } from './trace-types.ts';

export type { TraceOutcome, TraceQuery, TraceRecord } from './trace-types.ts';

type NewTraceRecord = Omit<TraceRecord, 'id'>;

interface TracePage {
  records: TraceRecord[];
  /** Pass as `before` for the next page; null on the last page. */
  nextBefore: number | null;
}

export interface TraceStore {
  record(r: NewTraceRecord): TraceRecord;
  page(q: TraceQuery): TracePage;
  /** Calls `listener` with every new record; returns the unsubscribe function. */
  subscribe(listener: (r: TraceRecord) => void): () => void;
  /** Commits the pending records now (at shutdown). */
  flush(): void;
  /** Deletes the rows past the row and age caps now (it also runs by itself as rows are added). */
  prune(): void;
  /** Rows stored (pending ones included). */
  count(): number;
}

export interface TraceStoreOptions {
  /** Rows kept; the oldest are deleted first (default LIMITS.traceMaxRows). */
  maxRows?: number;
  /** Rows older than this are deleted, in ms (default LIMITS.traceMaxAgeHours). */
  maxAgeMs?: number;
  now?: () => number;
}

/** Longest capability id a record keeps; a longer one is cut and marked with `…`. */
export const TRACE_CAPABILITY_CHARS = 128;
/** Longest node name or error code a record keeps. */
export const TRACE_NAME_CHARS = 64;

const cut = (text: string, max: number) =>
  text.length <= max ? text : `${text.slice(0, max - 1)}…`;

/**
 * Opens the trace on a database (a file in WAL mode, or `:memory:` in tests). Records get their
 * id at once and reach live subscribers at once; they are committed in groups after the call
 * (lib/fleet/trace-queue.ts), and every read commits what is waiting first, so a page always
 * shows every record made before it.
 */
export function createTraceStore(db: Database, opts: TraceStoreOptions = {}): TraceStore {
  const keep = {
    maxRows: opts.maxRows ?? LIMITS.traceMaxRows,
    maxAgeMs: opts.maxAgeMs ?? LIMITS.traceMaxAgeHours * 3_600_000,
    now: opts.now ?? Date.now,
  };
  const table = openTraceTable(db);
  let lastId = table.lastId();
  const queue = createTraceQueue(table, keep);
  queue.prune();
  const listeners = new Set<(r: TraceRecord) => void>();
  return {
    record(r) {
      const rec: TraceRecord = {
        ...r,
        id: ++lastId,
        from: cut(r.from, TRACE_NAME_CHARS),
        to: cut(r.to, TRACE_NAME_CHARS),
        capability: cut(r.capability, TRACE_CAPABILITY_CHARS),
        errorCode: r.errorCode === null ? null : cut(r.errorCode, TRACE_NAME_CHARS),
      };
      queue.add(rec);
      for (const l of listeners) l(rec);
      return rec;
    },
    page(q) {
      queue.flush();
      const limit = Math.min(500, Math.max(1, Math.trunc(q.limit ?? 50)));
      const rows = table.page(q, limit + 1);
      const records = rows.slice(0, limit);
      return { records, nextBefore: rows.length > limit ? records[records.length - 1]!.id : null };
    },
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    flush: queue.flush,
    prune: queue.prune,
    count() {
      queue.flush();
      return table.count();
    },
  };
}
