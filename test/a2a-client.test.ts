/**
 * The package's A2A client (`lume-a2a/client`) against a real node in both wire versions, and
 * against a server that answers wrongly in every way a node that is down, slow or broken can:
 * each outcome is a value with a stable code, and a stream always ends with one item that says
 * why.
 */

import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { createA2AClient, type StreamItem } from '../lib/kit/client.ts';
import { capability, defineNode, fail } from '../lib/kit/node.ts';
import { startNode, TEST_AUTH, type TestNode } from './support/node.ts';

setDefaultTimeout(20_000); // per file (Bun scopes it so): real servers and processes are slow on a busy machine

const TEMPERATURES: Record<string, number> = { oslo: 4, lima: 19 };

const weather = defineNode(() => ({
  name: 'weather',
  description: 'Temperature of a few cities',
  capabilities: [
    capability({
      id: 'weather.now',
      name: 'Weather now',
      description: 'The temperature of one city',
      tags: ['weather'],
      keywords: ['weather', 'temperature'],
      readOnly: true,
      args: { city: { type: 'string', description: 'A city name' } },
      run: ({ city = 'oslo' }) => {
        const celsius = TEMPERATURES[city];
        if (celsius === undefined) return fail('UNKNOWN_CITY', `no weather for ${city}`, 'city');
        return { city, celsius };
      },
    }),
  ],
}));

/** A server whose answer to each path is written by the test; `/hang` never answers. */
function wrongServer() {
  const pending: Array<() => void> = [];
  const server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    fetch(req) {
      const path = new URL(req.url).pathname;
      const sse = (body: string) =>
        new Response(body, { headers: { 'content-type': 'text/event-stream' } });
      switch (path) {
        case '/html/a2a':
          return new Response('<h1>gateway</h1>', { status: 502 });
        case '/not-rpc/a2a':
          return Response.json({ hello: 'world' });
        case '/huge/a2a':
          return new Response('x'.repeat(4096));
        case '/rpc-error/a2a':
          return Response.json({ jsonrpc: '2.0', id: 1, error: { code: -32001, message: 'gone' } });
        case '/odd-error/a2a':
          return Response.json({ jsonrpc: '2.0', id: 1, error: { code: 7 } });
        case '/bad-task/a2a':
          return Response.json({ jsonrpc: '2.0', id: 1, result: { task: { id: 42 } } });
        case '/frame-not-json/a2a':
          return sse('data: {nope\n\n');
        case '/frame-error/a2a':
          return sse(`data: ${JSON.stringify({ error: { code: -32001, message: 'gone' } })}\n\n`);
        case '/frame-huge/a2a':
          return sse(`data: ${'y'.repeat(4096)}`);
        case '/frame-unfinished/a2a':
          return sse('');
        case '/card-array/.well-known/agent-card.json':
          return Response.json([1, 2]);
        case '/hang/a2a':
          return new Promise<Response>((resolve) => pending.push(() => resolve(new Response())));
        default:
          return new Response('not found', { status: 404 });
      }
    },
  });
  return {
    url: (path: string) => `http://127.0.0.1:${server.port}/${path}`,
    stop() {
      for (const release of pending) release();
      server.stop(true);
    },
  };
}

async function all(items: AsyncGenerator<StreamItem>): Promise<StreamItem[]> {
  const out: StreamItem[] = [];
  for await (const item of items) out.push(item);
  return out;
}

const label = (e: StreamItem) =>
  e.kind === 'status' ? `status:${e.status.state}` : e.kind === 'error' ? e.error.code : e.kind;

let node: TestNode;
let wrong: ReturnType<typeof wrongServer>;
beforeAll(async () => {
  node = await startNode(weather());
  wrong = wrongServer();
});
afterAll(async () => {
  wrong.stop();
  await node.dispose();
});

for (const version of ['1.0', '0.3'] as const) {
  describe(`against a node, in the ${version} wire form`, () => {
    const client = () => createA2AClient({ url: node.url, version, headers: TEST_AUTH });

    test('call answers the data artifact, or the capability’s own code with the task', async () => {
      expect(await client().call('weather.now', { city: 'lima' })).toMatchObject({
        ok: true,
        result: { city: 'lima', celsius: 19 },
      });
      const failed = await client().call('weather.now', { city: 'atlantis' });
      expect(failed.ok).toBe(false);
      if (failed.ok) return;
      expect(failed.error).toMatchObject({
        code: 'UNKNOWN_CITY',
        kind: 'failed',
        message: 'no weather for atlantis',
        taskId: failed.taskId,
      });
      expect(failed.taskId).toBeString();
    });

    test('send, get and cancel read the task; a finished task cannot be canceled', async () => {
      const sent = await client().send({ data: { skill: 'weather.now', args: { city: 'oslo' } } });
      if (!sent.ok || !('task' in sent.result)) throw new Error(JSON.stringify(sent));
      const { task } = sent.result;
      expect(task.status.state).toBe('completed');
      const got = await client().get(task.id, { historyLength: 1 });
      expect(got.ok && got.result.id).toBe(task.id);
      const canceled = await client().cancel(task.id);
      expect(!canceled.ok && canceled.error.code).toBe('TASK_NOT_CANCELABLE');
      const missing = await client().get('00000000-0000-4000-8000-000000000000');
      expect(!missing.ok && missing.error).toMatchObject({
        code: 'TASK_NOT_FOUND',
        kind: 'failed',
      });
    });

    test('stream yields the events as the task advances, ending on its final state', async () => {
      const events = await all(
        client().stream({ data: { skill: 'weather.now', args: { city: 'oslo' } } }),
      );
      expect(events.map(label)).toEqual(['task', 'status:working', 'artifact', 'status:completed']);
    });

    test('the card is read as an object', async () => {
      const card = await client().card();
      expect(card.ok && card.result.name).toBe('weather');
    });
  });
}

test('list is a 1.0 method: a 0.3 client refuses it without a request, a 1.0 client pages', async () => {
  const v03 = createA2AClient({ url: wrong.url('hang'), version: '0.3' });
  expect(await v03.list()).toEqual({
    ok: false,
    error: {
      code: 'VERSION_NOT_SUPPORTED',
      kind: 'bad-call',
      message: 'ListTasks is an A2A 1.0 method; make the client with version 1.0',
    },
  });
  const v1 = createA2AClient({ url: node.url, headers: TEST_AUTH });
  const page = await v1.list({ status: 'completed', pageSize: 1 });
  expect(page.ok && page.result.tasks.length).toBe(1);
  expect(page.ok && page.result.tasks[0]!.status.state).toBe('completed');
});

describe('against a server that answers wrongly', () => {
  const at = (path: string, extra: { maxAnswerBytes?: number; timeoutMs?: number } = {}) =>
    createA2AClient({ url: wrong.url(path), ...extra });

  test('each wrong answer to a call is a coded failure', async () => {
    expect(await at('html').get('t')).toEqual({
      ok: false,
      error: {
        code: 'A2A_BAD_ANSWER',
        kind: 'bad-answer',
        message: 'the answer (HTTP 502) is not JSON',
        status: 502,
      },
    });
    expect(await at('not-rpc').get('t')).toMatchObject({
      ok: false,
      error: { code: 'A2A_BAD_ANSWER', message: 'the answer is not a JSON-RPC result' },
    });
    expect(await at('huge', { maxAnswerBytes: 1024 }).get('t')).toMatchObject({
      ok: false,
      error: { code: 'A2A_BAD_ANSWER', status: 200 },
    });
    expect(await at('rpc-error').get('t')).toEqual({
      ok: false,
      error: { code: 'TASK_NOT_FOUND', kind: 'failed', message: 'gone' },
    });
    expect(await at('odd-error').get('t')).toEqual({
      ok: false,
      error: { code: 'A2A_RPC_ERROR', kind: 'failed', message: 'JSON-RPC error' },
    });
    expect(await at('bad-task').send('hi')).toMatchObject({
      ok: false,
      error: { code: 'A2A_BAD_ANSWER', kind: 'bad-answer' },
    });
    expect(await at('card-array').card()).toMatchObject({
      ok: false,
      error: { code: 'A2A_BAD_ANSWER', message: 'the agent card is not a JSON object' },
    });
  });

  test('a node that does not answer in time, or at all, is a timeout or unreachable', async () => {
    expect(await at('hang', { timeoutMs: 50 }).get('t')).toEqual({
      ok: false,
      error: { code: 'A2A_TIMEOUT', kind: 'timeout', message: 'no answer within 50 ms' },
    });
    const closed = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response() });
    const url = `http://127.0.0.1:${closed.port}`;
    closed.stop(true);
    const gone = createA2AClient({ url });
    expect(await gone.get('t')).toMatchObject({ ok: false, error: { code: 'A2A_UNREACHABLE' } });
    expect(await all(gone.stream('hi'))).toEqual([
      {
        kind: 'error',
        error: { code: 'A2A_UNREACHABLE', kind: 'unreachable', message: 'the node did not answer' },
      },
    ]);
  });

  test('a stream ends with one item saying why, whatever went wrong', async () => {
    const ended = async (path: string) =>
      (await all(at(path, { maxAnswerBytes: 1024 }).stream('hi'))).map((e) =>
        e.kind === 'error' ? e.error : e,
      );
    expect(await ended('html')).toEqual([
      {
        code: 'A2A_BAD_ANSWER',
        kind: 'bad-answer',
        message: 'not an event stream (HTTP 502)',
        status: 502,
      },
    ]);
    expect(await ended('rpc-error')).toEqual([
      { code: 'TASK_NOT_FOUND', kind: 'failed', message: 'gone' },
    ]);
    expect(await ended('frame-error')).toEqual([
      { code: 'TASK_NOT_FOUND', kind: 'failed', message: 'gone' },
    ]);
    expect(await ended('frame-not-json')).toEqual([
      { code: 'A2A_BAD_ANSWER', kind: 'bad-answer', message: 'a stream frame is not JSON' },
    ]);
    expect(await ended('frame-huge')).toEqual([
      {
        code: 'A2A_BAD_ANSWER',
        kind: 'bad-answer',
        message: 'a stream frame is larger than 1024 bytes',
      },
    ]);
    expect(await ended('frame-unfinished')).toEqual([
      {
        code: 'A2A_BAD_ANSWER',
        kind: 'bad-answer',
        message: 'the stream ended before a final state',
      },
    ]);
  });
});
