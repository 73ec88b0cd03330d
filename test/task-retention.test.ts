/**
 * A bound on the task disk: retention by count and by age on each task store (JSON files, the task
 * log and a throw-away PostgreSQL cluster) deletes terminal tasks oldest first and never one in progress;
 * on the JSON files, tasks live in sharded folders, an older flat folder is moved into them at
 * start, a lost index is rebuilt from the files, and rows a crash left dirty are checked against
 * their files; and a real node keeps its folder within TASK_MAX_STORED as tasks keep coming.
 */

import { isA2AError } from '../lib/a2a/errors.ts';
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { existsSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { taskFilePath } from '../lib/a2a/store/task-folder.ts';
import { TaskIndex } from '../lib/a2a/store/task-index.ts';
import { newTaskId, type TaskRecord, type TaskStore } from '../lib/a2a/store/task-store.ts';
import { FileTaskStore } from '../lib/a2a/store/files-store.ts';
import { LogTaskStore } from '../lib/a2a/store/log-store.ts';
import { PostgresTaskStore } from '../lib/a2a/store/postgres-store.ts';
import type { TaskState } from '../lib/a2a/types.ts';
import { memoryLog, silentLog } from '../lib/log.ts';
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
function scratch(): string {
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
    name: 'JSON files',
    async open(bounds) {
      const root = tempDir();
      const store = FileTaskStore.open({ dir: join(root, 'tasks'), log: silentLog, ...bounds });
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

describe('the JSON-file task folder', () => {
  test('a new task lives in the folder of its id’s last two hex digits, an older (UUIDv4) one in its first two; the top level holds only shards and the index', async () => {
    const dir = join(scratch(), 'tasks');
    const store = FileTaskStore.open({ dir, log: silentLog });
    const older = record('completed', T0);
    const fresh = record('completed', T0 + 1);
    fresh.task.id = newTaskId();
    expect(fresh.task.id[14]).toBe('7');
    await store.save(older);
    await store.save(fresh);
    await store.close();
    const expected = [
      join(dir, older.task.id.slice(0, 2), `${older.task.id}.json`),
      join(dir, fresh.task.id.slice(-2), `${fresh.task.id}.json`),
    ];
    for (const path of expected) expect(existsSync(path)).toBe(true);
    expect([taskFilePath(dir, older.task.id), taskFilePath(dir, fresh.task.id)]).toEqual(expected);
    const top = readdirSync(dir);
    expect(top.filter((n) => !/^[0-9a-f]{2}$/.test(n) && !n.startsWith('index.sqlite'))).toEqual(
      [],
    );
    expect(top.filter((n) => /^[0-9a-f]{2}$/.test(n)).length).toBe(256);
    // Both kinds are read back and listed, newest first.
    const again = FileTaskStore.open({ dir, log: silentLog });
    try {
      expect(await listed(again)).toEqual([fresh.task.id, older.task.id]);
      expect(again.get(fresh.task.id)?.task.status.state).toBe('completed');
    } finally {
      await again.close();
    }
  });

  test('an older flat folder is moved into shards at start and its foreign files are left, logged', async () => {
    const dir = join(scratch(), 'tasks');
    // The layout before shards: <dir>/<id>.json, the same record format.
    const { mkdirSync } = await import('node:fs');
    mkdirSync(dir, { recursive: true });
    const rs = [record('completed', T0), record('input-required', T0 + 1000)];
    for (const r of rs)
      writeFileSync(
        join(dir, `${r.task.id}.json`),
        JSON.stringify({ format: 'lume-a2a.task/1', task: r.task, push: [], creator: r.creator }),
      );
    writeFileSync(join(dir, `${crypto.randomUUID()}.json`), '{ torn');
    writeFileSync(join(dir, 'notes.txt'), 'hello');
    const log = memoryLog();
    const store = FileTaskStore.open({ dir, log });
    try {
      expect(await listed(store)).toEqual([rs[1]!.task.id, rs[0]!.task.id]);
      expect(await store.count()).toBe(2);
      for (const r of rs) {
        expect(existsSync(join(dir, `${r.task.id}.json`))).toBe(false);
        expect(existsSync(taskFilePath(dir, r.task.id))).toBe(true);
      }
      expect(log.lines.filter((l) => l.startsWith('warn skipping')).length).toBe(2);
      expect(existsSync(join(dir, 'notes.txt'))).toBe(true);
    } finally {
      await store.close();
    }
  });

  test('a lost index is rebuilt from the files', async () => {
    const dir = join(scratch(), 'tasks');
    let store = FileTaskStore.open({ dir, log: silentLog });
    const rs = [
      record('completed', T0),
      record('working', T0 + 1),
      record('failed', T0 + 2, 'token:bob'),
    ];
    for (const r of rs) await store.save(r);
    await store.close();
    for (const f of readdirSync(dir)) if (f.startsWith('index.sqlite')) rmSync(join(dir, f));
    store = FileTaskStore.open({ dir, log: silentLog });
    try {
      expect(await store.count()).toBe(3);
      expect(await listed(store)).toEqual([rs[1]!.task.id, rs[0]!.task.id]);
      expect(await listed(store, 'token:bob')).toEqual([rs[2]!.task.id]);
      expect(store.runningIds()).toEqual([rs[1]!.task.id]);
    } finally {
      await store.close();
    }
  });

  test('rows a crash left dirty take what their files say; a row whose file was never written goes', async () => {
    const dir = join(scratch(), 'tasks');
    let store = FileTaskStore.open({ dir, log: silentLog });
    const written = record('working', T0);
    await store.save(written);
    await store.close();
    // What a kill -9 leaves between the index mark and the file write: rows marked dirty with
    // the state about to be written, for a task whose file has the older state, and for a new
    // task whose file was never created (its client was never answered).
    const index = new TaskIndex(join(dir, 'index.sqlite'));
    const unwritten = record('submitted', T0 + 5);
    await Promise.all([
      index.mark(written.task.id, {
        creator: 'token:alice',
        contextId: written.task.contextId,
        state: 'completed',
        ts: T0 + 9,
      }),
      index.mark(unwritten.task.id, {
        creator: 'token:alice',
        contextId: 'c',
        state: 'submitted',
        ts: T0 + 5,
      }),
    ]);
    index.close();
    writeFileSync(
      join(dir, unwritten.task.id.slice(0, 2), `.${unwritten.task.id}.json.1.0.tmp`),
      '{',
    );
    const log = memoryLog();
    store = FileTaskStore.open({ dir, log });
    try {
      expect(await store.count()).toBe(1);
      expect(await listed(store)).toEqual([written.task.id]);
      expect(store.runningIds()).toEqual([written.task.id]);
      expect(
        readdirSync(join(dir, unwritten.task.id.slice(0, 2))).filter((n) =>
          n.includes(unwritten.task.id),
        ),
      ).toEqual([]);
      expect(log.lines.some((l) => l.includes('task index repaired after a crash'))).toBe(true);
    } finally {
      await store.close();
    }
  });
});

test('a real node keeps its task folder within TASK_MAX_STORED as tasks keep coming', async () => {
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
    const files = () =>
      readdirSync(dir)
        .filter((s) => /^[0-9a-f]{2}$/.test(s))
        .flatMap((s) => readdirSync(join(dir, s)).filter((f) => f.endsWith('.json')));
    // Retention runs as writes settle; the last step may still be removing files.
    await n.node.store.retain();
    expect(files().length).toBeLessThanOrEqual(20);
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
