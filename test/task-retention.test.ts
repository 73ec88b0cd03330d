/**
 * A bound on the task disk: retention by count and by age on each task store (the task log and a
 * throw-away PostgreSQL cluster) deletes terminal tasks oldest first and never one in progress;
 * and a real node keeps its task log within TASK_MAX_STORED as tasks keep coming.
 */

import { isA2AError } from '../lib/a2a/errors.ts';
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { TaskRecord, TaskStore } from '../lib/a2a/store/task-store.ts';
import { LogTaskStore } from '../lib/a2a/store/log-store.ts';
import { PostgresTaskStore } from '../lib/a2a/store/postgres-store.ts';
import type { TaskState } from '../lib/a2a/types.ts';
import { silentLog } from '../lib/log.ts';
import { agentNode, rpc, startNode, tempDir } from './support/node.ts';
import { type FilePostgres, sharedPostgres } from './support/postgres.ts';

setDefaultTimeout(20_000); // per file (Bun scopes it so): real servers and processes are slow on a busy machine

const HOUR = 3_600_000;
const T0 = Date.parse('2026-11-01T00:00:00.000Z');

/** A stored task in `state` whose status is `at` ms. */
function record(state: TaskState, at: number, creator = 'token:alice'): TaskRecord {
  const id = crypto.randomUUID();
  return {
    task: {
      id,
      contextId: `ctx-${id.slice(0, 4)}`,
      status: { state, timestamp: new Date(at).toISOString() },
      artifacts: [],
      history: [],
    },
    push: [],
    creator,
  };
}

async function listed(store: TaskStore, creator = 'token:alice'): Promise<string[]> {
  const page = await store.list(
    { pageSize: 100, includeArtifacts: false, historyLength: 0 },
    creator,
  );
  if (isA2AError(page)) throw new Error(page.message);
  return page.tasks.map((t) => t.id);
}

const dirs: string[] = [];
/** A temporary folder removed after the file's tests. */
function _scratch(): string {
  const d = tempDir();
  dirs.push(d);
  return d;
}
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

let pg: FilePostgres;
let databases = 0;
beforeAll(async () => {
  pg = await sharedPostgres();
});
afterAll(async () => {
  await pg?.release();
});

interface Opened {
  store: TaskStore;
  close(): Promise<void>;
}
const backends: {
  name: string;
  open(bounds: { maxStored: number; maxAgeHours: number }): Promise<Opened>;
}[] = [
  {
    name: 'the task log',
    async open(bounds) {
      const root = tempDir();
      const store = LogTaskStore.open({ dir: join(root, 'tasks'), log: silentLog, ...bounds });
      return {
        store,
        async close() {
          await store.close();
          rmSync(root, { recursive: true, force: true });
        },
      };
    },
  },
  {
    name: 'PostgreSQL',
    async open(bounds) {
      const url = await pg.createDatabase(`retention_${++databases}`);
      const store = new PostgresTaskStore({ url, node: 'unit', log: silentLog, ...bounds });
      await store.open();
      return { store, close: () => store.close() };
    },
  },
];

for (const backend of backends)
  describe(`retention on ${backend.name}`, () => {
    test('past the count, the oldest terminal tasks go first; tasks in progress stay', async () => {
      const { store, close } = await backend.open({ maxStored: 5, maxAgeHours: 720 });
      try {
        const now = Date.now();
        // The two oldest are in progress; then eight terminal ones, a minute apart.
        const running = [
          record('working', now - 100 * 60_000),
          record('input-required', now - 99 * 60_000),
        ];
        const states: TaskState[] = ['completed', 'failed', 'canceled', 'rejected'];
        const done = Array.from({ length: 8 }, (_, i) =>
          record(states[i % 4]!, now - (90 - i) * 60_000),
        );
        for (const r of [...running, ...done]) await store.save(r);
        await store.flush();
        await store.retain();
        expect(await store.count()).toBe(5);
        const kept = [...running, ...done.slice(5)].map((r) => r.task.id);
        expect((await listed(store)).sort()).toEqual(kept.sort());
        for (const r of done.slice(0, 5)) expect(await store.get(r.task.id)).toBeUndefined();
        for (const id of kept) expect((await store.get(id))?.task.id).toBe(id);
      } finally {
        await close();
      }
    });

    test('past the age, terminal tasks go; an old task in progress stays', async () => {
      const { store, close } = await backend.open({ maxStored: 1000, maxAgeHours: 24 });
      try {
        const now = Date.now();
        const old = [record('completed', now - 30 * HOUR), record('failed', now - 25 * HOUR)];
        const oldRunning = record('submitted', now - 48 * HOUR);
        const oldWaiting = record('auth-required', now - 48 * HOUR);
        const fresh = record('completed', now - HOUR);
        for (const r of [...old, oldRunning, oldWaiting, fresh]) await store.save(r);
        await store.flush();
        await store.retain();
        expect((await listed(store)).sort()).toEqual(
          [oldRunning, oldWaiting, fresh].map((r) => r.task.id).sort(),
        );
        expect(await store.count()).toBe(3);
      } finally {
        await close();
      }
    });

    test('nothing terminal to delete: every task in progress is kept, even past the count', async () => {
      const { store, close } = await backend.open({ maxStored: 1, maxAgeHours: 1 });
      try {
        const rs = [
          record('working', T0),
          record('input-required', T0 + 1),
          record('submitted', T0 + 2),
        ];
        for (const r of rs) await store.save(r);
        await store.flush();
        expect(await store.retain()).toBe(0);
        expect(await store.count()).toBe(3);
      } finally {
        await close();
      }
    });
  });

test('a real node keeps its task log within TASK_MAX_STORED as tasks keep coming', async () => {
  const n = await startNode(agentNode('bounded', { handle: (ctx) => ctx.complete('done') }), {
    limits: { taskMaxStored: 20 },
  });
  try {
    const ids: string[] = [];
    for (let i = 0; i < 50; i++) {
      const r = await rpc(n.url, 'SendMessage', {
        message: { messageId: crypto.randomUUID(), role: 'ROLE_USER', parts: [{ text: `t${i}` }] },
      });
      expect(r.result.task.status.state).toBe('TASK_STATE_COMPLETED');
      ids.push(r.result.task.id);
    }
    const dir = join(n.dataDir, 'bounded', 'tasks');
    // The tasks the segments hold: each id's newest line, unless it is a deletion.
    const stored = () => {
      const live = new Set<string>();
      for (const f of readdirSync(join(dir, 'segments')).sort())
        for (const line of readFileSync(join(dir, 'segments', f), 'utf8')
          .trimEnd()
          .split('\n')) {
          const { id, op } = JSON.parse(line) as { id: string; op: string };
          if (op === 'put') live.add(id);
          else live.delete(id);
        }
      return live.size;
    };
    await n.node.store.retain();
    expect(stored()).toBeLessThanOrEqual(20);
    const page = (await rpc(n.url, 'ListTasks', { pageSize: 100 })).result;
    expect(page.totalSize).toBeLessThanOrEqual(20);
    // The newest are the ones kept (tasks finished in one millisecond may go either way).
    const kept: string[] = page.tasks.map((t: { id: string }) => t.id);
    const recent = new Set(ids.slice(-30));
    expect(kept.filter((id) => !recent.has(id))).toEqual([]);
    expect((await rpc(n.url, 'GetTask', { id: ids[0] })).error.code).toBe(-32001);
  } finally {
    await n.dispose();
  }
});
