/**
 * One case table over every A2A binding of a node (JSON-RPC, HTTP+JSON and gRPC), in the manner of
 * Hono's router cases (`runTest({ newRouter })`): each case is an operation, its params and the
 * answer a client must get, whatever binding carries it. A binding is one adapter in
 * test/support/bindings.ts; the binding-specific details (HTTP statuses, JSON-RPC envelopes,
 * routes, status details) stay in their own suites (a2a-jsonrpc, a2a-rest, a2a-grpc).
 */

import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import type { Agent } from '../lib/a2a/agent.ts';
import {
  grpcAdapter,
  jsonRpcAdapter,
  restAdapter,
  type BindingAdapter,
} from './support/bindings.ts';
import { agentNode, startNode, type TestNode } from './support/node.ts';

setDefaultTimeout(20_000); // per file (Bun scopes it so): real servers are slow on a busy machine

/** "ask" asks for input first; anything else works, adds an artifact and completes. */
const agent: Agent = {
  handle(ctx) {
    if (ctx.text === 'ask' && !ctx.continued) return ctx.requireInput('which one?');
    ctx.working();
    ctx.artifact({ artifactId: 'a1', parts: [{ text: `answer to ${ctx.text}` }] });
    ctx.complete();
  },
};

let n = 0;
const message = (text: string, extra: Record<string, unknown> = {}) => ({
  message: { messageId: `case-${++n}`, role: 'ROLE_USER', parts: [{ text }], ...extra },
});

/** The cases, each run once per binding. */
function runBindingCases(newBinding: (node: TestNode) => BindingAdapter) {
  let node: TestNode;
  let b: BindingAdapter;
  beforeAll(async () => {
    node = await startNode(agentNode('cases', agent));
    b = newBinding(node);
  });
  afterAll(async () => {
    b?.close?.();
    await node?.dispose();
  });

  const task = async (text: string) => {
    const r = await b.call('SendMessage', message(text));
    if (!('result' in r)) throw new Error(`SendMessage failed: ${r.error}`);
    return r.result.task;
  };

  test('SendMessage answers the completed task with its artifact', async () => {
    const t = await task('q1');
    expect(t.status.state).toBe('TASK_STATE_COMPLETED');
    expect(t.artifacts).toEqual([{ artifactId: 'a1', parts: [{ text: 'answer to q1' }] }]);
  });

  test('GetTask honours historyLength; an unknown task is TaskNotFound', async () => {
    const t = await task('q2');
    const got = await b.call('GetTask', { id: t.id, historyLength: 1 });
    expect(got).toMatchObject({ result: { id: t.id, history: [{ parts: [{ text: 'q2' }] }] } });
    expect(await b.call('GetTask', { id: crypto.randomUUID() })).toEqual({
      error: 'TASK_NOT_FOUND',
    });
  });

  test('ListTasks lists the caller its tasks, newest first', async () => {
    const t = await task('q3');
    const r = await b.call('ListTasks', { pageSize: 1 });
    expect(r).toMatchObject({ result: { tasks: [{ id: t.id }], pageSize: 1 } });
  });

  test('CancelTask cancels an interrupted task and refuses a completed one', async () => {
    const asked = (await b.call('SendMessage', message('ask'))) as { result: any };
    expect(asked.result.task.status.state).toBe('TASK_STATE_INPUT_REQUIRED');
    const id = asked.result.task.id;
    expect(await b.call('CancelTask', { id }, { anonymous: true })).toEqual({
      error: 'UNAUTHENTICATED',
    });
    expect(await b.call('CancelTask', { id })).toMatchObject({
      result: { id, status: { state: 'TASK_STATE_CANCELED' } },
    });
    const done = await task('q4');
    expect(await b.call('CancelTask', { id: done.id })).toEqual({ error: 'TASK_NOT_CANCELABLE' });
  });

  test('a message continues its task; a terminal task takes none', async () => {
    const asked = (await b.call('SendMessage', message('ask'))) as { result: any };
    const { id, contextId } = asked.result.task;
    const cont = await b.call('SendMessage', message('it', { taskId: id }));
    expect(cont).toMatchObject({
      result: { task: { id, contextId, status: { state: 'TASK_STATE_COMPLETED' } } },
    });
    expect(await b.call('SendMessage', message('more', { taskId: id }))).toEqual({
      error: 'UNSUPPORTED_OPERATION',
    });
  });

  test('a part of a media type the agent does not take is ContentTypeNotSupported', async () => {
    const r = await b.call('SendMessage', {
      message: {
        messageId: `case-${++n}`,
        role: 'ROLE_USER',
        parts: [{ raw: 'AAAA', mediaType: 'image/png' }],
      },
    });
    expect(r).toEqual({ error: 'CONTENT_TYPE_NOT_SUPPORTED' });
  });

  test('push configs: create, get (with its token), list (without), delete twice', async () => {
    const t = await task('q5');
    const created = await b.call('CreateTaskPushNotificationConfig', {
      taskId: t.id,
      url: 'https://hooks.example/x',
      token: 'tok',
    });
    if (!('result' in created)) throw new Error(String(created.error));
    const cfgId = created.result.id;
    expect(created.result).toMatchObject({ taskId: t.id, url: 'https://hooks.example/x' });
    expect(
      await b.call('GetTaskPushNotificationConfig', { taskId: t.id, id: cfgId }),
    ).toMatchObject({ result: { id: cfgId, token: 'tok' } });
    const listed = (await b.call('ListTaskPushNotificationConfigs', { taskId: t.id })) as any;
    expect(listed.result.configs.map((c: any) => [c.id, c.token])).toEqual([[cfgId, undefined]]);
    for (let i = 0; i < 2; i++)
      expect(
        await b.call('DeleteTaskPushNotificationConfig', { taskId: t.id, id: cfgId }),
      ).toMatchObject({ result: null });
  });

  test('SendStreamingMessage streams the task, then each event, to the final state', async () => {
    const frames = await b.stream('SendStreamingMessage', message('q6'));
    expect(
      frames.map((f) =>
        f.task
          ? 'task'
          : f.statusUpdate
            ? `status ${f.statusUpdate.status.state}`
            : f.artifactUpdate
              ? 'artifact'
              : JSON.stringify(f),
      ),
    ).toEqual(['task', 'status TASK_STATE_WORKING', 'artifact', 'status TASK_STATE_COMPLETED']);
  });

  test('GetExtendedAgentCard: this agent has none', async () => {
    expect(await b.call('GetExtendedAgentCard', {})).toEqual({ error: 'UNSUPPORTED_OPERATION' });
  });
}

describe('JSON-RPC', () => runBindingCases((node) => jsonRpcAdapter(node.url)));
describe('HTTP+JSON', () => runBindingCases((node) => restAdapter(node.url)));
describe('gRPC', () => runBindingCases((node) => grpcAdapter(node)));
