/**
 * Idempotent SendMessage (A2A v1.1 epic #1987): a send retried with the same `messageId` by the
 * same caller answers the task the first one made and runs no second agent turn, on JSON-RPC,
 * HTTP+JSON and gRPC, for a new task, a continuation, a streamed send and a copy that arrives
 * while the first is still running; the same messageId with another message is
 * `MESSAGE_ID_REUSED`; another caller's same messageId is a send of its own. It holds after a
 * `kill -9` and a restart (the embedded retry book), and across two processes of one node on
 * PostgreSQL. All for callers that declare A2A 1.1; a 1.0 caller's every send runs.
 */

import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { Role, TaskState } from '@a2a-js/sdk';
import {
  ClientFactory,
  ClientFactoryOptions,
  createAuthenticatingFetchWithRetry,
  JsonRpcTransportFactory,
} from '@a2a-js/sdk/client';
import type { Agent } from '../lib/a2a/agent.ts';
import {
  grpcAdapter,
  jsonRpcAdapter,
  restAdapter,
  type Answer,
  type BindingAdapter,
} from './support/bindings.ts';
import { agentNode, gate, rpc, startNode, TEST_AUTH, type TestNode } from './support/node.ts';
import { startNodeProcess, type NodeProcess } from './support/node-process.ts';
import { type FilePostgres, sharedPostgres } from './support/postgres.ts';
import { waitFor } from './support/processes.ts';

setDefaultTimeout(30_000); // per file (Bun scopes it so): real servers and processes on a busy machine

let turns = 0;
let held = gate();
/** `ask` asks for input; a continuation completes; `hold` waits for the test's gate, then completes. */
const agent: Agent = {
  async handle(ctx) {
    turns++;
    if (ctx.continued) return ctx.complete();
    const text = ctx.message.parts.find((p) => 'text' in p)?.text;
    if (text === 'hold') {
      await held.promise;
      return ctx.complete();
    }
    ctx.requireInput('and then?');
  },
};

const msg = (messageId: string, text: string, taskId?: string) => ({
  message: { messageId, role: 'ROLE_USER', parts: [{ text }], ...(taskId ? { taskId } : {}) },
});

const resultOf = (a: Answer): any => {
  if (!('result' in a)) throw new Error(`refused: ${a.error}`);
  return a.result;
};

function runRetryCases(newBinding: (node: TestNode) => BindingAdapter) {
  let node: TestNode;
  let b: BindingAdapter;
  beforeAll(async () => {
    node = await startNode(agentNode('retries', agent));
    b = newBinding(node);
  });
  afterAll(async () => {
    b?.close?.();
    await node?.dispose();
  });

  test('a retried send answers the first task and runs no turn; another message is MESSAGE_ID_REUSED', async () => {
    const id = crypto.randomUUID();
    const first = resultOf(await b.call('SendMessage', msg(id, 'ask'))).task;
    const before = turns;
    const again = resultOf(await b.call('SendMessage', msg(id, 'ask'))).task;
    expect([again.id, again.status.state, turns]).toEqual([first.id, first.status.state, before]);
    expect(await b.call('SendMessage', msg(id, 'ask something else'))).toEqual({
      error: 'MESSAGE_ID_REUSED',
    });
    expect(turns).toBe(before);
  });

  test('another caller with the same messageId gets a task of its own and never sees the first', async () => {
    const id = crypto.randomUUID();
    const mine = resultOf(await b.call('SendMessage', msg(id, 'ask'))).task;
    const theirs = resultOf(
      await b.call('SendMessage', msg(id, 'ask something else'), { anonymous: true }),
    ).task;
    expect(theirs.id).not.toBe(mine.id);
    expect(await b.call('GetTask', { id: mine.id }, { anonymous: true })).toEqual({
      error: 'TASK_NOT_FOUND',
    });
  });

  test('a retried continuation answers the task as it is, with no second turn', async () => {
    const t = resultOf(await b.call('SendMessage', msg(crypto.randomUUID(), 'ask'))).task;
    const next = crypto.randomUUID();
    const done = resultOf(await b.call('SendMessage', msg(next, 'more', t.id))).task;
    expect(done.status.state).toBe('TASK_STATE_COMPLETED');
    const before = turns;
    const again = resultOf(await b.call('SendMessage', msg(next, 'more', t.id))).task;
    expect([again.id, again.status.state, again.history.length, turns]).toEqual([
      t.id,
      'TASK_STATE_COMPLETED',
      done.history.length,
      before,
    ]);
    expect(await b.call('SendMessage', msg(next, 'other', t.id))).toEqual({
      error: 'MESSAGE_ID_REUSED',
    });
  });

  test('a retried stream is one frame, the task as it stands; the first stream’s task', async () => {
    const id = crypto.randomUUID();
    const first = await b.stream('SendStreamingMessage', msg(id, 'ask'));
    const taskId = first[0].task.id;
    const before = turns;
    const again = await b.stream('SendStreamingMessage', msg(id, 'ask'));
    expect(again).toHaveLength(1);
    expect([again[0].task.id, again[0].task.status.state, turns]).toEqual([
      taskId,
      'TASK_STATE_INPUT_REQUIRED',
      before,
    ]);
  });

  test('a copy that arrives while the first still runs answers its task; one turn in all', async () => {
    held = gate();
    const id = crypto.randomUUID();
    const before = turns;
    const first = b.call('SendMessage', msg(id, 'hold'));
    // The first holds its turn until the gate opens; the copy cannot wait for it.
    await waitFor('the first turn running', () => turns === before + 1);
    const copy = resultOf(await b.call('SendMessage', msg(id, 'hold'))).task;
    expect(['TASK_STATE_SUBMITTED', 'TASK_STATE_WORKING']).toContain(copy.status.state);
    held.open();
    const done = resultOf(await first).task;
    expect([done.id, done.status.state, turns - before]).toEqual([
      copy.id,
      'TASK_STATE_COMPLETED',
      1,
    ]);
  });
}

describe('JSON-RPC', () => runRetryCases((node) => jsonRpcAdapter(node.url, '1.1')));
describe('HTTP+JSON', () => runRetryCases((node) => restAdapter(node.url, '1.1')));
describe('gRPC', () => runRetryCases((node) => grpcAdapter(node, '1.1')));

/** A 1.0 caller (the 1.0 conformance kit reuses a messageId for different messages): each send runs. */
describe('a caller that declares A2A 1.0', () => {
  let node: TestNode;
  beforeAll(async () => {
    node = await startNode(agentNode('retries-v10', agent));
  });
  afterAll(async () => {
    await node?.dispose();
  });

  for (const [name, adapter] of [
    ['JSON-RPC', (n: TestNode) => jsonRpcAdapter(n.url, '1.0')],
    ['HTTP+JSON', (n: TestNode) => restAdapter(n.url, '1.0')],
    ['gRPC', (n: TestNode) => grpcAdapter(n, '1.0')],
  ] as const) {
    test(`${name}: the same messageId twice is two sends, two tasks, two turns`, async () => {
      const b = adapter(node);
      try {
        const id = crypto.randomUUID();
        const before = turns;
        const one = resultOf(await b.call('SendMessage', msg(id, 'ask'))).task;
        const two = resultOf(await b.call('SendMessage', msg(id, 'ask something else'))).task;
        expect([two.id === one.id, turns - before]).toEqual([false, 2]);
      } finally {
        b.close?.();
      }
    });
  }
});

describe('the coded refusal on each binding', () => {
  let node: TestNode;
  beforeAll(async () => {
    node = await startNode(agentNode('retries-codes', agent));
  });
  afterAll(async () => {
    await node?.dispose();
  });

  test('JSON-RPC -32000 with reason MESSAGE_ID_REUSED; HTTP+JSON 409 ALREADY_EXISTS', async () => {
    const id = crypto.randomUUID();
    await rpc(node.url, 'SendMessage', msg(id, 'ask'), '1.1');
    const j = await rpc(node.url, 'SendMessage', msg(id, 'other'), '1.1');
    expect(j.error.code).toBe(-32000);
    expect(j.error.data[0]).toMatchObject({ reason: 'MESSAGE_ID_REUSED', domain: 'lume-a2a' });
    const res = await fetch(`${node.url}/message:send`, {
      method: 'POST',
      headers: { ...TEST_AUTH, 'content-type': 'application/json', 'A2A-Version': '1.1' },
      body: JSON.stringify(msg(id, 'other')),
    });
    const body = (await res.json()) as any;
    expect([res.status, body.error.status, body.error.details[0].reason]).toEqual([
      409,
      'ALREADY_EXISTS',
      'MESSAGE_ID_REUSED',
    ]);
  });
});

const tasksOf = async (url: string) =>
  (await rpc(url, 'ListTasks', { pageSize: 100 })).result.tasks.map((t: any) => t.id);

test('after kill -9 and a restart, a retry answers the task the first send made', async () => {
  const first = await startNodeProcess();
  let second: NodeProcess | undefined;
  try {
    const id = `tck-complete-task-${crypto.randomUUID()}`;
    const t = (await rpc(first.url, 'SendMessage', msg(id, 'hello'), '1.1')).result.task;
    expect(t.status.state).toBe('TASK_STATE_COMPLETED');
    await first.kill();
    second = await startNodeProcess({}, first.dataDir);
    const again = (await rpc(second.url, 'SendMessage', msg(id, 'hello'), '1.1')).result.task;
    expect([again.id, again.status.state]).toEqual([t.id, 'TASK_STATE_COMPLETED']);
    expect(await tasksOf(second.url)).toEqual([t.id]);
    const other = await rpc(second.url, 'SendMessage', msg(id, 'goodbye'), '1.1');
    expect(other.error.data[0].reason).toBe('MESSAGE_ID_REUSED');
  } finally {
    await (second ?? first).stop();
  }
});

describe('two processes on one PostgreSQL', () => {
  let pg: FilePostgres;
  let a: NodeProcess;
  let b: NodeProcess;
  beforeAll(async () => {
    pg = await sharedPostgres();
    const url = await pg.createDatabase('retries');
    [a, b] = await Promise.all([
      startNodeProcess({ TASKS_DATABASE_URL: url }),
      startNodeProcess({ TASKS_DATABASE_URL: url }),
    ]);
  }, 60_000);
  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    await pg?.release();
  });

  test('a send on A retried on B answers A’s task; another message on B is refused', async () => {
    const id = `tck-complete-task-${crypto.randomUUID()}`;
    const t = (await rpc(a.url, 'SendMessage', msg(id, 'hello'), '1.1')).result.task;
    const again = (await rpc(b.url, 'SendMessage', msg(id, 'hello'), '1.1')).result.task;
    expect([again.id, again.status.state]).toEqual([t.id, 'TASK_STATE_COMPLETED']);
    expect(await tasksOf(b.url)).toEqual([t.id]);
    const other = await rpc(b.url, 'SendMessage', msg(id, 'goodbye'), '1.1');
    expect(other.error.data[0].reason).toBe('MESSAGE_ID_REUSED');
  });
});

test('the official SDK client, declaring 1.1, sending one message twice gets one task, one turn', async () => {
  const node = await startNode(agentNode('retries-sdk', agent));
  try {
    // The SDK speaks 1.0, whose sends each run; a caller opts in to idempotent sends with 1.1.
    const as11 = ((input: RequestInfo | URL, init?: RequestInit) => {
      const headers = new Headers(init?.headers);
      headers.set('A2A-Version', '1.1');
      return fetch(input, { ...init, headers });
    }) as typeof fetch;
    const fetchImpl = createAuthenticatingFetchWithRetry(as11, {
      headers: async () => TEST_AUTH,
      shouldRetryWithHeaders: async () => undefined,
    });
    const client = await new ClientFactory(
      ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
        transports: [new JsonRpcTransportFactory({ fetchImpl })],
      }),
    ).createFromUrl(node.url);
    const message = {
      messageId: crypto.randomUUID(),
      role: Role.ROLE_USER,
      parts: [{ content: { $case: 'text', value: 'ask' }, filename: '', mediaType: 'text/plain' }],
      contextId: '',
      taskId: '',
      extensions: [],
      referenceTaskIds: [],
      metadata: undefined,
    };
    const before = turns;
    const first: any = await client.sendMessage({ message } as any);
    const again: any = await client.sendMessage({ message } as any);
    expect([again.id, again.status.state, turns - before]).toEqual([
      first.id,
      TaskState.TASK_STATE_INPUT_REQUIRED,
      1,
    ]);
  } finally {
    await node.dispose();
  }
});
