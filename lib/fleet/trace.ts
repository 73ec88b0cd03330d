/**
 * @module lib/fleet/trace — the call trace: one record per cross-node call the hub makes (time, from, to,
 * capability, duration, outcome, error code, bytes, and the W3C trace, span and parent span ids that
 * link a call to the call that caused it), kept in SQLite through `bun:sqlite` (the table in
 * lib/fleet/trace-table.ts), reached through an append-only log beside it (lib/fleet/trace-log.ts,
 * fed and moved into the table by lib/fleet/trace-queue.ts), paged newest first, and pushed live
 * to subscribers. Bounded: names and codes are cut to a fixed length before they are stored, and
 * rows past the row cap or older than the age cap are deleted.
 */

import type { CallSpanDetail } from './record-span.ts';
import type { Database } from 'bun:sqlite';
import { LIMITS } from '../limits.ts';
import { openTraceLog, type TraceLog } from './trace-log.ts';
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
  /** `detail`: what an A2A call adds for its exported span; handed to listeners, never stored. */
  record(r: NewTraceRecord, detail?: CallSpanDetail): TraceRecord;
  page(q: TraceQuery): TracePage;
  /** Calls `listener` with every new record; returns the unsubscribe function. */
  subscribe(listener: (r: TraceRecord, detail?: CallSpanDetail) => void): () => void;
  /** Commits the pending records now (at shutdown). */
  flush(): void;
  /** Deletes the rows past the row and age caps now (it also runs by itself as rows are added). */
  prune(): void;
  /** Rows stored (pending ones included). */
  count(): number;
  /** Moves what waits into the table and closes the log (the database stays open: it is the caller's). */
  close(): void;
}

export interface TraceStoreOptions {
  /** Rows kept; the oldest are deleted first (default LIMITS.traceMaxRows). */
  maxRows?: number;
  /** Rows older than this are deleted, in ms (default LIMITS.traceMaxAgeHours). */
  maxAgeMs?: number;
  now?: () => number;
  /**
   * The append-only log records reach the table through (default: the database's file name plus
   * `.log`; none for a database in memory). `null`: no log, records wait in memory until moved.
   */
  logFile?: string | null;
}

/** The log a database's trace keeps by default: beside its file, none in memory. */
const defaultLogFile = (db: Database): string | null =>
  db.filename && db.filename !== ':memory:' && !db.filename.startsWith('file:')
    ? `${db.filename}.log`
    : null;

/** Longest capability id a record keeps; a longer one is cut and marked with `…`. */
const TRACE_CAPABILITY_CHARS = 128;
/** Longest node name or error code a record keeps. */
const TRACE_NAME_CHARS = 64;

const cut = (text: string, max: number) =>
  text.length <= max ? text : `${text.slice(0, max - 1)}…`;

/**
 * Opens the trace on a database (a file in WAL mode, or `:memory:` in tests). Records get their
 * id at once and reach live subscribers at once; they are appended to the log in groups after
 * the call and moved into the table in batches (lib/fleet/trace-queue.ts), and every read moves
 * what is waiting first, so a page always shows every record made before it. Records the log
 * holds but the table does not (the process stopped between the two) are moved in on open.
 */
export function createTraceStore(db: Database, opts: TraceStoreOptions = {}): TraceStore {
  const keep = {
    maxRows: opts.maxRows ?? LIMITS.traceMaxRows,
    maxAgeMs: opts.maxAgeMs ?? LIMITS.traceMaxAgeHours * 3_600_000,
    now: opts.now ?? Date.now,
  };
  const table = openTraceTable(db);
  const logFile = opts.logFile === undefined ? defaultLogFile(db) : opts.logFile;
  let log: TraceLog | undefined;
  if (logFile) {
    const opened = openTraceLog(logFile);
    log = opened.log;
    // Ids only grow, so what the table lacks is what lies past its last id.
    const stored = table.lastId();
    const missing = opened.records.filter((r) => r.id > stored);
    if (missing.length) table.write(missing);
    log.reset();
  }
  let lastId = table.lastId();
  const queue = createTraceQueue(table, keep, log);
  queue.prune();
  const listeners = new Set<(r: TraceRecord, detail?: CallSpanDetail) => void>();
  return {
    record(r, detail) {
      const rec: TraceRecord = {
        ...r,
        id: ++lastId,
        from: cut(r.from, TRACE_NAME_CHARS),
        to: cut(r.to, TRACE_NAME_CHARS),
        capability: cut(r.capability, TRACE_CAPABILITY_CHARS),
        errorCode: r.errorCode === null ? null : cut(r.errorCode, TRACE_NAME_CHARS),
      };
      queue.add(rec);
      for (const l of listeners) l(rec, detail);
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
    close() {
      queue.flush();
      log?.close();
      log = undefined;
    },
  };
}
