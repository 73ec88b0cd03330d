/**
 * @module lib/fleet/trace-queue — the call trace's records on their way into the table
 * (lib/fleet/trace-table.ts): appended to the trace log (lib/fleet/trace-log.ts) in groups of at
 * most 20 ms or 512 records, one `write` each, and moved into SQLite in large batches (every
 * second, or once 8,192 wait, or at once when something reads the trace), so the call's path
 * pays an append instead of a b-tree insert and a WAL commit. Retention runs after the batches
 * that bring it due. Nothing is dropped: the rows waiting are bounded, and a read moves them first.
 */

import type { TraceLog } from './trace-log.ts';
import type { TraceTable } from './trace-table.ts';
import type { TraceRecord } from './trace-types.ts';

/** Records wait at most this long (or until this many wait) before their group is appended to the log. */
const GROUP_MS = 20;
export const TRACE_QUEUE_ROWS = 512;
/** Records wait at most this long (or until this many wait) before they are moved into SQLite. */
const INGEST_MS = 1_000;
export const TRACE_WAITING_ROWS = 8_192;
/** Retention runs after this many new rows or this much time, whichever comes first. */
const PRUNE_EVERY_ROWS = 1_000;
const PRUNE_EVERY_MS = 60_000;

export interface TraceQueue {
  add(r: TraceRecord): void;
  /** Moves every waiting record into the table now (and empties the log), and runs retention if it is due. */
  flush(): void;
  /** Runs retention now, after a flush. */
  prune(): void;
  /** Records not yet in the table. */
  readonly waiting: number;
}

export interface Retention {
  maxRows: number;
  maxAgeMs: number;
  now: () => number;
}

/** `log` is where groups are appended; without one (a database in memory) records wait in memory only. */
export function createTraceQueue(table: TraceTable, keep: Retention, log?: TraceLog): TraceQueue {
  /** Records not in the table yet, oldest first; the first `logged` of them are in the log. */
  let rows: TraceRecord[] = [];
  let logged = 0;
  let groupTimer: ReturnType<typeof setTimeout> | null = null;
  let ingestTimer: ReturnType<typeof setTimeout> | null = null;
  let sincePrune = 0;
  let prunedAt = 0;
  const prune = () => {
    sincePrune = 0;
    prunedAt = keep.now();
    table.prune(prunedAt, keep.maxAgeMs, keep.maxRows);
  };
  const ingest = () => {
    if (groupTimer) clearTimeout(groupTimer);
    if (ingestTimer) clearTimeout(ingestTimer);
    groupTimer = ingestTimer = null;
    if (!rows.length) return;
    const all = rows;
    table.write(all);
    rows = [];
    logged = 0;
    // Every record the log holds is in the table now: the log starts over.
    log?.reset();
    sincePrune += all.length;
    const due = sincePrune >= Math.min(PRUNE_EVERY_ROWS, keep.maxRows);
    if (due || keep.now() - prunedAt >= PRUNE_EVERY_MS) prune();
  };
  const append = () => {
    if (groupTimer) clearTimeout(groupTimer);
    groupTimer = null;
    if (!log || logged === rows.length) return;
    try {
      log.append(logged === 0 ? rows : rows.slice(logged));
      logged = rows.length;
    } catch {
      // The log could not be written (a full disk): the records go straight into the table instead.
      ingest();
    }
  };
  // A timer's step that fails (the database closed at shutdown) leaves the rows waiting, in the log.
  const ingestLater = () => {
    try {
      ingest();
    } catch {}
  };
  const appendLater = () => {
    try {
      append();
    } catch {}
  };
  return {
    add(r) {
      rows.push(r);
      if (rows.length >= TRACE_WAITING_ROWS) return ingest();
      if (rows.length - logged >= TRACE_QUEUE_ROWS) append();
      else if (log) groupTimer ??= setTimeout(appendLater, GROUP_MS);
      if (!ingestTimer) {
        // It does not keep the process alive: what waits is in the log, replayed on the next start.
        ingestTimer = setTimeout(ingestLater, INGEST_MS);
        ingestTimer.unref?.();
      }
    },
    flush: ingest,
    prune() {
      ingest();
      prune();
    },
    get waiting() {
      return rows.length;
    },
  };
}
