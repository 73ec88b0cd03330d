/**
 * The trace's append-only log: records reach it in groups and SQLite in batches; a hub that stops
 * before a batch finds its logged records in the table on the next start, a torn or damaged last
 * write is cut, a record is never stored twice, and a read sees every record made before it.
 */

import { afterEach, expect, setDefaultTimeout, test } from 'bun:test';
import { Database } from 'bun:sqlite';
import { copyFileSync, readFileSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createTraceStore, type TraceStore } from '../lib/fleet/trace.ts';
import { TRACE_QUEUE_ROWS, TRACE_WAITING_ROWS } from '../lib/fleet/trace-queue.ts';
import { newSpanId, newTraceId } from '../lib/telemetry/trace-context.ts';
import { tempDir } from './support/node.ts';

setDefaultTimeout(20_000); // per file (Bun scopes it so): real servers and processes are slow on a busy machine

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function fresh() {
  const dir = tempDir('lume-a2a-trace-log-');
  dirs.push(dir);
  return { file: join(dir, 'trace.sqlite'), log: join(dir, 'trace.sqlite.log') };
}

const open = (file: string) => {
  const db = new Database(file, { create: true, strict: true });
  return { db, trace: createTraceStore(db) };
};

function record(trace: TraceStore, i: number) {
  return trace.record({
    ts: new Date().toISOString(),
    from: 'a2a',
    to: 'scanner',
    capability: `scanner.c${i}`,
    durationMs: 1.25,
    outcome: i % 3 === 0 ? 'failed' : 'ok',
    errorCode: i % 3 === 0 ? 'PEER_TIMEOUT' : null,
    bytes: i,
    traceId: newTraceId(),
    spanId: newSpanId(),
    parentSpanId: i % 2 ? newSpanId() : null,
  });
}

/** Rows in the file as another connection sees them (no read through the store, which would move what waits). */
const rowsInFile = (file: string) => {
  const db = new Database(file, { readonly: true });
  try {
    return db.query<{ n: number }, []>('SELECT COUNT(*) AS n FROM trace').get()!.n;
  } finally {
    db.close();
  }
};

test('a full group goes to the log, not the table; a store that stops before its batch has it back on open', () => {
  const { file, log } = fresh();
  const a = open(file);
  const made = Array.from({ length: TRACE_QUEUE_ROWS }, (_, i) => record(a.trace, i));
  expect(statSync(log).size).toBeGreaterThan(0);
  expect(rowsInFile(file)).toBe(0);
  // The process dies here: no flush, no close of the store.
  a.db.close();

  const b = open(file);
  expect(b.trace.count()).toBe(TRACE_QUEUE_ROWS);
  expect(statSync(log).size).toBe(0);
  const page = b.trace.page({ limit: 3 });
  expect(page.records).toEqual(made.slice(-3).reverse());
  // Ids go on after the replayed ones.
  expect(record(b.trace, 9999).id).toBe(made.at(-1)!.id + 1);
  b.trace.close();
  b.db.close();
});

test('a torn last write and a damaged frame are cut on open; the whole frames before them are kept', () => {
  const { file, log } = fresh();
  const a = open(file);
  for (let i = 0; i < TRACE_QUEUE_ROWS; i++) record(a.trace, i);
  const oneFrame = statSync(log).size;
  for (let i = 0; i < TRACE_QUEUE_ROWS; i++) record(a.trace, i);
  a.db.close();
  const saved = readFileSync(log);
  expect(saved.byteLength).toBeGreaterThan(oneFrame);

  // The second frame's write was cut short by a crash.
  truncateSync(log, saved.byteLength - 17);
  const b = open(file);
  expect(b.trace.count()).toBe(TRACE_QUEUE_ROWS);
  b.trace.close();
  b.db.close();

  // A frame whose bytes changed fails its checksum: it and what follows are cut.
  const c0 = fresh();
  const c = open(c0.file);
  for (let i = 0; i < 2 * TRACE_QUEUE_ROWS; i++) record(c.trace, i);
  c.db.close();
  const bytes = readFileSync(c0.log);
  bytes[oneFrame + 40] = bytes[oneFrame + 40]! ^ 0x20;
  writeFileSync(c0.log, bytes);
  const d = open(c0.file);
  expect(d.trace.count()).toBe(TRACE_QUEUE_ROWS);
  expect(statSync(c0.log).size).toBe(0);
  d.trace.close();
  d.db.close();

  // Junk that is not a frame at all leaves an empty trace, and the log usable.
  const e0 = fresh();
  writeFileSync(e0.log, 'not a frame of the trace log');
  const e = open(e0.file);
  expect(e.trace.count()).toBe(0);
  record(e.trace, 1);
  expect(e.trace.page({}).records).toHaveLength(1);
  e.trace.close();
  e.db.close();
});

test('a log whose records are already in the table (stopped between the batch and emptying the log) stores none twice', () => {
  const { file, log } = fresh();
  const a = open(file);
  for (let i = 0; i < TRACE_QUEUE_ROWS; i++) record(a.trace, i);
  copyFileSync(log, `${log}.before`);
  expect(a.trace.count()).toBe(TRACE_QUEUE_ROWS); // the read moves them into the table
  expect(statSync(log).size).toBe(0);
  a.trace.close();
  a.db.close();
  copyFileSync(`${log}.before`, log);

  const b = open(file);
  expect(b.trace.count()).toBe(TRACE_QUEUE_ROWS);
  const ids = b.trace.page({ limit: 500 }).records.map((r) => r.id);
  expect(new Set(ids).size).toBe(ids.length);
  b.trace.close();
  b.db.close();
});

test('a read right after a call sees its record; rows waiting are bounded and moved into the table at the bound', () => {
  const { file, log } = fresh();
  const a = open(file);
  const one = record(a.trace, 1);
  expect(rowsInFile(file)).toBe(0);
  expect(a.trace.page({ limit: 1 }).records).toEqual([one]);
  expect(rowsInFile(file)).toBe(1);

  for (let i = 0; i < TRACE_WAITING_ROWS - 1; i++) record(a.trace, i);
  expect(rowsInFile(file)).toBe(1);
  record(a.trace, 0);
  // The bound moved every waiting record into the table, and the log started over.
  expect(rowsInFile(file)).toBe(TRACE_WAITING_ROWS + 1);
  expect(statSync(log).size).toBe(0);
  a.trace.close();
  a.db.close();
});

test('a database in memory keeps no log; its records still reach every read', () => {
  const db = new Database(':memory:', { strict: true });
  const trace = createTraceStore(db);
  const made = Array.from({ length: TRACE_QUEUE_ROWS + 3 }, (_, i) => record(trace, i));
  expect(trace.count()).toBe(made.length);
  expect(trace.page({ limit: 1 }).records).toEqual([made.at(-1)!]);
  trace.close();
  db.close();
});
