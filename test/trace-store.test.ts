/**
 * The trace store keeps no index on trace ids (random keys made every commit rewrite pages all over
 * such an index): a file that has one loses it on open, and one trace is still listed, newest
 * first and page by page, among other traces' records.
 */

import { expect, setDefaultTimeout, test } from 'bun:test';
import { Database } from 'bun:sqlite';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { createTraceStore } from '../lib/fleet/trace.ts';
import { newSpanId, newTraceId } from '../lib/telemetry/trace-context.ts';
import { tempDir } from './support/node.ts';

setDefaultTimeout(20_000); // per file (Bun scopes it so): real servers and processes are slow on a busy machine

test('a trace file with the old trace-id index loses it on open and still lists one trace by its id', () => {
  const dir = tempDir('lume-a2a-trace-store-');
  const file = join(dir, 'trace.sqlite');
  // A file written before: the store's table, plus the index this version no longer keeps.
  const before = new Database(file, { create: true, strict: true });
  createTraceStore(before);
  before.exec('CREATE INDEX trace_trace_id ON trace (trace_id, id)');
  before.close();

  const db = new Database(file, { strict: true });
  const trace = createTraceStore(db);
  const indexes = db
    .query<{ name: string }, []>(
      "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'trace'",
    )
    .all()
    .map((r) => r.name);
  expect(indexes).not.toContain('trace_trace_id');

  const wanted = newTraceId();
  const row = (traceId: string, capability: string, parentSpanId: string | null) =>
    trace.record({
      ts: new Date().toISOString(),
      from: 'a2a',
      to: 'x',
      capability,
      durationMs: 1,
      outcome: 'ok',
      errorCode: null,
      bytes: 2,
      traceId,
      spanId: newSpanId(),
      parentSpanId,
    });
  const root = row(wanted, 'x.first', null);
  for (let i = 0; i < 200; i++) row(newTraceId(), 'x.other', null);
  const child = row(wanted, 'x.second', root.spanId);
  for (let i = 0; i < 200; i++) row(newTraceId(), 'x.other', null);
  const last = row(wanted, 'x.third', child.spanId);

  const first = trace.page({ traceId: wanted, limit: 2 });
  expect(first.records.map((r) => [r.id, r.capability, r.parentSpanId])).toEqual([
    [last.id, 'x.third', child.spanId],
    [child.id, 'x.second', root.spanId],
  ]);
  const second = trace.page({ traceId: wanted, limit: 2, before: first.nextBefore! });
  expect(second.records.map((r) => [r.id, r.capability, r.parentSpanId])).toEqual([
    [root.id, 'x.first', null],
  ]);
  expect(second.nextBefore).toBeNull();
  db.close();
  rmSync(dir, { recursive: true, force: true });
});
