/**
 * The task store's one suite, run on each store: the task log and PostgreSQL (a
 * throw-away cluster). Each case talks to a real node over HTTP: send, continue, read, list and page,
 * cancel, push configs, streams and resubscription, a restart, and the cache bounds. Then, on
 * PostgreSQL only, several node instances on one task database: what one writes the other
 * reads, continues, cancels and streams, and concurrent writes do not lose each other.
 */

import { isA2AError } from '../lib/a2a/errors.ts';
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Agent } from '../lib/a2a/agent.ts';
import type { RemoteChange, TaskRecord, TaskStore } from '../lib/a2a/store/task-store.ts';
import { LogTaskStore } from '../lib/a2a/store/log-store.ts';
import { PostgresTaskStore } from '../lib/a2a/store/postgres-store.ts';
import type { ListTasksPage, Task } from '../lib/a2a/types.ts';
import { TaskEngine } from '../lib/a2a/engine/engine.ts';
import { ANONYMOUS } from '../lib/auth/principal.ts';
import { memoryLog, silentLog } from '../lib/log.ts';
import { SQL } from 'bun';
import type { NodeOptions } from '../lib/node/node-types.ts';
import {
  agentNode,
  collect,
  gate,
  msgV1,
  rpc,
  sseFrames,
  startNode,
  streamRpc,
  tempDir,
  type TestNode,
} from './support/node.ts';
import { type FilePostgres, sharedPostgres } from './support/postgres.ts';

setDefaultTimeout(20_000); // per file (Bun scopes it so): real servers and processes are slow on a busy machine

let pg: FilePostgres;
let databases = 0;

// initdb takes a few seconds on a busy machine.
beforeAll(async () => {
  pg = await sharedPostgres();
}, 60_000);
afterAll(async () => {
  await pg.release();
});

/** Gates the agent waits on, by message text, so a test decides when a turn goes on. */
const gates = new Map<string, ReturnType<typeof gate>>();

/**
 * `ask`: input-required; `hold:<key>`: working, then waits for gate <key>, then an artifact and
 * completed; `reply`: a direct message; anything else: working, an artifact, completed.
 */
const scripted: Agent = {
  async handle(ctx) {
    if (ctx.text === 'ask') return ctx.requireInput('Which one?');
    if (ctx.text === 'reply') return ctx.reply('hello');
    ctx.working();
    if (ctx.text.startsWith('hold:')) {
      const g = gates.get(ctx.text.slice(5));
      await g?.promise;
      if (ctx.signal.aborted) return;
    }
    ctx.artifact(
      { artifactId: 'out', name: 'out', parts: [{ text: `done ${ctx.text}` }] },
      { lastChunk: true },
    );
    ctx.complete();
  },
};

interface Backend {
  name: string;
  /** Options of a node on a fresh, empty store. */
  fresh(): Promise<Partial<NodeOptions>>;
  /** A store object for store-level cases, on a fresh store. */
  store(
    cacheSize: number,
    cacheBytes?: number,
    listPageBytes?: number,
  ): Promise<{ store: TaskStore; reopen(): Promise<TaskStore>; remove(): void }>;
}

const backends: Backend[] = [
  {
    name: 'the task log',
    fresh: async () => ({ dataDir: tempDir() }),
    async store(cacheSize, cacheBytes, listPageBytes) {
      const root = tempDir();
      const dir = join(root, 'tasks');
      const open = async () =>
        LogTaskStore.open({
          dir,
          log: silentLog,
          cacheSize,
          ...(cacheBytes ? { cacheBytes } : {}),
          ...(listPageBytes ? { listPageBytes } : {}),
        });
      return {
        store: await open(),
        reopen: open,
        remove: () => rmSync(root, { recursive: true, force: true }),
      };
    },
  },
  {
    name: 'PostgreSQL',
    fresh: async () => ({
      dataDir: tempDir(),
      tasksDatabaseUrl: await pg.createDatabase(`suite_${++databases}`),
    }),
    async store(cacheSize, cacheBytes, listPageBytes) {
      const url = await pg.createDatabase(`suite_${++databases}`);
      const open = async () => {
        const s = new PostgresTaskStore({
          url,
          node: 'unit',
          log: silentLog,
          cacheSize,
          ...(cacheBytes ? { cacheBytes } : {}),
          ...(listPageBytes ? { listPageBytes } : {}),
        });
        await s.open();
        return s;
      };
      return { store: await open(), reopen: open, remove: () => {} };
    },
  },
];

const send = (
  url: string,
  text: string,
  extra: Record<string, unknown> = {},
  configuration: Record<string, unknown> = {},
) => rpc(url, 'SendMessage', { message: msgV1(text, extra), configuration });

/** Every page of `anonymous`'s tasks, following `nextPageToken` (at most 20 pages: a loop is a failure). */
async function everyPage(store: TaskStore, pageSize: number): Promise<ListTasksPage[]> {
  const pages: ListTasksPage[] = [];
  let pageToken: string | undefined;
  do {
    const page = await store.list(
      { pageSize, includeArtifacts: false, ...(pageToken ? { pageToken } : {}) },
      'anonymous',
    );
    if (isA2AError(page)) throw new Error(page.message);
    pages.push(page);
    pageToken = page.nextPageToken || undefined;
  } while (pageToken && pages.length < 20);
  return pages;
}

function taskRecord(
  contextId: string,
  ts: number,
  state: Task['status']['state'] = 'completed',
): TaskRecord {
  const id = crypto.randomUUID();
  return {
    task: {
      id,
      contextId,
      status: { state, timestamp: new Date(ts).toISOString() },
      artifacts: [],
      history: [
        {
          messageId: crypto.randomUUID(),
          role: 'user',
          parts: [{ text: 'x' }],
          taskId: id,
          contextId,
        },
      ],
    },
    push: [],
  };
}

describe.each(backends)('task store on $name', (backend) => {
  let node: TestNode;

  beforeAll(async () => {
    node = await startNode(agentNode('tasks', scripted), await backend.fresh());
  }, 30_000);
  afterAll(() => node.dispose());

  test('a sent task is stored, read back and counted; an unknown or malformed id is not found', async () => {
    const before = await node.node.store.count();
    const t = (await send(node.url, 'go')).result.task;
    expect(t.status.state).toBe('TASK_STATE_COMPLETED');
    const got = (await rpc(node.url, 'GetTask', { id: t.id })).result;
    expect([got.id, got.status.state, got.artifacts[0].parts[0].text]).toEqual([
      t.id,
      'TASK_STATE_COMPLETED',
      'done go',
    ]);
    expect(got.history.map((m: any) => m.role)).toEqual(['ROLE_USER']);
    expect(await node.node.store.count()).toBe(before + 1);
    expect((await rpc(node.url, 'GetTask', { id: crypto.randomUUID() })).error.code).toBe(-32001);
    expect((await rpc(node.url, 'GetTask', { id: '../../etc/passwd' })).error.code).toBe(-32001);
    // A direct reply makes no task.
    expect((await send(node.url, 'reply')).result.message.parts[0].text).toBe('hello');
    expect(await node.node.store.count()).toBe(before + 1);
  });

  test('an interrupted task continues by taskId; a terminal one refuses more', async () => {
    const first = (await send(node.url, 'ask')).result.task;
    expect(first.status.state).toBe('TASK_STATE_INPUT_REQUIRED');
    const second = (await send(node.url, 'the red one', { taskId: first.id })).result.task;
    expect([second.id, second.contextId, second.status.state]).toEqual([
      first.id,
      first.contextId,
      'TASK_STATE_COMPLETED',
    ]);
    const stored = (await rpc(node.url, 'GetTask', { id: first.id })).result;
    expect(stored.history.map((m: any) => m.parts[0].text)).toEqual([
      'ask',
      'Which one?',
      'the red one',
    ]);
    const again = await send(node.url, 'more', { taskId: first.id });
    expect(again.error.code).toBe(-32004);
    expect((await send(node.url, 'x', { taskId: first.id, contextId: 'other' })).error.code).toBe(
      -32004,
    );
  });

  test('ListTasks filters by context and state, pages newest first by cursor, and refuses a foreign token', async () => {
    const ctx = crypto.randomUUID();
    const ids: string[] = [];
    for (const text of ['a', 'b', 'ask', 'c'])
      ids.push((await send(node.url, text, { contextId: ctx })).result.task.id);
    const all = (await rpc(node.url, 'ListTasks', { contextId: ctx, pageSize: 2 })).result;
    expect(all.totalSize).toBe(4);
    expect(all.tasks).toHaveLength(2);
    const rest = (
      await rpc(node.url, 'ListTasks', {
        contextId: ctx,
        pageSize: 2,
        pageToken: all.nextPageToken,
      })
    ).result;
    expect(rest.nextPageToken).toBe('');
    const listed = [...all.tasks, ...rest.tasks].map((t: any) => t.id);
    expect(new Set(listed)).toEqual(new Set(ids));
    const times = [...all.tasks, ...rest.tasks].map((t: any) => Date.parse(t.status.timestamp));
    expect(times).toEqual([...times].sort((a, b) => b - a));
    const waiting = (
      await rpc(node.url, 'ListTasks', { contextId: ctx, status: 'TASK_STATE_INPUT_REQUIRED' })
    ).result;
    expect(waiting.tasks.map((t: any) => t.id)).toEqual([ids[2]]);
    expect((await rpc(node.url, 'ListTasks', { pageToken: 'bm90LW91cnM' })).error.code).toBe(
      -32602,
    );
  });

  test('cancel: an interrupted task is canceled once, a terminal one is not cancelable, an unknown one not found', async () => {
    const t = (await send(node.url, 'ask')).result.task;
    const canceled = (await rpc(node.url, 'CancelTask', { id: t.id })).result;
    expect(canceled.status.state).toBe('TASK_STATE_CANCELED');
    expect((await rpc(node.url, 'CancelTask', { id: t.id })).result.status.state).toBe(
      'TASK_STATE_CANCELED',
    );
    const done = (await send(node.url, 'go')).result.task;
    expect((await rpc(node.url, 'CancelTask', { id: done.id })).error.code).toBe(-32002);
    expect((await rpc(node.url, 'CancelTask', { id: crypto.randomUUID() })).error.code).toBe(
      -32001,
    );
  });

  test('cancel stops a running turn: its later reports are ignored', async () => {
    const key = crypto.randomUUID();
    gates.set(key, gate());
    const t = (await send(node.url, `hold:${key}`, {}, { returnImmediately: true })).result.task;
    expect(t.status.state).toBe('TASK_STATE_WORKING');
    expect((await rpc(node.url, 'CancelTask', { id: t.id })).result.status.state).toBe(
      'TASK_STATE_CANCELED',
    );
    gates.get(key)!.open();
    const after = (await rpc(node.url, 'GetTask', { id: t.id })).result;
    expect([after.status.state, after.artifacts ?? []]).toEqual(['TASK_STATE_CANCELED', []]);
  });

  test('push configs: created with the task and after, read, listed, deleted; at most 10 per task', async () => {
    const hook = 'http://127.0.0.1:9/hook';
    const t = (
      await send(node.url, 'ask', {}, { taskPushNotificationConfig: { url: hook, id: 'first' } })
    ).result.task;
    const made = await rpc(node.url, 'CreateTaskPushNotificationConfig', {
      taskId: t.id,
      url: hook,
      id: 'second',
    });
    expect(made.result?.id ?? made.error).toBe('second');
    const listed = (
      await rpc(node.url, 'ListTaskPushNotificationConfigs', { taskId: t.id })
    ).result.configs.map((c: any) => c.id);
    expect(listed.sort()).toEqual(['first', 'second']);
    expect(
      (await rpc(node.url, 'GetTaskPushNotificationConfig', { taskId: t.id, id: 'second' })).result
        .url,
    ).toBe(hook);
    expect(
      (await rpc(node.url, 'DeleteTaskPushNotificationConfig', { taskId: t.id, id: 'first' }))
        .result,
    ).toBeNull();
    expect(
      (await rpc(node.url, 'DeleteTaskPushNotificationConfig', { taskId: t.id, id: 'first' }))
        .result,
    ).toBeNull();
    for (let i = 0; i < 9; i++)
      await rpc(node.url, 'CreateTaskPushNotificationConfig', {
        taskId: t.id,
        url: hook,
        id: `n${i}`,
      });
    const over = await rpc(node.url, 'CreateTaskPushNotificationConfig', {
      taskId: t.id,
      url: hook,
      id: 'eleventh',
    });
    expect(over.error.code).toBe(-32602);
    expect(
      (await rpc(node.url, 'ListTaskPushNotificationConfigs', { taskId: t.id })).result.configs,
    ).toHaveLength(10);
    // The configs survived alongside the task's own writes: the task is still as it was.
    expect((await rpc(node.url, 'GetTask', { id: t.id })).result.status.state).toBe(
      'TASK_STATE_INPUT_REQUIRED',
    );
    expect(
      (
        await rpc(node.url, 'GetTaskPushNotificationConfig', {
          taskId: crypto.randomUUID(),
          id: 'x',
        })
      ).error.code,
    ).toBe(-32001);
  });

  test('a streamed send and a resubscription get every event in order, ending at the final state', async () => {
    const frames = await collect(
      await streamRpc(node.url, 'SendStreamingMessage', { message: msgV1('go') }),
    );
    expect(frames.map((f) => Object.keys(f.result)[0])).toEqual([
      'task',
      'statusUpdate',
      'artifactUpdate',
      'statusUpdate',
    ]);
    expect(frames.at(-1).result.statusUpdate.status.state).toBe('TASK_STATE_COMPLETED');

    const key = crypto.randomUUID();
    gates.set(key, gate());
    const t = (await send(node.url, `hold:${key}`, {}, { returnImmediately: true })).result.task;
    const res = await streamRpc(node.url, 'SubscribeToTask', { id: t.id });
    const seen: any[] = [];
    for await (const f of sseFrames(res)) {
      seen.push(f.result);
      if (seen.length === 1) gates.get(key)!.open();
    }
    expect(seen[0].task.status.state).toBe('TASK_STATE_WORKING');
    expect(seen.slice(1).map((r) => Object.keys(r)[0])).toEqual(['artifactUpdate', 'statusUpdate']);
    expect(seen.at(-1).statusUpdate.status.state).toBe('TASK_STATE_COMPLETED');
    expect((await rpc(node.url, 'SubscribeToTask', { id: t.id })).error.code).toBe(-32004);
  });

  test('tasks outlive the node: a restart on the same store reads and lists them', async () => {
    const opts = await backend.fresh();
    const first = await startNode(agentNode('restarts', scripted), opts);
    const t = (await send(first.url, 'ask')).result.task;
    await first.stop();
    const second = await startNode(agentNode('restarts', scripted), opts);
    try {
      expect((await rpc(second.url, 'GetTask', { id: t.id })).result.status.state).toBe(
        'TASK_STATE_INPUT_REQUIRED',
      );
      expect((await rpc(second.url, 'ListTasks', {})).result.tasks.map((x: any) => x.id)).toEqual([
        t.id,
      ]);
      expect((await send(second.url, 'blue', { taskId: t.id })).result.task.status.state).toBe(
        'TASK_STATE_COMPLETED',
      );
    } finally {
      await second.dispose();
      rmSync(opts.dataDir!, { recursive: true, force: true });
    }
  });

  test('store level: a cache of 2 still serves every record; listing pages by time and id; a bad id is refused', async () => {
    const { store, reopen, remove } = await backend.store(2);
    const ctx = crypto.randomUUID();
    const recs = [1000, 2000, 2000, 3000, 4000].map((ts) => taskRecord(ctx, ts));
    await Promise.all(recs.map((r) => store.save(r)));
    for (const r of recs) expect((await store.get(r.task.id))?.task.id).toBe(r.task.id);
    expect(await store.count()).toBe(5);
    const ids = (await everyPage(store, 2)).flatMap((p) => p.tasks.map((t) => t.id));
    expect(ids).toHaveLength(5);
    expect(ids[0]).toBe(recs[4]!.task.id);
    expect(ids[4]).toBe(recs[0]!.task.id);
    const since = await store.list(
      { pageSize: 10, includeArtifacts: false, statusTimestampAfter: new Date(3000).toISOString() },
      'anonymous',
    );
    expect('tasks' in since && since.tasks.map((t) => t.id).sort()).toEqual(
      [recs[3]!.task.id, recs[4]!.task.id].sort(),
    );
    const bad = taskRecord(ctx, 1);
    bad.task.id = 'not-a-uuid';
    await expect(store.save(bad)).rejects.toThrow();
    expect(await store.get('not-a-uuid')).toBeUndefined();
    // A task belongs to its creator: only the creator's list holds it, and it stays so when read back.
    const alices = { ...taskRecord(ctx, 5000), creator: 'user:alice' };
    await store.save(alices);
    const listOf = async (s: TaskStore, creator: string) => {
      const page = await s.list({ pageSize: 10, includeArtifacts: false }, creator);
      return 'tasks' in page ? page.tasks.map((t) => t.id) : [];
    };
    expect(await listOf(store, 'user:alice')).toEqual([alices.task.id]);
    expect(await listOf(store, 'anonymous')).not.toContain(alices.task.id);
    await store.close();
    const again = await reopen();
    expect(await again.count()).toBe(6);
    expect((await again.get(recs[2]!.task.id))?.task.status.timestamp).toBe(
      recs[2]!.task.status.timestamp,
    );
    expect((await again.get(alices.task.id))?.creator).toBe('user:alice');
    expect(await listOf(again, 'user:alice')).toEqual([alices.task.id]);
    await again.close();
    remove();
  });
  test('store level: a page ends early past its byte budget, goes on after its last task, and always holds one', async () => {
    // Five tasks of about 40 KB of history each, newest first: a budget of 100 KB holds two
    // (the measure is about, within a few hundred bytes); one task larger than the budget is a
    // page of its own. Paging on visits each task once.
    const { store, remove } = await backend.store(100, undefined, 100_000);
    const ctx = crypto.randomUUID();
    const recs = [1000, 2000, 3000, 4000, 5000].map((ts) => taskRecord(ctx, ts));
    for (const r of recs) r.task.history[0]!.parts = [{ text: 'x'.repeat(40_000) }];
    recs[1]!.task.history[0]!.parts = [{ text: 'y'.repeat(150_000) }];
    await Promise.all(recs.map((r) => store.save(r)));
    const pages = await everyPage(store, 100);
    for (const page of pages) expect(page.totalSize).toBe(5);
    const id = (i: number) => recs[i]!.task.id;
    expect(pages.map((p) => p.tasks.map((t) => t.id))).toEqual([
      [id(4), id(3)],
      [id(2)],
      [id(1)],
      [id(0)],
    ]);
    await store.close();
    remove();
  });

  test('store level: the cache counts a record in UTF-8 bytes, not characters (multi-byte text near the limit)', async () => {
    // "€" is one character and three bytes. The limit sits between a record's characters and its
    // bytes: counted in characters both records would stay; in bytes the first fits alone and the
    // second does not, so both leave the cache once saved and are read back from the store whole.
    const limit = 10_000;
    const { store, remove } = await backend.store(100, limit);
    const near = taskRecord(crypto.randomUUID(), 1000);
    near.task.history![0]!.parts = [{ text: '€'.repeat(3000) }];
    const over = taskRecord(crypto.randomUUID(), 2000);
    over.task.history![0]!.parts = [{ text: '€'.repeat(3400) }];
    const chars = (r: TaskRecord) => JSON.stringify(r.task).length;
    expect(chars(near) + chars(over)).toBeLessThan(limit);
    await store.save(near);
    const one = store.cached;
    expect(one.entries).toBe(1);
    expect(one.bytes).toBeGreaterThan(9000);
    expect(one.bytes).toBeLessThanOrEqual(limit);
    await store.save(over);
    expect(store.cached).toEqual({ entries: 0, bytes: 0 });
    expect((await store.get(near.task.id))?.task.history![0]!.parts).toEqual([
      { text: '€'.repeat(3000) },
    ]);
    expect((await store.get(over.task.id))?.task.history![0]!.parts).toEqual([
      { text: '€'.repeat(3400) },
    ]);
    await store.close();
    remove();
  });
});

describe('several instances of one node on one task database', () => {
  let url: string;
  let a: TestNode;
  let b: TestNode;

  beforeAll(async () => {
    url = await pg.createDatabase('shared_nodes');
    a = await startNode(agentNode('shared', scripted), { tasksDatabaseUrl: url });
    b = await startNode(agentNode('shared', scripted), { tasksDatabaseUrl: url });
  }, 30_000);
  afterAll(async () => {
    await Promise.all([a.dispose(), b.dispose()]);
  });

  test('a task made on one is read, listed, continued and canceled on the other', async () => {
    const t = (await send(a.url, 'ask')).result.task;
    expect((await rpc(b.url, 'GetTask', { id: t.id })).result.status.state).toBe(
      'TASK_STATE_INPUT_REQUIRED',
    );
    expect(
      (await rpc(b.url, 'ListTasks', { contextId: t.contextId })).result.tasks.map(
        (x: any) => x.id,
      ),
    ).toEqual([t.id]);
    const done = (await send(b.url, 'the red one', { taskId: t.id })).result.task;
    expect(done.status.state).toBe('TASK_STATE_COMPLETED');
    const onA = (await rpc(a.url, 'GetTask', { id: t.id })).result;
    expect(onA.history.map((m: any) => m.parts[0].text)).toEqual([
      'ask',
      'Which one?',
      'the red one',
    ]);
    expect(onA.artifacts[0].parts[0].text).toBe('done the red one');

    const u = (await send(a.url, 'ask')).result.task;
    expect((await rpc(b.url, 'CancelTask', { id: u.id })).result.status.state).toBe(
      'TASK_STATE_CANCELED',
    );
    expect((await rpc(a.url, 'GetTask', { id: u.id })).result.status.state).toBe(
      'TASK_STATE_CANCELED',
    );
    expect((await rpc(a.url, 'CancelTask', { id: u.id })).result.status.state).toBe(
      'TASK_STATE_CANCELED',
    );
    expect((await send(a.url, 'x', { taskId: u.id })).error.code).toBe(-32004);
  });

  test('a stream on one gets the events a turn on the other makes; a cancel there stops the turn here', async () => {
    const key = crypto.randomUUID();
    gates.set(key, gate());
    const t = (await send(a.url, `hold:${key}`, {}, { returnImmediately: true })).result.task;
    // While A runs the turn, B refuses to start a second one on the task.
    const busy = await send(b.url, 'more', { taskId: t.id });
    expect(busy.error.code).toBe(-32004);
    expect(busy.error.message).toContain('another process');
    const seen: any[] = [];
    for await (const f of sseFrames(await streamRpc(b.url, 'SubscribeToTask', { id: t.id }))) {
      seen.push(f.result);
      if (seen.length === 1) gates.get(key)!.open();
    }
    expect(seen.map((r) => Object.keys(r)[0])).toEqual(['task', 'artifactUpdate', 'statusUpdate']);
    expect(seen[2].statusUpdate.status.state).toBe('TASK_STATE_COMPLETED');
    expect(seen[1].artifactUpdate.artifact.parts[0].text).toBe(`done hold:${key}`);

    // A's own stream of a running turn ends when B cancels; A's turn reports nothing after.
    const key2 = crypto.randomUUID();
    gates.set(key2, gate());
    const stream = await streamRpc(a.url, 'SendStreamingMessage', {
      message: msgV1(`hold:${key2}`),
    });
    const onA: any[] = [];
    for await (const f of sseFrames(stream)) {
      onA.push(f.result);
      if (onA.length === 2)
        expect(
          (await rpc(b.url, 'CancelTask', { id: f.result.statusUpdate.taskId })).result.status
            .state,
        ).toBe('TASK_STATE_CANCELED');
    }
    expect(onA.map((r) => r.statusUpdate?.status.state ?? Object.keys(r)[0])).toEqual([
      'task',
      'TASK_STATE_WORKING',
      'TASK_STATE_CANCELED',
    ]);
    gates.get(key2)!.open();
    const id = onA[0].task.id;
    const final = (await rpc(a.url, 'GetTask', { id })).result;
    expect([final.status.state, final.artifacts ?? []]).toEqual(['TASK_STATE_CANCELED', []]);
  });

  test('push configs made on either instance are all kept while a turn on the other writes the task', async () => {
    const key = crypto.randomUUID();
    gates.set(key, gate());
    const t = (await send(a.url, `hold:${key}`, {}, { returnImmediately: true })).result.task;
    const hook = 'http://127.0.0.1:9/hook';
    await rpc(b.url, 'CreateTaskPushNotificationConfig', { taskId: t.id, url: hook, id: 'from-b' });
    await rpc(a.url, 'CreateTaskPushNotificationConfig', { taskId: t.id, url: hook, id: 'from-a' });
    gates.get(key)!.open();
    const blocking = (await send(b.url, 'ask')).result.task; // any round trip; the held turn finishes meanwhile
    expect(blocking.status.state).toBe('TASK_STATE_INPUT_REQUIRED');
    for (const n of [a, b]) {
      const ids = (
        await rpc(n.url, 'ListTaskPushNotificationConfigs', { taskId: t.id })
      ).result.configs.map((c: any) => c.id);
      expect(ids.sort()).toEqual(['from-a', 'from-b']);
    }
  });
});

describe('optimistic concurrency on the shared store', () => {
  test('a stale write does not overwrite a newer one: the stale writer adopts what is stored', async () => {
    const url = await pg.createDatabase('versions');
    const log = memoryLog();
    const one = new PostgresTaskStore({ url, node: 'n', log });
    const two = new PostgresTaskStore({ url, node: 'n', log: silentLog });
    const other = new PostgresTaskStore({ url, node: 'another-node', log: silentLog });
    await Promise.all([one.open(), two.open(), other.open()]);
    try {
      const rec = taskRecord('ctx', 1000, 'working');
      const id = rec.task.id;
      one.hold(id);
      await one.save(rec);
      expect(rec.version).toBe(1);
      const changes: RemoteChange[] = [];
      let changed!: () => void;
      const seen = new Promise<void>((r) => (changed = r));
      one.onChange((cid, c) => {
        if (cid === id && c.task) {
          changes.push(c);
          changed();
        }
      });
      // The second process cancels under the row lock...
      const out = await two.update(id, (r) => {
        r.task.status = { state: 'canceled', timestamp: new Date(2000).toISOString() };
        return [];
      });
      expect(out && 'rec' in out && out.rec.version).toBe(2);
      // ...and the first, unaware, writes its version-1 copy: refused, and it takes the stored task.
      rec.task.artifacts.push({ artifactId: 'late', parts: [{ text: 'late' }] });
      await one.save(rec);
      await seen;
      expect(changes[0]!.task!.status.state).toBe('canceled');
      expect(changes[0]!.version).toBe(2);
      const stored = await two.get(id);
      expect([stored?.task.status.state, stored?.task.artifacts.length, stored?.version]).toEqual([
        'canceled',
        0,
        2,
      ]);
      expect(log.lines.some((l) => l.includes('task changed by another process'))).toBe(true);
      // Another node's store in the same database never sees this node's tasks.
      expect(await other.get(id)).toBeUndefined();
      expect(await other.count()).toBe(0);
      one.release(id);
    } finally {
      await Promise.all([one.close(), two.close(), other.close()]);
    }
  });
});

describe('a process that is gone', () => {
  test('leaves its running tasks to the others: they fail them, and a stream watching one ends', async () => {
    const url = await pg.createDatabase('orphans');
    const store = new PostgresTaskStore({ url, node: 'n', log: silentLog, leaseMs: 300 });
    await store.open();
    const engine = new TaskEngine({
      store,
      agent: scripted,
      log: silentLog,
      inputModes: ['text/plain'],
      outputModes: ['text/plain'],
    });
    const sql = new SQL(url);
    try {
      // A task another process was running when it died: owned by a process with no heartbeat.
      const rec = taskRecord('ctx', Date.now(), 'working');
      const alive = taskRecord('ctx', Date.now(), 'working');
      await store.save(rec);
      await store.save(alive);
      await sql`INSERT INTO lume_a2a_processes (process, node, alive_until) VALUES ('elsewhere', 'n', now() + interval '1 hour')`;
      await sql`UPDATE lume_a2a_tasks SET owner = 'elsewhere' WHERE id = ${alive.task.id}`;
      // The stream is open before its task's process is gone: the next look for orphans (every
      // lease) fails the task while the stream watches, however long this machine takes.
      const sub = await engine.resubscribe(rec.task.id, ANONYMOUS);
      if (isA2AError(sub)) throw new Error(sub.message);
      await sql`UPDATE lume_a2a_tasks SET owner = 'gone' WHERE id = ${rec.task.id}`;
      const events: any[] = [];
      for await (const e of sub) events.push(e);
      expect(events.map((e) => e.kind)).toEqual(['task', 'status']);
      expect(events[1].status.state).toBe('failed');
      expect(events[1].status.message.parts[0].text).toContain('stopped');
      // A task whose process is alive is left alone.
      expect((await store.get(alive.task.id))?.task.status.state).toBe('working');
    } finally {
      await sql.close();
      await engine.close();
      await store.close();
    }
  });
});
