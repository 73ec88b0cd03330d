/**
 * @module test/task-store-postgres-inserts — the PostgreSQL store writes the new tasks saved in
 * one event-loop turn with one multi-row INSERT per 64 (lib/a2a/store/postgres/insert-batch.ts):
 * rows of one statement share its transaction (`xmin`), each save resolves only once its row is
 * committed, and every row holds its own task, push configs, creator and event log.
 */

import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import { SQL } from 'bun';
import { PostgresTaskStore } from '../lib/a2a/store/postgres-store.ts';
import type { TaskRecord } from '../lib/a2a/store/task-store.ts';
import { silentLog } from '../lib/log.ts';
import { type FilePostgres, sharedPostgres } from './support/postgres.ts';

setDefaultTimeout(30_000); // a throw-away cluster on a busy machine

let pg: FilePostgres;
beforeAll(async () => {
  pg = await sharedPostgres();
}, 60_000);
afterAll(async () => {
  await pg.release();
});

function newTask(i: number): TaskRecord {
  const id = crypto.randomUUID();
  const contextId = `ctx-${i}`;
  const status = { state: 'input-required' as const, timestamp: new Date(1000 + i).toISOString() };
  return {
    task: { id, contextId, status, artifacts: [], history: [], generation: 1 },
    push:
      i % 2 ? [{ id: `p${i}`, taskId: id, url: `https://example.test/${i}`, version: '1.0' }] : [],
    ...(i % 3 ? { creator: `owner-${i % 3}` } : {}),
    events: [{ kind: 'status', taskId: id, contextId, status, final: true, generation: 1 }],
  };
}

test('new tasks saved in one turn: one INSERT per 64, each save answered after its row is committed', async () => {
  const url = await pg.createDatabase('inserts');
  const store = new PostgresTaskStore({ url, node: 'n', log: silentLog });
  await store.open();
  const reader = new SQL(url);
  try {
    const recs = Array.from({ length: 150 }, (_, i) => newTask(i));
    // Every save in the same turn; each one checks, when it resolves, that its row is there.
    const seen = await Promise.all(
      recs.map((rec) =>
        store
          .save(rec)
          .then(
            async () =>
              (await reader`SELECT 1 FROM lume_a2a_tasks WHERE id = ${rec.task.id}`).length,
          ),
      ),
    );
    expect(seen).toEqual(recs.map(() => 1));
    expect(recs.every((r) => r.version === 1)).toBe(true);
    // 150 rows in three statements (64, 64, 22), each its own transaction.
    const [row] =
      await reader`SELECT count(*)::int AS n, count(DISTINCT xmin::text)::int AS tx FROM lume_a2a_tasks`;
    expect(row).toEqual({ n: 150, tx: 3 });
    // Read back through a fresh store: each row is its own task.
    const other = new PostgresTaskStore({ url, node: 'n', log: silentLog });
    await other.open();
    try {
      for (const rec of [recs[0]!, recs[65]!, recs[149]!]) {
        const got = await other.get(rec.task.id);
        expect(got?.task).toEqual(rec.task);
        expect(got?.push).toEqual(rec.push);
        expect(got?.creator).toBe(rec.creator);
        expect(got?.events).toEqual(rec.events);
      }
      expect(await other.count()).toBe(150);
    } finally {
      await other.close();
    }
  } finally {
    await reader.close();
    await store.close();
  }
});
