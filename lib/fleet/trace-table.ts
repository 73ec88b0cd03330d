/**
 * @module lib/fleet/trace-table — the call trace's SQLite table (lib/fleet/trace.ts): its schema
 * and the columns added since the first release, the grouped insert, retention by rows and age,
 * and the page and count queries.
 */

import type { Database } from 'bun:sqlite';
import type { TraceOutcome, TraceQuery, TraceRecord } from './trace-types.ts';

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
  tenant: 'ALTER TABLE trace ADD COLUMN tenant TEXT',
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
  tenant: string | null;
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
  ...(r.tenant !== null ? { tenant: r.tenant } : {}),
});

/** Rows one INSERT statement writes when that many are waiting (13 parameters each). */
const INSERT_ROWS = 16;
type Param = string | number | null;
const COLUMNS =
  'id, ts, caller, target, capability, duration_ms, outcome, error_code, bytes, trace_id, span_id, parent_span_id, tenant';
const ROW = '(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)';

/** Adds `r`'s columns, in COLUMNS order, to `params` (positional parameters). */
function paramsOf(r: TraceRecord, params: Param[]): Param[] {
  params.push(r.id, r.ts, r.from, r.to, r.capability, r.durationMs, r.outcome, r.errorCode);
  params.push(r.bytes, r.traceId, r.spanId, r.parentSpanId, r.tenant ?? null);
  return params;
}

export interface TraceTable {
  /** The largest id stored (0 for none). */
  lastId(): number;
  /** Stores `rows` in one transaction. */
  write(rows: readonly TraceRecord[]): void;
  /** Deletes rows older than `maxAgeMs` before `nowMs`, then all but the newest `maxRows`. */
  prune(nowMs: number, maxAgeMs: number, maxRows: number): void;
  /** Up to `limit` records matching `q`, newest first. */
  page(q: TraceQuery, limit: number): TraceRecord[];
  /** Rows stored. */
  count(): number;
}

/** Opens the trace table on `db` in WAL mode, the schema made or brought up to date. */
export function openTraceTable(db: Database): TraceTable {
  db.exec('PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;');
  migrateTable(db);
  const insert = (n: number) =>
    db.query<Row, Param[]>(
      `INSERT INTO trace (${COLUMNS}) VALUES ${Array(n).fill(ROW).join(', ')}`,
    );
  const insertOne = insert(1);
  // Rows go in INSERT_ROWS to a statement: one statement run costs about as much as the row it
  // writes, so a group of rows halves the time a row takes to store.
  const insertMany = insert(INSERT_ROWS);
  const write = db.transaction((rows: readonly TraceRecord[]) => {
    let i = 0;
    for (; i + INSERT_ROWS <= rows.length; i += INSERT_ROWS) {
      const params: Param[] = [];
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
  // Ids are handed out one by one, so the newest `maxRows` are the ids above max - maxRows.
  const dropBeyond = db.query<unknown, [number]>(
    'DELETE FROM trace WHERE id <= (SELECT MAX(id) FROM trace) - ?',
  );
  return {
    lastId: () =>
      db.query<{ id: number }, []>('SELECT COALESCE(MAX(id), 0) AS id FROM trace').get()!.id,
    write: (rows) => write(rows),
    prune(nowMs, maxAgeMs, maxRows) {
      dropOlder.run(new Date(nowMs - maxAgeMs).toISOString());
      dropBeyond.run(maxRows);
    },
    page: (q, limit) => pageOf(db, q, limit),
    count: () => db.query<{ n: number }, []>('SELECT COUNT(*) AS n FROM trace').get()!.n,
  };
}

function migrateTable(db: Database): void {
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
}

function pageOf(db: Database, q: TraceQuery, limit: number): TraceRecord[] {
  const where: string[] = [];
  const params: (string | number)[] = [];
  if (q.before !== undefined) where.push('id < ?'), params.push(q.before);
  if (q.from !== undefined) where.push('caller = ?'), params.push(q.from);
  if (q.to !== undefined) where.push('target = ?'), params.push(q.to);
  if (q.capability !== undefined) where.push('capability = ?'), params.push(q.capability);
  if (q.outcome !== undefined) where.push('outcome = ?'), params.push(q.outcome);
  if (q.traceId !== undefined) where.push('trace_id = ?'), params.push(q.traceId);
  if (q.tenants !== undefined)
    where.push(`tenant IN (${q.tenants.map(() => '?').join(', ') || 'NULL'})`),
      params.push(...q.tenants);
  const sql = `SELECT * FROM trace ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY id DESC LIMIT ${limit}`;
  return db
    .query<Row, (string | number)[]>(sql)
    .all(...params)
    .map(fromRow);
}
