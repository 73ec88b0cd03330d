/**
 * Real streaming: each event reaches the client when the agent produces it (the test steps the
 * agent and reads between steps), every concurrent subscriber gets the same ordered events,
 * closing one stream leaves the others and the task alone, and streams end on terminal or
 * interrupted states.
 */

import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import conformance from '../node/conformance.ts';
import {
  agentNode,
  collect,
  gate,
  msgV03,
  msgV1,
  rpc,
  sseFrames,
  startNode,
  streamRpc,
  type TestNode,
} from './support/node.ts';

setDefaultTimeout(20_000); // per file (Bun scopes it so): real servers and processes are slow on a busy machine

/** An agent the test releases one step at a time. */
function steppedAgent() {
  const steps = [gate(), gate(), gate()];
  return {
    steps,
    agent: {
      async handle(ctx: any) {
        ctx.working('step 1');
        await steps[0]!.promise;
        ctx.artifact({ artifactId: 'a1', name: 'progress', parts: [{ text: 'half' }] });
        await steps[1]!.promise;
        ctx.artifact(
          { artifactId: 'a1', name: 'progress', parts: [{ text: ' and the rest' }] },
          { append: true, lastChunk: true },
        );
        await steps[2]!.promise;
        ctx.complete('finished');
      },
    },
  };
}

const kind = (f: any) =>
  Object.keys(f.result)[0] +
  (f.result.statusUpdate ? `:${f.result.statusUpdate.status.state}` : '');

let tck: TestNode;
beforeAll(async () => {
  tck = await startNode(conformance());
});
afterAll(() => tck.dispose());

describe('SendStreamingMessage', () => {
  test('each event arrives as the agent produces it, not at the end', async () => {
    const { steps, agent } = steppedAgent();
    const n = await startNode(agentNode('stepped', agent));
    try {
      const frames = sseFrames(
        await streamRpc(n.url, 'SendStreamingMessage', { message: msgV1('go') }),
      );
      const next = async () => kind((await frames.next()).value);
      // The agent is parked before step 1: the client already holds the task and `working`.
      expect(await next()).toBe('task');
      expect(await next()).toBe('statusUpdate:TASK_STATE_WORKING');
      steps[0]!.open();
      expect(await next()).toBe('artifactUpdate');
      steps[1]!.open();
      expect(await next()).toBe('artifactUpdate');
      steps[2]!.open();
      expect(await next()).toBe('statusUpdate:TASK_STATE_COMPLETED');
      expect((await frames.next()).done).toBe(true);
    } finally {
      await n.dispose();
    }
  });

  test('concurrent subscribers get identical ordered events; closing one affects no other', async () => {
    const { steps, agent } = steppedAgent();
    const n = await startNode(agentNode('fanout', agent));
    try {
      const origin = sseFrames(
        await streamRpc(n.url, 'SendStreamingMessage', { message: msgV1('go') }),
      );
      const first = (await origin.next()).value.result.task;
      const subscribers = await Promise.all(
        [1, 2, 3].map(() => streamRpc(n.url, 'SubscribeToTask', { id: first.id })),
      );
      const quitter = new AbortController();
      const quitterRes = await streamRpc(
        n.url,
        'SubscribeToTask',
        { id: first.id },
        '1.0',
        quitter.signal,
      );
      const quitterFrames = sseFrames(quitterRes);
      expect(kind((await quitterFrames.next()).value)).toBe('task');
      quitter.abort();
      const all = Promise.all(subscribers.map(collect));
      for (const s of steps) s.open();
      const results = await all;
      const sequences = results.map((frames) => frames.map((f) => JSON.stringify(f.result)));
      expect(sequences[1]).toEqual(sequences[0]!);
      expect(sequences[2]).toEqual(sequences[0]!);
      expect(results[0]!.map(kind).slice(1)).toEqual([
        'artifactUpdate',
        'artifactUpdate',
        'statusUpdate:TASK_STATE_COMPLETED',
      ]);
      // The first frame of a subscription is the task as it stood.
      expect(results[0]![0].result.task.id).toBe(first.id);
      const originRest: string[] = [];
      for await (const f of origin) originRest.push(kind(f));
      expect(originRest).toEqual([
        'statusUpdate:TASK_STATE_WORKING',
        'artifactUpdate',
        'artifactUpdate',
        'statusUpdate:TASK_STATE_COMPLETED',
      ]);
      expect(
        (await rpc(n.url, 'GetTask', { id: first.id })).result.artifacts[0].parts.map(
          (p: any) => p.text,
        ),
      ).toEqual(['half', ' and the rest']);
    } finally {
      await n.dispose();
    }
  });

  test('a stream ends at an interrupted state; continuing reopens with the task first', async () => {
    const frames = await collect(
      await streamRpc(tck.url, 'SendStreamingMessage', {
        message: msgV1('x', { messageId: 'tck-input-required-s' }),
      }),
    );
    expect(frames.map(kind)).toEqual(['task', 'statusUpdate:TASK_STATE_INPUT_REQUIRED']);
    const id = frames[0].result.task.id;
    const more = await collect(
      await streamRpc(tck.url, 'SendStreamingMessage', { message: msgV1('more', { taskId: id }) }),
    );
    expect(more.map(kind)).toEqual(['task', 'statusUpdate:TASK_STATE_COMPLETED']);
    expect(more[0].result.task.history.at(-1).parts[0].text).toBe('more');
  });

  test('a message answer is one frame, then the stream closes', async () => {
    const frames = await collect(
      await streamRpc(tck.url, 'SendStreamingMessage', {
        message: msgV1('x', { messageId: 'tck-message-response-s' }),
      }),
    );
    expect(frames.map((f) => Object.keys(f.result))).toEqual([['message']]);
    expect(frames[0].result.message.role).toBe('ROLE_AGENT');
  });

  test('v0.3 marks the last event final', async () => {
    const frames = await collect(
      await streamRpc(
        tck.url,
        'message/stream',
        { message: msgV03('x', { messageId: 'tck-stream-002-s' }) },
        '0.3',
      ),
    );
    expect(frames.map((f) => [f.result.kind, f.result.final])).toEqual([
      ['task', undefined],
      ['status-update', true],
    ]);
  });
});

describe('SubscribeToTask', () => {
  test('terminal tasks get -32004 as plain JSON; a v0.3 resubscribe to an unknown task gets -32001 as an SSE error event', async () => {
    const done = (
      await rpc(tck.url, 'SendMessage', {
        message: msgV1('x', { messageId: 'tck-complete-task-s' }),
      })
    ).result.task;
    const res = await streamRpc(tck.url, 'SubscribeToTask', { id: done.id });
    expect(res.headers.get('content-type')).toContain('application/json');
    expect((await res.json()).error.code).toBe(-32004);
    const id = crypto.randomUUID();
    const unknown = await streamRpc(tck.url, 'tasks/resubscribe', { id }, '0.3');
    expect(unknown.headers.get('content-type')).toBe('text/event-stream');
    const text = await unknown.text();
    expect(text.startsWith('event: error\ndata: ')).toBe(true);
    const body = JSON.parse(text.slice('event: error\ndata: '.length));
    expect([body.jsonrpc, body.error.code, body.error.message]).toEqual([
      '2.0',
      -32001,
      `Task not found: ${id}`,
    ]);
    const v1Unknown = await streamRpc(tck.url, 'SubscribeToTask', { id });
    expect((await v1Unknown.json()).error.code).toBe(-32001);
  });

  test('a subscriber to an interrupted task sees it end when it is canceled', async () => {
    const t = (
      await rpc(tck.url, 'SendMessage', {
        message: msgV1('x', { messageId: 'tck-input-required-sub' }),
      })
    ).result.task;
    const frames = sseFrames(await streamRpc(tck.url, 'SubscribeToTask', { id: t.id }));
    expect(kind((await frames.next()).value)).toBe('task');
    await rpc(tck.url, 'CancelTask', { id: t.id });
    expect(kind((await frames.next()).value)).toBe('statusUpdate:TASK_STATE_CANCELED');
    expect((await frames.next()).done).toBe(true);
  });
});
