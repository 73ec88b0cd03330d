/**
 * The shared store's schema migration to schema 2 (lib/a2a/store/postgres/schema.ts), on the
 * throw-away PostgreSQL cluster: a database an earlier version made, with its
 * `lume_a2a_task_events` rows, loses that table at the first start of this version (nothing
 * reads it: the task's event log lives in its row), its tasks read and change as before, and two
 * processes stream each other's changes from the row alone. While a live process of the earlier
 * schema (which still writes the table) is left, the table stays; once it is gone, the next
 * heartbeat drops it.
 */

import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { SQL } from 'bun';
import { PostgresTaskStore } from '../lib/a2a/store/postgres-store.ts';
import type { RemoteChange } from '../lib/a2a/store/task-store.ts';
import { silentLog } from '../lib/log.ts';
import { churnRecord } from './support/log-churn.ts';
import { type FilePostgres, sharedPostgres } from './support/postgres.ts';
import { waitFor } from './support/processes.ts';

setDefaultTimeout(30_000); // per file (Bun scopes it so): a cluster on a busy machine

let pg: FilePostgres;
let n = 0;
beforeAll(async () => {
  pg = await sharedPostgres();
});
afterAll(async () => {
  await pg?.release();
});

/** The tables as schema 1 made them (its `migrate`), and one task with events in the old table. */
async function schemaOne(url: string, id: string, task: string): Promise<void> {
  const sql = new SQL(url, { max: 1 });
  try {
    await sql.unsafe(`
      CREATE TABLE lume_a2a_tasks (node text NOT NULL, id uuid NOT NULL, context_id text NOT NULL,
        state text NOT NULL, ts bigint NOT NULL, version bigint NOT NULL, task text NOT NULL,
        push text NOT NULL DEFAULT '[]', writer text, owner text, lease_until timestamptz,
        watched_until timestamptz, creator text, events text, PRIMARY KEY (node, id));
      CREATE TABLE lume_a2a_processes (process text PRIMARY KEY, node text NOT NULL,
        alive_until timestamptz NOT NULL);
      CREATE TABLE lume_a2a_task_events (node text NOT NULL, id uuid NOT NULL,
        version bigint NOT NULL, events text NOT NULL, PRIMARY KEY (node, id, version));`);
    await sql`INSERT INTO lume_a2a_tasks (node, id, context_id, state, ts, version, task)
      VALUES ('n', ${id}, 'ctx', 'completed', 1000, 3, ${task})`;
    await sql`INSERT INTO lume_a2a_task_events (node, id, version, events) VALUES ('n', ${id}, 3, '[]')`;
  } finally {
    await sql.close();
  }
}

async function hasEventsTable(url: string): Promise<boolean> {
  const sql = new SQL(url, { max: 1 });
  try {
    const [row] = await sql`SELECT to_regclass('lume_a2a_task_events') IS NOT NULL AS there`;
    return row.there as boolean;
  } finally {
    await sql.close();
  }
}

describe('a database of schema 1', () => {
  test('loses lume_a2a_task_events at the first start; its tasks read and change, streams cross processes', async () => {
    const url = await pg.createDatabase(`schema_${++n}`);
    const old = churnRecord('completed', 1000, 'stored by schema 1');
    await schemaOne(url, old.task.id, JSON.stringify(old.task));
    expect(await hasEventsTable(url)).toBe(true);
    const one = new PostgresTaskStore({ url, node: 'n', log: silentLog });
    const two = new PostgresTaskStore({ url, node: 'n', log: silentLog });
    await Promise.all([one.open(), two.open()]);
    try {
      expect(await hasEventsTable(url)).toBe(false);
      const read = await one.get(old.task.id);
      expect([read?.task.history[0]!.parts, read?.version]).toEqual([
        [{ text: 'stored by schema 1' }],
        3,
      ]);
      // A change on one process reaches the other's watcher with the event log it wrote.
      const rec = churnRecord('working', 2000, 'new');
      const id = rec.task.id;
      await one.save(rec);
      const seen = new Promise<RemoteChange>((resolve) =>
        two.onChange((cid, c) => cid === id && c.task && resolve(c)),
      );
      await two.watch(id);
      await one.update(id, (r) => {
        r.task.status = { state: 'completed', timestamp: new Date(3000).toISOString() };
        const event = {
          kind: 'status' as const,
          taskId: id,
          contextId: r.task.contextId,
          status: r.task.status,
          final: true,
          generation: 2,
        };
        r.events = [...(r.events ?? []), event];
        return [event];
      });
      const change = await seen;
      expect([change.task?.status.state, change.log?.at(-1)?.generation]).toEqual(['completed', 2]);
      const sql = new SQL(url, { max: 1 });
      const procs = await sql`SELECT schema FROM lume_a2a_processes ORDER BY schema`;
      await sql.close();
      expect(procs.map((p: { schema: number }) => p.schema)).toEqual([2, 2]);
    } finally {
      await Promise.all([one.close(), two.close()]);
    }
  });

  test('keeps the table while a live process of schema 1 writes it; the next heartbeat after it is gone drops it', async () => {
    const url = await pg.createDatabase(`schema_${++n}`);
    const old = churnRecord('completed', 1000, 'stored by schema 1');
    await schemaOne(url, old.task.id, JSON.stringify(old.task));
    const sql = new SQL(url, { max: 1 });
    try {
      await sql`INSERT INTO lume_a2a_processes (process, node, alive_until)
        VALUES ('older', 'n', now() + interval '1 hour')`;
      const store = new PostgresTaskStore({ url, node: 'n', log: silentLog, leaseMs: 300 });
      await store.open();
      try {
        expect(await hasEventsTable(url)).toBe(true);
        expect((await store.get(old.task.id))?.version).toBe(3);
        // The older process stops (its heartbeat runs out).
        await sql`UPDATE lume_a2a_processes SET alive_until = now() - interval '1 second' WHERE process = 'older'`;
        await waitFor('the table dropped', async () => !(await hasEventsTable(url)));
      } finally {
        await store.close();
      }
    } finally {
      await sql.close();
    }
  });
});
