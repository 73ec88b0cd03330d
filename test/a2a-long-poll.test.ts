/**
 * A2A 1.1's long-poll (the dev-1.1 branch §3.2.7): `GetTask` with `currentGeneration` answers at
 * once when the task's generation already passed it (or the task is terminal), is held until a
 * change passes it otherwise, and answers the task as it is when the bounded wait ends. Held reads
 * are bounded per principal (`TOO_MANY_LONG_POLLS`) and per process (`LONG_POLLS_FULL`), on
 * JSON-RPC, HTTP+JSON (`?currentGeneration=`) and gRPC (GetTaskRequest field 4), against real
 * servers on port 0. Ten thousand held reads cost a bounded, small amount of memory and all answer
 * at the change; a read without the member is the 1.0 GetTask (the official SDK client's).
 */

import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import {
  ClientFactory,
  ClientFactoryOptions,
  createAuthenticatingFetchWithRetry,
  JsonRpcTransportFactory,
} from '@a2a-js/sdk/client';
import type { Agent } from '../lib/a2a/agent.ts';
import { TaskEngine } from '../lib/a2a/engine/engine.ts';
import { isA2AError } from '../lib/a2a/errors.ts';
import { LogTaskStore } from '../lib/a2a/store/log-store.ts';
import { ANONYMOUS } from '../lib/auth/principal.ts';
import { silentLog } from '../lib/log.ts';
import {
  grpcAdapter,
  jsonRpcAdapter,
  restAdapter,
  type Answer,
  type BindingAdapter,
} from './support/bindings.ts';
import { agentNode, startNode, tempDir, TEST_AUTH, type TestNode } from './support/node.ts';
import { startNodeProcess, type NodeProcess } from './support/node-process.ts';
import { type FilePostgres, sharedPostgres } from './support/postgres.ts';
import { waitFor } from './support/processes.ts';

setDefaultTimeout(30_000); // per file (Bun scopes it so): real servers on a busy machine

/** `park` asks for input (generation 2); a continuation completes the task (3, 4). */
const agent: Agent = {
  handle(ctx) {
    if (ctx.continued) {
      ctx.working();
      return ctx.complete();
    }
    ctx.requireInput('go on?');
  },
};

let n = 0;
const message = (text: string, taskId?: string) => ({
  message: {
    messageId: `poll-${++n}`,
    role: 'ROLE_USER',
    parts: [{ text }],
    ...(taskId ? { taskId } : {}),
  },
});

const resultOf = (a: Answer): any => {
  if (!('result' in a)) throw new Error(`refused: ${a.error}`);
  return a.result;
};

function runLongPollCases(newBinding: (node: TestNode) => BindingAdapter) {
  let node: TestNode;
  let short: TestNode;
  let b: BindingAdapter;
  let s: BindingAdapter;
  beforeAll(async () => {
    // A wait longer than the test's timeout: a read that is held when it should not be fails.
    node = await startNode(agentNode('long-poll', agent), {
      limits: { longPollMs: 60_000, longPollsPerPrincipal: 2 },
    });
    short = await startNode(agentNode('long-poll-short', agent), {
      limits: { longPollMs: 300, longPolls: 1 },
    });
    b = newBinding(node);
    s = newBinding(short);
  });
  afterAll(async () => {
    b?.close?.();
    s?.close?.();
    await Promise.all([node?.dispose(), short?.dispose()]);
  });
  const parked = (t: TestNode, count: number) =>
    waitFor(`${count} long-polls held`, () => t.node.engine.longPollsHeld === count);

  test('a generation already passed, or a terminal task, answers at once', async () => {
    const t = resultOf(await b.call('SendMessage', message('park'))).task;
    expect(t.generation).toBe('2');
    const read = resultOf(await b.call('GetTask', { id: t.id, currentGeneration: '1' }));
    expect([read.generation, read.status.state]).toEqual(['2', 'TASK_STATE_INPUT_REQUIRED']);
    resultOf(await b.call('CancelTask', { id: t.id }));
    const done = resultOf(await b.call('GetTask', { id: t.id, currentGeneration: '3' }));
    expect([done.generation, done.status.state]).toEqual(['3', 'TASK_STATE_CANCELED']);
  });

  test('held until a change passes it: a continuation, then a cancel', async () => {
    const t = resultOf(await b.call('SendMessage', message('park'))).task;
    const first = b.call('GetTask', { id: t.id, currentGeneration: '2' });
    const second = b.call('GetTask', { id: t.id, currentGeneration: '2', historyLength: 1 });
    await parked(node, 2);
    // Past this caller's bound: refused at once, nothing held.
    expect(await b.call('GetTask', { id: t.id, currentGeneration: '2' })).toEqual({
      error: 'TOO_MANY_LONG_POLLS',
    });
    const done = resultOf(await b.call('SendMessage', message('more', t.id))).task;
    expect(done.generation).toBe('4');
    const [r1, r2] = (await Promise.all([first, second])).map(resultOf);
    // Each answers a stored state past 2; the last change's save may land after the first wake.
    for (const r of [r1, r2]) expect(Number(r.generation)).toBeGreaterThan(2);
    expect(r2.history).toHaveLength(1);
    expect(node.node.engine.longPollsHeld).toBe(0);
  });

  test('the wait ends with the task as it is; past the process bound LONG_POLLS_FULL', async () => {
    const t = resultOf(await s.call('SendMessage', message('park'))).task;
    const began = performance.now();
    const held = s.call('GetTask', { id: t.id, currentGeneration: '2' });
    await parked(short, 1);
    expect(await s.call('GetTask', { id: t.id, currentGeneration: '99' })).toEqual({
      error: 'LONG_POLLS_FULL',
    });
    const r = resultOf(await held);
    expect(performance.now() - began).toBeGreaterThanOrEqual(290);
    expect([r.generation, r.status.state]).toEqual(['2', 'TASK_STATE_INPUT_REQUIRED']);
    expect(short.node.engine.longPollsHeld).toBe(0);
  });

  test('a malformed currentGeneration is INVALID_PARAMS; an unknown task TASK_NOT_FOUND', async () => {
    const t = resultOf(await b.call('SendMessage', message('park'))).task;
    if (b.name !== 'gRPC')
      for (const bad of ['-1', 'x', '1.5'])
        expect(await b.call('GetTask', { id: t.id, currentGeneration: bad })).toMatchObject({
          error: expect.stringContaining('INVALID_PARAMS'),
        });
    expect(
      await b.call('GetTask', { id: crypto.randomUUID(), currentGeneration: '1' }),
    ).toMatchObject({ error: 'TASK_NOT_FOUND' });
  });
}

describe('JSON-RPC', () => runLongPollCases((node) => jsonRpcAdapter(node.url, '1.1')));
describe('HTTP+JSON', () => runLongPollCases((node) => restAdapter(node.url, '1.1')));
describe('gRPC', () => runLongPollCases((node) => grpcAdapter(node)));

describe('bounds and codes', () => {
  let node: TestNode;
  beforeAll(async () => {
    node = await startNode(agentNode('long-poll-codes', agent), {
      limits: { longPollMs: 60_000, longPollsPerPrincipal: 1 },
    });
  });
  afterAll(async () => {
    await node?.dispose();
  });

  test('TOO_MANY_LONG_POLLS is 429 with Retry-After over HTTP+JSON, -32000 over JSON-RPC', async () => {
    const b = restAdapter(node.url, '1.1');
    const t = resultOf(await b.call('SendMessage', message('park'))).task;
    const held = b.call('GetTask', { id: t.id, currentGeneration: '2' });
    await waitFor('held', () => node.node.engine.longPollsHeld === 1);
    const res = await fetch(`${node.url}/tasks/${t.id}?currentGeneration=2`, {
      headers: { ...TEST_AUTH, 'A2A-Version': '1.0' },
    });
    const body = (await res.json()) as any;
    expect([res.status, res.headers.get('retry-after'), body.error.status]).toEqual([
      429,
      '5',
      'RESOURCE_EXHAUSTED',
    ]);
    expect(body.error.details[0]).toMatchObject({
      reason: 'TOO_MANY_LONG_POLLS',
      domain: 'lume-a2a',
    });
    const rpcRes = await fetch(`${node.url}/a2a`, {
      method: 'POST',
      headers: { ...TEST_AUTH, 'content-type': 'application/json', 'A2A-Version': '1.0' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'GetTask',
        params: { id: t.id, currentGeneration: 2 },
      }),
    });
    expect(((await rpcRes.json()) as any).error.code).toBe(-32000);
    const metrics = await (await fetch(`${node.url}/metrics`, { headers: TEST_AUTH })).text();
    expect(metrics).toContain('lume_a2a_long_polls 1');
    resultOf(await b.call('CancelTask', { id: t.id }));
    expect(resultOf(await held).status.state).toBe('TASK_STATE_CANCELED');
  });

  test('the official SDK client (1.0, no currentGeneration) reads at once, in the 1.0 form', async () => {
    const b = jsonRpcAdapter(node.url);
    const t = resultOf(await b.call('SendMessage', message('park'))).task;
    const fetchImpl = createAuthenticatingFetchWithRetry(fetch, {
      headers: async () => TEST_AUTH,
      shouldRetryWithHeaders: async () => undefined,
    });
    const client = await new ClientFactory(
      ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
        transports: [new JsonRpcTransportFactory({ fetchImpl })],
      }),
    ).createFromUrl(node.url);
    const read: any = await client.getTask({ id: t.id } as any);
    expect([read.id, read.generation ?? 0]).toEqual([t.id, 0]);
  });
});

test('ten thousand held reads: bounded memory, all answer at the change, nothing left behind', async () => {
  const root = tempDir();
  const store = LogTaskStore.open({ dir: join(root, 'tasks'), log: silentLog });
  const engine = new TaskEngine({
    store,
    agent,
    log: silentLog,
    inputModes: ['text/plain'],
    outputModes: ['text/plain'],
    longPolls: { waitMs: 60_000, max: 10_000, perPrincipal: 10_000 },
    mayAct: () => true,
  });
  try {
    const ids: string[] = [];
    for (let i = 0; i < 100; i++) {
      const r = await engine.send({
        params: {
          message: { messageId: `m-${i}`, role: 'user', parts: [{ text: 'park' }] },
          configuration: { returnImmediately: false },
        },
        version: '1.0',
        caller: ANONYMOUS,
      });
      if (isA2AError(r) || !('task' in r)) throw new Error('no task');
      ids.push(r.task.id);
    }
    Bun.gc(true);
    const before = process.memoryUsage().heapUsed;
    const reads = Array.from({ length: 10_000 }, (_, i) =>
      engine.getTask(ids[i % 100]!, 0, ANONYMOUS, 2),
    );
    await waitFor('10,000 held', () => engine.longPollsHeld === 10_000);
    Bun.gc(true);
    const grown = process.memoryUsage().heapUsed - before;
    const refused = await engine.getTask(ids[0]!, 0, ANONYMOUS, 2);
    expect(isA2AError(refused) && refused.code).toBe('LONG_POLLS_FULL');
    // A held read is a waiter, a timer and its pending call: a few KiB at most (measured ~1.1 KiB).
    expect(grown / 10_000).toBeLessThan(4096);
    console.log(`10,000 held long-polls: ${(grown / 1024 / 1024).toFixed(1)} MiB of heap`);
    for (const id of ids) await engine.cancel(id, ANONYMOUS);
    const answers = await Promise.all(reads);
    expect(answers.every((a) => !isA2AError(a) && a.generation === 3)).toBe(true);
    expect(engine.longPollsHeld).toBe(0);
  } finally {
    await engine.close();
    await store.close();
    rmSync(root, { recursive: true, force: true });
  }
});

describe('two processes on one PostgreSQL', () => {
  let pg: FilePostgres;
  let a: NodeProcess;
  let b: NodeProcess;
  beforeAll(async () => {
    pg = await sharedPostgres();
    const url = await pg.createDatabase('long_poll');
    [a, b] = await Promise.all([
      startNodeProcess({ TASKS_DATABASE_URL: url }),
      startNodeProcess({ TASKS_DATABASE_URL: url }),
    ]);
  }, 60_000);
  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    await pg?.release();
  });
  const heldOn = async (p: NodeProcess) =>
    /lume_a2a_long_polls (\d+)/.exec(
      await (await fetch(`${p.url}/metrics`, { headers: TEST_AUTH })).text(),
    )?.[1];

  test('a read held on B answers when A continues the task, and again when A cancels another', async () => {
    const onA = jsonRpcAdapter(a.url, '1.1');
    const onB = jsonRpcAdapter(b.url, '1.1');
    const send = (text: string, taskId?: string) => ({
      message: {
        messageId: `${text}-${crypto.randomUUID()}`,
        role: 'ROLE_USER',
        parts: [{ text: 'hello' }],
        ...(taskId ? { taskId } : {}),
      },
    });
    const t = resultOf(await onA.call('SendMessage', send('tck-input-required'))).task;
    const g = t.generation;
    const held = onB.call('GetTask', { id: t.id, currentGeneration: g });
    await waitFor('held on B', async () => (await heldOn(b)) === '1');
    const done = resultOf(await onA.call('SendMessage', send('tck-complete-task', t.id))).task;
    expect(done.status.state).toBe('TASK_STATE_COMPLETED');
    const r = resultOf(await held);
    expect(Number(r.generation)).toBeGreaterThan(Number(g));

    const u = resultOf(await onA.call('SendMessage', send('tck-input-required'))).task;
    const again = onB.call('GetTask', { id: u.id, currentGeneration: u.generation });
    await waitFor('held on B', async () => (await heldOn(b)) === '1');
    resultOf(await onA.call('CancelTask', { id: u.id }));
    const c = resultOf(await again);
    expect([c.status.state, Number(c.generation)]).toEqual([
      'TASK_STATE_CANCELED',
      Number(u.generation) + 1,
    ]);
    expect(await heldOn(b)).toBe('0');
  });
});

test('a held read advances a task its agent advances on read (observe), once per task however many wait', async () => {
  const root = tempDir();
  const store = LogTaskStore.open({ dir: join(root, 'tasks'), log: silentLog });
  let observed = 0;
  const engine = new TaskEngine({
    store,
    agent: {
      handle: (ctx) => ctx.working(),
      observe(task) {
        if (++observed >= 3) task.complete();
      },
    },
    log: silentLog,
    inputModes: ['text/plain'],
    outputModes: ['text/plain'],
    longPolls: { waitMs: 60_000, max: 100, perPrincipal: 100 },
    observeWatchedEveryMs: 20,
  });
  try {
    const r = await engine.send({
      params: {
        message: { messageId: 'observed', role: 'user', parts: [{ text: 'go' }] },
        configuration: { returnImmediately: false },
      },
      version: '1.0',
      caller: ANONYMOUS,
    });
    if (isA2AError(r) || !('task' in r)) throw new Error('no task');
    const g = r.task.generation!;
    const reads = Array.from({ length: 50 }, () => engine.getTask(r.task.id, 0, ANONYMOUS, g));
    const answers = await Promise.all(reads);
    expect(answers.every((a) => !isA2AError(a) && a.status.state === 'completed')).toBe(true);
    // 50 reads' own observations at their start, then one loop for the task, not fifty.
    expect(observed).toBeLessThan(50 + 5);
  } finally {
    await engine.close();
    await store.close();
    rmSync(root, { recursive: true, force: true });
  }
});
