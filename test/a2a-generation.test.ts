/**
 * A2A 1.1 `generation` (the dev-1.1 branch, a2aproject/A2A#1810): every task and every status or
 * artifact event carries it, 1 when the task is made and one more for each change, with no gap.
 * Over each binding (JSON-RPC, HTTP+JSON, gRPC: an int64, so a ProtoJSON string), in the webhook
 * body, and on each store (the task log, PostgreSQL) across a restart; a task stored
 * before generations existed reads as 1. The 0.3 wire form has no such field. A continuation
 * whose `ifGenerationMatch` is not the task's generation is refused and changes nothing.
 */

import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Agent } from '../lib/a2a/agent.ts';
import { isA2AError } from '../lib/a2a/errors.ts';
import { encodeMessage } from '../lib/a2a/grpc/encode.ts';
import { A2A_SCHEMA } from '../lib/a2a/proto/schema.ts';
import { TaskEngine, type SendContext } from '../lib/a2a/engine/engine.ts';
import { LogTaskStore } from '../lib/a2a/store/log-store.ts';
import { PostgresTaskStore } from '../lib/a2a/store/postgres-store.ts';
import type { TaskStore } from '../lib/a2a/store/task-store.ts';
import type { TaskEvent } from '../lib/a2a/types.ts';
import { ANONYMOUS } from '../lib/auth/principal.ts';
import { silentLog } from '../lib/log.ts';
import {
  grpcAdapter,
  jsonRpcAdapter,
  restAdapter,
  type BindingAdapter,
} from './support/bindings.ts';
import { grpcAddressOf, rawClient, unary } from './support/grpc.ts';
import {
  agentNode,
  msgV03,
  rpc,
  startNode,
  tempDir,
  TEST_AUTH,
  type TestNode,
} from './support/node.ts';
import { type FilePostgres, sharedPostgres } from './support/postgres.ts';

setDefaultTimeout(30_000); // per file (Bun scopes it so): real servers and a database on a busy machine

/**
 * `ask`: working, an artifact in two chunks, then input-required (generations 2..5); its
 * continuation: working, another artifact, completed (6..8).
 */
const agent: Agent = {
  handle(ctx) {
    if (ctx.continued) {
      ctx.working();
      ctx.artifact({ artifactId: 'b', parts: [{ text: 'second' }] }, { lastChunk: true });
      return ctx.complete();
    }
    ctx.working();
    ctx.artifact({ artifactId: 'a', parts: [{ text: 'one' }] });
    ctx.artifact({ artifactId: 'a', parts: [{ text: 'two' }] }, { append: true, lastChunk: true });
    ctx.requireInput('and then?');
  },
};

let n = 0;
const message = (text: string, taskId?: string) => ({
  message: {
    messageId: `gen-${++n}`,
    role: 'ROLE_USER',
    parts: [{ text }],
    ...(taskId ? { taskId } : {}),
  },
});

/** The generation a v1.0 frame carries, as a number (it travels as a ProtoJSON string). */
function generationOf(frame: any): number {
  const g = (frame.task ?? frame.statusUpdate ?? frame.artifactUpdate)?.generation;
  if (typeof g !== 'string') throw new Error(`no generation in ${JSON.stringify(frame)}`);
  return Number(g);
}

const range = (from: number, to: number) =>
  Array.from({ length: to - from + 1 }, (_, i) => from + i);

function runGenerationCases(newBinding: (node: TestNode) => BindingAdapter) {
  let node: TestNode;
  let b: BindingAdapter;
  beforeAll(async () => {
    node = await startNode(agentNode('generations', agent));
    b = newBinding(node);
  });
  afterAll(async () => {
    b?.close?.();
    await node?.dispose();
  });

  test('a stream shows 1..n with no gap, GetTask and ListTasks the latest; a continuation goes on from there', async () => {
    const first = await b.stream('SendStreamingMessage', message('ask'));
    expect(first.map(generationOf)).toEqual(range(1, 5));
    const id = first[0].task.id;
    expect(await b.call('GetTask', { id })).toMatchObject({ result: { generation: '5' } });

    const next = await b.stream('SendStreamingMessage', message('more', id));
    // It opens with the task as it stood (5), then one event per change.
    expect(next.map(generationOf)).toEqual([5, 6, 7, 8]);
    expect(next.at(-1).statusUpdate.status.state).toBe('TASK_STATE_COMPLETED');
    expect(await b.call('GetTask', { id })).toMatchObject({ result: { generation: '8' } });
    const listed = (await b.call('ListTasks', { pageSize: 1 })) as { result: any };
    expect(listed.result.tasks[0]).toMatchObject({ id, generation: '8' });
  });

  test('SendMessage answers the stored generation, a cancel is one more, a repeat cancel none', async () => {
    const r = (await b.call('SendMessage', message('ask'))) as { result: any };
    expect(r.result.task).toMatchObject({
      status: { state: 'TASK_STATE_INPUT_REQUIRED' },
      generation: '5',
    });
    const id = r.result.task.id;
    expect(await b.call('CancelTask', { id })).toMatchObject({ result: { generation: '6' } });
    expect(await b.call('CancelTask', { id })).toMatchObject({ result: { generation: '6' } });
    expect(await b.call('GetTask', { id })).toMatchObject({ result: { generation: '6' } });
  });
}

/** The ifGenerationMatch cases (A2A 1.1 optimistic concurrency), once per binding. */
function runMatchCases(newBinding: (node: TestNode) => BindingAdapter) {
  let node: TestNode;
  let b: BindingAdapter;
  beforeAll(async () => {
    node = await startNode(agentNode('generation-match', agent));
    b = newBinding(node);
  });
  afterAll(async () => {
    b?.close?.();
    await node?.dispose();
  });

  test('ifGenerationMatch: another generation is TASK_GENERATION_MISMATCH and changes nothing; the current one runs; a new task ignores it', async () => {
    const asked = (await b.call('SendMessage', message('ask'))) as { result: any };
    const { id, history } = asked.result.task;
    expect(asked.result.task.generation).toBe('5');
    for (const stale of ['4', '6', 4])
      expect(
        await b.call('SendMessage', {
          ...message('more', id),
          configuration: { ifGenerationMatch: stale },
        }),
      ).toEqual({ error: 'TASK_GENERATION_MISMATCH' });
    const same = (await b.call('GetTask', { id })) as { result: any };
    expect([same.result.generation, same.result.history.length]).toEqual(['5', history.length]);
    const done = (await b.call('SendMessage', {
      ...message('more', id),
      configuration: { ifGenerationMatch: '5' },
    })) as { result: any };
    expect(done.result.task).toMatchObject({
      status: { state: 'TASK_STATE_COMPLETED' },
      generation: '8',
    });
    const fresh = (await b.call('SendMessage', {
      ...message('ask'),
      configuration: { ifGenerationMatch: '42' },
    })) as { result: any };
    expect(fresh.result.task.generation).toBe('5');
  });
}

describe('JSON-RPC', () => runGenerationCases((node) => jsonRpcAdapter(node.url, '1.1')));
describe('HTTP+JSON', () => runGenerationCases((node) => restAdapter(node.url, '1.1')));
describe('gRPC', () => runGenerationCases((node) => grpcAdapter(node)));
describe('JSON-RPC, ifGenerationMatch', () =>
  runMatchCases((node) => jsonRpcAdapter(node.url, '1.1')));
describe('HTTP+JSON, ifGenerationMatch', () =>
  runMatchCases((node) => restAdapter(node.url, '1.1')));
describe('gRPC, ifGenerationMatch', () => runMatchCases((node) => grpcAdapter(node)));

describe('the other wire forms', () => {
  let node: TestNode;
  let hook: ReturnType<typeof Bun.serve>;
  const received: any[] = [];
  const waiters: (() => void)[] = [];
  beforeAll(async () => {
    hook = Bun.serve({
      port: 0,
      async fetch(req) {
        received.push(await req.json());
        for (const w of waiters.splice(0)) w();
        return new Response(null, { status: 204 });
      },
    });
    node = await startNode(agentNode('generations-push', agent));
  });
  afterAll(async () => {
    hook?.stop(true);
    await node?.dispose();
  });

  test('a 1.0 webhook body is the 1.0 form exactly, without 1.1 members, in order of the changes', async () => {
    const from = received.length;
    const r = await rpc(
      node.url,
      'SendMessage',
      {
        ...message('ask'),
        configuration: {
          taskPushNotificationConfig: { url: `http://127.0.0.1:${hook.port}/hook` },
        },
      },
      '1.0',
    );
    expect(r.result.task.status.state).toBe('TASK_STATE_INPUT_REQUIRED');
    while (received.length < from + 5) await new Promise<void>((done) => waiters.push(done));
    const bodies = received.slice(from);
    expect(bodies.every((b) => !JSON.stringify(b).includes('"generation"'))).toBe(true);
  });

  test("a 1.1 caller's webhook bodies carry generation: the task, then one per change, in order", async () => {
    const from = received.length;
    const r = await rpc(
      node.url,
      'SendMessage',
      {
        ...message('ask'),
        configuration: {
          taskPushNotificationConfig: { url: `http://127.0.0.1:${hook.port}/hook` },
        },
      },
      '1.1',
    );
    expect(r.result.task.generation).toBe('5');
    while (received.length < from + 5) await new Promise<void>((done) => waiters.push(done));
    const generations = received
      .slice(from)
      .map((b) => (b.statusUpdate ?? b.artifactUpdate ?? b.task).generation);
    expect(generations).toEqual(['1', '2', '3', '4', '5']);
  });

  test('a generation mismatch is -32010 over JSON-RPC, 409 ABORTED over HTTP+JSON, ABORTED over gRPC', async () => {
    const id = (await rpc(node.url, 'SendMessage', message('ask'))).result.task.id;
    const stale = () => ({ ...message('more', id), configuration: { ifGenerationMatch: '1' } });
    const info = {
      '@type': 'type.googleapis.com/google.rpc.ErrorInfo',
      reason: 'TASK_GENERATION_MISMATCH',
      domain: 'a2a-protocol.org',
    };
    const j = await rpc(node.url, 'SendMessage', stale());
    expect(j.error).toEqual({
      code: -32010,
      message: 'Task generation mismatch: expected 1 but current generation is 5',
      data: [info],
    });
    const res = await fetch(`${node.url}/message:send`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'a2a-version': '1.0', ...TEST_AUTH },
      body: JSON.stringify(stale()),
    });
    const body = (await res.json()) as any;
    expect([res.status, body.error.code, body.error.status, body.error.details]).toEqual([
      409,
      409,
      'ABORTED',
      [info],
    ]);
    const client = rawClient(grpcAddressOf(node.node.card())!);
    try {
      const g = await unary(
        client,
        'SendMessage',
        encodeMessage(A2A_SCHEMA, 'lf.a2a.v1.SendMessageRequest', stale()),
        { 'a2a-version': '1.0', authorization: TEST_AUTH.Authorization },
      );
      expect([g.code, g.reason, g.domain]).toEqual([10, 'TASK_GENERATION_MISMATCH', info.domain]);
    } finally {
      client.close();
    }
    expect((await rpc(node.url, 'GetTask', { id }, '1.1')).result.generation).toBe('5');
  });

  test('a 1.0 caller gets the 1.0 form exactly: no generation; 1.1 asks for it', async () => {
    const r = await rpc(node.url, 'SendMessage', message('ask'));
    expect(JSON.stringify(r.result)).not.toContain('"generation"');
    const id = r.result.task.id;
    expect((await rpc(node.url, 'GetTask', { id })).result.generation).toBeUndefined();
    expect((await rpc(node.url, 'GetTask', { id }, '1.1')).result.generation).toBe('5');
    const listed = await rpc(node.url, 'ListTasks', {});
    expect(JSON.stringify(listed.result)).not.toContain('"generation"');
  });

  test('the 0.3 form has no generation, in a task or an event', async () => {
    const r = await rpc(node.url, 'message/send', { message: msgV03('ask') }, null);
    expect(r.result.kind).toBe('task');
    expect(JSON.stringify(r.result)).not.toContain('generation');
  });
});

// ---- the stores, across a restart ----

let pg: FilePostgres;
beforeAll(async () => {
  pg = await sharedPostgres();
}, 60_000);
afterAll(async () => {
  await pg?.release();
});

interface StoreCase {
  name: string;
  /** Opens the same store again each time (a restart). */
  opener(): Promise<{ open(): Promise<TaskStore>; remove(): void }>;
}

const stores: StoreCase[] = [
  {
    name: 'the task log',
    async opener() {
      const root = tempDir();
      return {
        open: async () => LogTaskStore.open({ dir: join(root, 'tasks'), log: silentLog }),
        remove: () => rmSync(root, { recursive: true, force: true }),
      };
    },
  },
  {
    name: 'PostgreSQL',
    async opener() {
      const url = await pg.createDatabase(`generation_${++n}`);
      return {
        async open() {
          const s = new PostgresTaskStore({ url, node: 'unit', log: silentLog });
          await s.open();
          return s;
        },
        remove: () => {},
      };
    },
  },
];

const noted = new WeakMap<object, Map<string, number>>();

/**
 * An engine on `store` that notes, for each save that adds an event to the task's log (the
 * change it writes), the event's and the task's generation.
 */
function engineOn(store: TaskStore, saved: [number | undefined, number | undefined][]) {
  const save = store.save.bind(store);
  // The newest logged generation per task, kept across the engines that note into `saved`.
  const logged = noted.get(saved) ?? new Map<string, number>();
  noted.set(saved, logged);
  store.save = (rec) => {
    const event = rec.events?.at(-1);
    if (event && event.generation !== logged.get(rec.task.id)) {
      logged.set(rec.task.id, event.generation);
      saved.push([event.generation, rec.task.generation]);
    }
    return save(rec);
  };
  return new TaskEngine({
    store,
    agent,
    log: silentLog,
    inputModes: ['text/plain'],
    outputModes: ['text/plain'],
  });
}

const sendCtx = (text: string, taskId?: string): SendContext => ({
  params: {
    message: {
      messageId: crypto.randomUUID(),
      role: 'user',
      parts: [{ text }],
      ...(taskId ? { taskId } : {}),
    },
    configuration: { returnImmediately: false },
  },
  version: '1.0',
  caller: ANONYMOUS,
});

async function streamed(engine: TaskEngine, ctx: SendContext): Promise<TaskEvent[]> {
  const sub = await engine.stream(ctx);
  if (isA2AError(sub)) throw new Error(sub.message);
  const events: TaskEvent[] = [];
  for await (const e of sub) events.push(e);
  return events;
}

const eventGeneration = (e: TaskEvent) =>
  e.kind === 'task' ? e.task.generation : e.kind === 'message' ? undefined : e.generation;

for (const kind of stores) {
  describe(`on ${kind.name}`, () => {
    test('each saved event has the stored task’s generation; a restart keeps it and counts on', async () => {
      const { open, remove } = await kind.opener();
      const saved: [number | undefined, number | undefined][] = [];
      let store = await open();
      let engine = engineOn(store, saved);
      try {
        const events = await streamed(engine, sendCtx('ask'));
        expect(events.map(eventGeneration)).toEqual(range(1, 5));
        expect(saved).toEqual(range(2, 5).map((g) => [g, g]));
        const id = (events[0] as { task: { id: string } }).task.id;
        await engine.close();
        await store.close();

        store = await open();
        engine = engineOn(store, saved);
        const read = await engine.getTask(id, undefined, ANONYMOUS);
        expect(isA2AError(read) ? read : read.generation).toBe(5);
        // On PostgreSQL under the row lock: a stale ifGenerationMatch changes nothing.
        const stale = sendCtx('more', id);
        stale.params.configuration.ifGenerationMatch = 4;
        const refused = await engine.send(stale);
        expect(isA2AError(refused) && refused.code).toBe('TASK_GENERATION_MISMATCH');
        const still = await engine.getTask(id, undefined, ANONYMOUS);
        expect(isA2AError(still) ? still : [still.generation, still.history.length]).toEqual([
          5,
          isA2AError(read) ? 0 : read.history.length,
        ]);
        const matching = sendCtx('more', id);
        matching.params.configuration.ifGenerationMatch = 5;
        const done = await engine.send(matching);
        expect(!isA2AError(done) && 'task' in done && done.task.generation).toBe(8);
        expect(saved.slice(4)).toEqual(range(6, 8).map((g) => [g, g]));
      } finally {
        await engine.close();
        await store.close();
        remove();
      }
    });
  });
}

test('a task stored before generations existed reads as 1 and counts on from there', async () => {
  const root = tempDir();
  const store = LogTaskStore.open({ dir: join(root, 'tasks'), log: silentLog });
  const engine = engineOn(store, []);
  try {
    const id = crypto.randomUUID();
    const at = new Date().toISOString();
    const task = {
      id,
      contextId: 'old',
      status: { state: 'input-required' as const, timestamp: at },
      artifacts: [],
      history: [{ messageId: 'm0', role: 'user' as const, parts: [{ text: 'ask' }] }],
    };
    await store.save({ task, push: [], creator: 'anonymous' });
    const before = await engine.getTask(id, undefined, ANONYMOUS);
    expect(isA2AError(before) ? before : before.generation).toBeUndefined();
    const events = await streamed(engine, sendCtx('more', id));
    // The snapshot reads as 1 on the wire (lib/a2a/wire/v1.ts); the changes are 2, 3, 4.
    expect(events.map(eventGeneration)).toEqual([undefined, 2, 3, 4]);
  } finally {
    await engine.close();
    await store.close();
    rmSync(root, { recursive: true, force: true });
  }
});
