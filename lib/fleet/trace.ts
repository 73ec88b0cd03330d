/**
 * @module lib/fleet/trace — the call trace: one record per cross-node call the hub makes (time, from, to,
 * capability, duration, outcome, error code, bytes, and the W3C trace, span and parent span ids that
 * link a call to the call that caused it), kept in SQLite through `bun:sqlite`, paged newest
 * first, and pushed live to subscribers. Bounded: names and codes are cut to a fixed length
 * before they are stored, and rows past the row cap or older than the age cap are deleted.
 */

import type { Database } from 'bun:sqlite';
import { LIMITS } from '../limits.ts';

export type TraceOutcome = 'ok' | 'failed' | 'empty';

export interface TraceRecord {
  id: number;
  /** ISO 8601 time the call started. */
  ts: string;
  from: string;
  to: string;
  capability: string;
  durationMs: number;
  outcome: TraceOutcome;
  errorCode: string | null;
  /** Size of the answer in bytes as the node sent it (of the result, for a call answered in process); 0 for a failure. */
  bytes: number;
  /** W3C trace id (32 hex digits): every call one request caused shares it. */
  traceId: string;
  /** This call's span id (16 hex digits), sent on as `traceparent`. */
  spanId: string;
  /** The span the call was made under (another record's `spanId`, or the caller's), or null. */
  parentSpanId: string | null;
}

type NewTraceRecord = Omit<TraceRecord, 'id'>;

export interface TraceQuery {
  /** 1..500, default 50. */
  limit?: number;
  /** Only records with a smaller id (the cursor of the previous page). */
  before?: number;
  from?: string;
  to?: string;
  capability?: string;
  outcome?: TraceOutcome;
  /** Only the records of one W3C trace. */
  traceId?: string;
}

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

const SCHEMA = `
CREATE TABLE IF NOT EXISTS trace (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  ts TEXT NOT NULL,
  caller TEXT NOT NULL,
  target TEXT NOT NULL,
  capability TEXT NOT NULL,
  duration_ms REAL NOT NULL,
  outcome TEXT NOT NULL CHECK (outcome IN ('ok', 'failed', 'empty')),
  error_code TEXT,
  bytes INTEGER NOT NULL,
  trace_id TEXT NOT NULL DEFAULT '',
  span_id TEXT NOT NULL DEFAULT '',
  parent_span_id TEXT
);
CREATE INDEX IF NOT EXISTS trace_target ON trace (target, id);
`;

/** Columns added after the first release: a trace file from before gets them (empty ids) on open. */
const ADDED_COLUMNS: Record<string, string> = {
  trace_id: "ALTER TABLE trace ADD COLUMN trace_id TEXT NOT NULL DEFAULT ''",
  span_id: "ALTER TABLE trace ADD COLUMN span_id TEXT NOT NULL DEFAULT ''",
  parent_span_id: 'ALTER TABLE trace ADD COLUMN parent_span_id TEXT',
};

interface Row {
  id: number;
  ts: string;
  caller: string;
  target: string;
  capability: string;
  duration_ms: number;
  outcome: TraceOutcome;
  error_code: string | null;
  bytes: number;
  trace_id: string;
  span_id: string;
  parent_span_id: string | null;
}

const fromRow = (r: Row): TraceRecord => ({
  id: r.id,
  ts: r.ts,
  from: r.caller,
  to: r.target,
  capability: r.capability,
  durationMs: r.duration_ms,
  outcome: r.outcome,
  errorCode: r.error_code,
  bytes: r.bytes,
  traceId: r.trace_id,
  spanId: r.span_id,
  parentSpanId: r.parent_span_id,
});

/** Rows wait at most this long (or until this many are pending) before they are committed together. */
const FLUSH_MS = 20;
const FLUSH_ROWS = 512;
/** Rows one INSERT statement writes when that many are pending (12 parameters each). */
const INSERT_ROWS = 16;
type TraceParam = string | number | null;
/** Retention runs after this many new rows or this much time, whichever comes first. */
const PRUNE_EVERY_ROWS = 1_000;
const PRUNE_EVERY_MS = 60_000;

/**
 * Opens the trace on a database (a file in WAL mode, or `:memory:` in tests). Records get their
 * id at once and reach live subscribers at once; rows are committed in groups, and every read
 * commits what is pending first, so a page always shows every record made before it.
 */
export function createTraceStore(db: Database, opts: TraceStoreOptions = {}): TraceStore {
  const maxRows = opts.maxRows ?? LIMITS.traceMaxRows;
  const maxAgeMs = opts.maxAgeMs ?? LIMITS.traceMaxAgeHours * 3_600_000;
  const now = opts.now ?? Date.now;
  db.exec('PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;');
  db.exec(SCHEMA);
  const columns = new Set(
    db
      .query<{ name: string }, []>('PRAGMA table_info(trace)')
      .all()
      .map((c) => c.name),
  );
  for (const [column, sql] of Object.entries(ADDED_COLUMNS)) if (!columns.has(column)) db.exec(sql);
  // No index on trace_id: trace ids are random, so each row would land on a random page of such an
  // index and every commit would rewrite hundreds of them (about 20 µs of CPU and 60 µs of blocked
  // event loop per call at 100,000 rows). A trace is looked up by scanning newest first, as the
  // other filters but `to` are. A file from before loses the index on open.
  db.exec('DROP INDEX IF EXISTS trace_trace_id');
  const COLUMNS =
    'id, ts, caller, target, capability, duration_ms, outcome, error_code, bytes, trace_id, span_id, parent_span_id';
  const ROW = '(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)';
  const insertOne = db.query<Row, TraceParam[]>(`INSERT INTO trace (${COLUMNS}) VALUES ${ROW}`);
  // Rows go in INSERT_ROWS to a statement: one statement run costs about as much as the row it
  // writes, so a group of rows halves the time a pending row takes to store.
  const insertMany = db.query<Row, TraceParam[]>(
    `INSERT INTO trace (${COLUMNS}) VALUES ${Array(INSERT_ROWS).fill(ROW).join(', ')}`,
  );
  let lastId = db
    .query<{ id: number }, []>('SELECT COALESCE(MAX(id), 0) AS id FROM trace')
    .get()!.id;
  const listeners = new Set<(r: TraceRecord) => void>();
  let pending: TraceRecord[] = [];
  let timer: ReturnType<typeof setTimeout> | null = null;
  /** Adds `r`'s columns, in COLUMNS order, to `params` (positional parameters). */
  const paramsOf = (r: TraceRecord, params: TraceParam[]) => {
    params.push(
      r.id,
      r.ts,
      r.from,
      r.to,
      r.capability,
      r.durationMs,
      r.outcome,
      r.errorCode,
      r.bytes,
      r.traceId,
      r.spanId,
      r.parentSpanId,
    );
    return params;
  };
  const writeAll = db.transaction((rows: TraceRecord[]) => {
    let i = 0;
    for (; i + INSERT_ROWS <= rows.length; i += INSERT_ROWS) {
      const params: TraceParam[] = [];
      for (let j = i; j < i + INSERT_ROWS; j++) paramsOf(rows[j]!, params);
      insertMany.run(...params);
    }
    for (; i < rows.length; i++) insertOne.run(...paramsOf(rows[i]!, []));
  });
  // Rows are appended in time order, so the age cut is an id: the first row young enough, found by
  // walking ids from the oldest (as many rows as are dropped, no index on ts to keep up per insert).
  // A call recorded late (long-running) may sit a few seconds out of order; for a retention of days
  // that is noise. No young row at all drops everything.
  const dropOlder = db.query<unknown, [string]>(
    'DELETE FROM trace WHERE id < COALESCE((SELECT id FROM trace WHERE ts >= ?1 ORDER BY id LIMIT 1), (SELECT COALESCE(MAX(id), 0) + 1 FROM trace))',
  );
  // Ids are handed out one by one here, so the newest `maxRows` are the ids above max - maxRows.
  const dropBeyond = db.query<unknown, [number]>(
    'DELETE FROM trace WHERE id <= (SELECT MAX(id) FROM trace) - ?',
  );
  let sincePrune = 0;
  let prunedAt = 0;
  const prune = () => {
    sincePrune = 0;
    prunedAt = now();
    dropOlder.run(new Date(now() - maxAgeMs).toISOString());
    dropBeyond.run(maxRows);
  };
  const flush = () => {
    if (timer) clearTimeout(timer);
    timer = null;
    if (!pending.length) return;
    const rows = pending;
    pending = [];
    writeAll(rows);
    sincePrune += rows.length;
    if (sincePrune >= Math.min(PRUNE_EVERY_ROWS, maxRows) || now() - prunedAt >= PRUNE_EVERY_MS)
      prune();
  };
  prune();

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
      pending.push(rec);
      if (pending.length >= FLUSH_ROWS) flush();
      else timer ??= setTimeout(flush, FLUSH_MS);
      for (const l of listeners) l(rec);
      return rec;
    },
    page(q) {
      flush();
      const limit = Math.min(500, Math.max(1, Math.trunc(q.limit ?? 50)));
      const where: string[] = [];
      const params: (string | number)[] = [];
      if (q.before !== undefined) where.push('id < ?'), params.push(q.before);
      if (q.from !== undefined) where.push('caller = ?'), params.push(q.from);
      if (q.to !== undefined) where.push('target = ?'), params.push(q.to);
      if (q.capability !== undefined) where.push('capability = ?'), params.push(q.capability);
      if (q.outcome !== undefined) where.push('outcome = ?'), params.push(q.outcome);
      if (q.traceId !== undefined) where.push('trace_id = ?'), params.push(q.traceId);
      const sql = `SELECT * FROM trace ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY id DESC LIMIT ${limit + 1}`;
      const rows = db.query<Row, (string | number)[]>(sql).all(...params);
      const more = rows.length > limit;
      const records = rows.slice(0, limit).map(fromRow);
      return { records, nextBefore: more ? records[records.length - 1]!.id : null };
    },
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    flush,
    prune() {
      flush();
      prune();
    },
    count() {
      flush();
      return db.query<{ n: number }, []>('SELECT COUNT(*) AS n FROM trace').get()!.n;
    },
  };
}
