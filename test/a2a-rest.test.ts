/**
 * The A2A v1.0 HTTP+JSON binding: every route's wire form against the conformance agent, the
 * official SDK's REST client, each error's HTTP status and AIP-193 body, and hostile input.
 */

import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { Role, TaskState } from '@a2a-js/sdk';
import {
  ClientFactory,
  ClientFactoryOptions,
  createAuthenticatingFetchWithRetry,
  RestTransportFactory,
} from '@a2a-js/sdk/client';
import { A2A_ERRORS, a2aError, toRestError, type A2AErrorReason } from '../lib/a2a/errors.ts';
import conformance from '../node/conformance.ts';
import { collect, sseFrames, startNode, TEST_AUTH, type TestNode } from './support/node.ts';

setDefaultTimeout(20_000); // per file (Bun scopes it so): real servers and processes are slow on a busy machine

const V1 = { 'Content-Type': 'application/json', 'A2A-Version': '1.0', ...TEST_AUTH };
const ANY = expect.any(String);
const INFO = (reason: string) => ({
  '@type': 'type.googleapis.com/google.rpc.ErrorInfo',
  reason,
  domain: 'a2a-protocol.org',
});

let tck: TestNode;
let noPush: TestNode;
let small: TestNode;

beforeAll(async () => {
  tck = await startNode(conformance());
  noPush = await startNode(conformance(), { push: false });
  small = await startNode(conformance(), { maxBodyBytes: 2048 });
});
afterAll(async () => {
  await tck.dispose();
  await noPush.dispose();
  await small.dispose();
});

interface Answer {
  status: number;
  type: string | null;
  json: any;
}

async function call(
  url: string,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = V1,
): Promise<Answer> {
  const init: RequestInit = { method, headers };
  if (body !== undefined) init.body = typeof body === 'string' ? body : JSON.stringify(body);
  const res = await fetch(url + path, init);
  const text = await res.text();
  return {
    status: res.status,
    type: res.headers.get('content-type'),
    json: text ? JSON.parse(text) : undefined,
  };
}

const msg = (messageId: string, extra: Record<string, unknown> = {}) => ({
  messageId,
  role: 'ROLE_USER',
  parts: [{ text: 'hi' }],
  ...extra,
});
const send = (messageId: string, extra: Record<string, unknown> = {}, node = tck) =>
  call(node.url, 'POST', '/message:send', { message: msg(messageId), ...extra });
/** The agent message a canceled task's status carries. */
const cancelNote = (t: { id: string; contextId: string }) => ({
  messageId: ANY,
  contextId: t.contextId,
  taskId: t.id,
  role: 'ROLE_AGENT',
  parts: [{ text: "Canceled at the client's request" }],
});
const restError = (code: number, status: string, message: unknown, details?: unknown[]) => ({
  error: { code, status, message, ...(details ? { details } : {}) },
});

describe('routes, in the exact wire form', () => {
  test('POST /message:send answers {task} blocking until completed; a message reply is {message}', async () => {
    const r = await send(`tck-complete-task-${crypto.randomUUID()}`);
    const { id, contextId } = r.json.task;
    const reply = {
      messageId: ANY,
      contextId,
      taskId: id,
      role: 'ROLE_AGENT',
      parts: [{ text: 'Hello from TCK' }],
    };
    expect(r).toEqual({
      status: 200,
      type: 'application/json',
      json: {
        task: {
          id: ANY,
          contextId: ANY,
          status: { state: 'TASK_STATE_COMPLETED', message: reply, timestamp: ANY },
          history: [
            {
              messageId: expect.stringMatching(/^tck-complete-task-/),
              contextId,
              taskId: id,
              role: 'ROLE_USER',
              parts: [{ text: 'hi' }],
            },
            reply,
          ],
        },
      },
    });
    const m = await send('tck-message-response-1');
    expect(m).toEqual({
      status: 200,
      type: 'application/json',
      json: {
        message: {
          messageId: ANY,
          contextId: ANY,
          role: 'ROLE_AGENT',
          parts: [{ text: 'Direct message response' }],
        },
      },
    });
  });

  test('POST /message:stream sends bare StreamResponse frames: task, working, artifact, completed, then closes', async () => {
    const res = await fetch(`${tck.url}/message:stream`, {
      method: 'POST',
      headers: { ...V1, Accept: 'text/event-stream' },
      body: JSON.stringify({ message: msg('tck-stream-001') }),
    });
    expect([res.status, res.headers.get('content-type')]).toEqual([200, 'text/event-stream']);
    const frames = await collect(res);
    const { id: taskId, contextId } = frames[0].task;
    expect(frames).toEqual([
      {
        task: {
          id: ANY,
          contextId: ANY,
          status: { state: 'TASK_STATE_SUBMITTED', timestamp: ANY },
          history: [{ ...msg('tck-stream-001'), contextId, taskId }],
        },
      },
      {
        statusUpdate: {
          taskId,
          contextId,
          status: { state: 'TASK_STATE_WORKING', timestamp: ANY },
        },
      },
      {
        artifactUpdate: {
          taskId,
          contextId,
          artifact: {
            artifactId: ANY,
            name: 'result',
            parts: [{ text: 'Streaming artifact from TCK' }],
          },
          lastChunk: true,
        },
      },
      {
        statusUpdate: {
          taskId,
          contextId,
          status: { state: 'TASK_STATE_COMPLETED', timestamp: ANY },
        },
      },
    ]);
  });

  test('GET /tasks/{id} honours historyLength; GET /tasks filters, pages and strips artifacts unless asked', async () => {
    const done = (await send('tck-artifact-text-1')).json.task;
    const got = await call(tck.url, 'GET', `/tasks/${done.id}?historyLength=0`);
    expect(got).toEqual({
      status: 200,
      type: 'application/json',
      json: {
        id: done.id,
        contextId: done.contextId,
        status: done.status,
        artifacts: done.artifacts,
      },
    });
    const one = await call(tck.url, 'GET', `/tasks/${done.id}?historyLength=1`);
    expect(one.json.history).toEqual([done.history.at(-1)]);

    const bare = {
      id: done.id,
      contextId: done.contextId,
      status: done.status,
      history: done.history,
    };
    const listed = await call(tck.url, 'GET', `/tasks?contextId=${done.contextId}`);
    expect(listed).toEqual({
      status: 200,
      type: 'application/json',
      json: { tasks: [bare], nextPageToken: '', pageSize: 50, totalSize: 1 },
    });
    const withArtifacts = await call(
      tck.url,
      'GET',
      `/tasks?contextId=${done.contextId}&includeArtifacts=true&status=TASK_STATE_COMPLETED&historyLength=0`,
    );
    expect(withArtifacts.json).toEqual({
      tasks: [
        { id: done.id, contextId: done.contextId, status: done.status, artifacts: done.artifacts },
      ],
      nextPageToken: '',
      pageSize: 50,
      totalSize: 1,
    });
    const none = await call(tck.url, 'GET', `/tasks?contextId=${done.contextId}&status=4`);
    expect(none.json).toEqual({ tasks: [], nextPageToken: '', pageSize: 50, totalSize: 0 });

    const first = (await send('p-1', { configuration: { returnImmediately: true } })).json.task;
    await send('p-2', {
      message: msg('p-2', { contextId: first.contextId }),
      configuration: { returnImmediately: true },
    });
    const page1 = await call(tck.url, 'GET', `/tasks?contextId=${first.contextId}&pageSize=1`);
    expect([
      page1.json.tasks.length,
      page1.json.totalSize,
      page1.json.nextPageToken.length > 0,
    ]).toEqual([1, 2, true]);
    const page2 = await call(
      tck.url,
      'GET',
      `/tasks?context_id=${first.contextId}&pageSize=1&pageToken=${encodeURIComponent(page1.json.nextPageToken)}`,
    );
    expect([page2.json.tasks.length, page2.json.nextPageToken]).toEqual([1, '']);
  });

  test('POST /tasks/{id}:cancel cancels an input-required task, again returns it, and refuses a completed one with 409', async () => {
    const open = (await send('tck-input-required-1')).json.task;
    expect(open.status.state).toBe('TASK_STATE_INPUT_REQUIRED');
    const canceled = await call(tck.url, 'POST', `/tasks/${open.id}:cancel`);
    const note = cancelNote(open);
    expect(canceled).toEqual({
      status: 200,
      type: 'application/json',
      json: {
        ...open,
        status: { state: 'TASK_STATE_CANCELED', message: note, timestamp: ANY },
        history: [...open.history, note],
      },
    });
    expect((await call(tck.url, 'POST', `/tasks/${open.id}:cancel`, {})).json.status.state).toBe(
      'TASK_STATE_CANCELED',
    );

    const done = (await send('tck-complete-task-2')).json.task;
    expect(await call(tck.url, 'POST', `/tasks/${done.id}:cancel`)).toEqual({
      status: 409,
      type: 'application/json',
      json: restError(409, 'FAILED_PRECONDITION', ANY, [INFO('TASK_NOT_CANCELABLE')]),
    });
  });

  test('GET and POST /tasks/{id}:subscribe start with the task snapshot and end when it is canceled', async () => {
    const open = (
      await send('tck-input-required-w-1', { configuration: { returnImmediately: true } })
    ).json.task;
    const streams = await Promise.all(
      ['GET', 'POST'].map((method) =>
        fetch(`${tck.url}/tasks/${open.id}:subscribe`, {
          method,
          headers: { 'A2A-Version': '1.0', ...TEST_AUTH },
        }),
      ),
    );
    const readers = streams.map((res) => sseFrames(res));
    const firsts = await Promise.all(readers.map((r) => r.next()));
    await call(tck.url, 'POST', `/tasks/${open.id}:cancel`);
    for (const [i, reader] of readers.entries()) {
      const rest: any[] = [];
      for await (const f of reader) rest.push(f);
      expect([firsts[i]!.value, ...rest]).toEqual([
        { task: open },
        {
          statusUpdate: {
            taskId: open.id,
            contextId: open.contextId,
            status: { state: 'TASK_STATE_CANCELED', message: cancelNote(open), timestamp: ANY },
          },
        },
      ]);
    }
    expect(await call(tck.url, 'GET', `/tasks/${open.id}:subscribe`)).toEqual({
      status: 400,
      type: 'application/json',
      json: restError(400, 'UNIMPLEMENTED', ANY, [INFO('UNSUPPORTED_OPERATION')]),
    });
  });

  test('push configs: create (201), get, list, delete (204, idempotent), then not found', async () => {
    const open = (await send('tck-input-required-2')).json.task;
    const base = `/tasks/${open.id}/pushNotificationConfigs`;
    const created = await call(tck.url, 'POST', base, {
      url: 'http://127.0.0.1:9/hook',
      token: 't0k',
      authentication: { scheme: 'Bearer', credentials: 'secret' },
    });
    const config = {
      id: ANY,
      taskId: open.id,
      url: 'http://127.0.0.1:9/hook',
      token: 't0k',
      authentication: { scheme: 'Bearer' },
    };
    expect(created).toEqual({ status: 201, type: 'application/json', json: config });
    const id = created.json.id;
    expect(await call(tck.url, 'GET', `${base}/${id}`)).toEqual({
      status: 200,
      type: 'application/json',
      json: config,
    });
    // A list never shows the webhook's token; only a get by id does, to the task's owner.
    const { token: _token, ...listed } = config;
    expect(await call(tck.url, 'GET', base)).toEqual({
      status: 200,
      type: 'application/json',
      json: { configs: [listed], nextPageToken: '' },
    });
    const del = await fetch(`${tck.url}${base}/${id}`, { method: 'DELETE', headers: V1 });
    expect([del.status, await del.text()]).toEqual([204, '']);
    expect((await fetch(`${tck.url}${base}/${id}`, { method: 'DELETE', headers: V1 })).status).toBe(
      204,
    );
    expect((await call(tck.url, 'GET', `${base}/${id}`)).status).toBe(404);
    expect((await call(tck.url, 'GET', base)).json).toEqual({ configs: [], nextPageToken: '' });
  });

  test('GET /extendedAgentCard: this agent has none (UnsupportedOperation, 400)', async () => {
    expect(await call(tck.url, 'GET', '/extendedAgentCard')).toEqual({
      status: 400,
      type: 'application/json',
      json: restError(400, 'UNIMPLEMENTED', 'This agent has no extended agent card', [
        INFO('UNSUPPORTED_OPERATION'),
      ]),
    });
  });
});

describe('official SDK REST client (HTTP+JSON transport)', () => {
  const textPart = (t: string) => ({
    content: { $case: 'text' as const, value: t },
    filename: '',
    mediaType: 'text/plain',
    metadata: undefined,
  });
  const message = (text: string, messageId: string = crypto.randomUUID()) =>
    ({
      messageId,
      role: Role.ROLE_USER,
      parts: [textPart(text)],
      contextId: '',
      taskId: '',
      extensions: [],
      referenceTaskIds: [],
      metadata: undefined,
    }) as any;
  const seen: string[] = [];
  // The token reaches the client through the SDK's own authentication handler.
  const fetchImpl = createAuthenticatingFetchWithRetry(
    (async (input: RequestInfo | URL, init?: RequestInit) => {
      seen.push(`${init?.method ?? 'GET'} ${new URL(String(input)).pathname}`);
      return fetch(input, init);
    }) as typeof fetch,
    { headers: async () => ({ ...TEST_AUTH }), shouldRetryWithHeaders: async () => undefined },
  );
  const restClient = () =>
    new ClientFactory(
      ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
        transports: [new RestTransportFactory({ fetchImpl })],
        preferredTransports: ['HTTP+JSON'],
      }),
    ).createFromUrl(tck.url);

  test('sends, streams, gets, lists, cancels and resubscribes over REST only', async () => {
    const client = await restClient();
    const done: any = await client.sendMessage({
      message: message('hi', 'tck-complete-task-sdk'),
    } as any);
    expect(done.status.state).toBe(TaskState.TASK_STATE_COMPLETED);
    const kinds: string[] = [];
    for await (const ev of client.sendMessageStream({
      message: message('go', 'tck-stream-002-sdk'),
    } as any))
      kinds.push((ev as any).payload.$case);
    expect(kinds).toEqual(['task', 'statusUpdate']);

    const got: any = await client.getTask({ id: done.id, historyLength: 1 } as any);
    expect([got.id, got.history.length]).toEqual([done.id, 1]);
    const open: any = await client.sendMessage({
      message: message('stay', 'tck-input-required-sdk'),
      configuration: { returnImmediately: true },
    } as any);
    expect(open.status.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    const listed: any = await client.listTasks({
      tenant: '',
      contextId: open.contextId,
      status: TaskState.TASK_STATE_UNSPECIFIED,
      pageToken: '',
    } as any);
    expect(listed.tasks.map((t: any) => t.id)).toEqual([open.id]);

    // Cancel once the subscription has delivered its first event (the task), so it is surely attached.
    const events: string[] = [];
    let canceled: any;
    for await (const ev of client.resubscribeTask({ id: open.id } as any)) {
      events.push((ev as any).payload.$case);
      if (events.length === 1) canceled = await client.cancelTask({ id: open.id } as any);
    }
    expect(canceled.status.state).toBe(TaskState.TASK_STATE_CANCELED);
    expect(events).toEqual(['task', 'statusUpdate']);

    const errors: string[] = [];
    for (const attempt of [
      () => client.cancelTask({ id: done.id } as any),
      () => client.getTask({ id: 'no-such-task' } as any),
    ]) {
      try {
        await attempt();
      } catch (e) {
        errors.push(`${(e as Error).constructor.name} ${(e as any).statusCode}`);
      }
    }
    expect(errors).toEqual(['RestTaskNotCancelableError 409', 'RestTaskNotFoundError 404']);
    expect(seen.filter((s) => !s.includes('.well-known'))).toEqual([
      'POST /message:send',
      'POST /message:stream',
      `GET /tasks/${done.id}`,
      'POST /message:send',
      'GET /tasks',
      `POST /tasks/${open.id}:subscribe`,
      `POST /tasks/${open.id}:cancel`,
      `POST /tasks/${done.id}:cancel`,
      'GET /tasks/no-such-task',
    ]);
  });
});

describe('errors: HTTP status and AIP-193 body, application/json', () => {
  test('the one table maps every reason to its REST status (A2A v1.0 §5.4)', () => {
    const mapped = Object.fromEntries(
      Object.keys(A2A_ERRORS).map((r) => {
        const { http, body } = toRestError(a2aError(r as A2AErrorReason));
        return [r, `${http} ${body.error.status}`];
      }),
    );
    expect(mapped).toEqual({
      PARSE_ERROR: '400 INVALID_ARGUMENT',
      INVALID_REQUEST: '400 INVALID_ARGUMENT',
      METHOD_NOT_FOUND: '404 NOT_FOUND',
      INVALID_PARAMS: '400 INVALID_ARGUMENT',
      INTERNAL_ERROR: '500 INTERNAL',
      TASK_NOT_FOUND: '404 NOT_FOUND',
      TASK_NOT_CANCELABLE: '409 FAILED_PRECONDITION',
      PUSH_NOTIFICATION_NOT_SUPPORTED: '400 UNIMPLEMENTED',
      UNSUPPORTED_OPERATION: '400 UNIMPLEMENTED',
      CONTENT_TYPE_NOT_SUPPORTED: '415 INVALID_ARGUMENT',
      INVALID_AGENT_RESPONSE: '502 INTERNAL',
      EXTENDED_AGENT_CARD_NOT_CONFIGURED: '400 FAILED_PRECONDITION',
      EXTENSION_SUPPORT_REQUIRED: '400 FAILED_PRECONDITION',
      VERSION_NOT_SUPPORTED: '400 UNIMPLEMENTED',
      TASK_GENERATION_MISMATCH: '409 ABORTED',
      UNAUTHENTICATED: '401 UNAUTHENTICATED',
      ISSUER_UNAVAILABLE: '503 UNAVAILABLE',
      INSUFFICIENT_SCOPE: '403 PERMISSION_DENIED',
      TENANT_FORBIDDEN: '403 PERMISSION_DENIED',
      TASK_STORE_FULL: '503 UNAVAILABLE',
      TOO_MANY_TURNS: '429 RESOURCE_EXHAUSTED',
      TOO_MANY_LONG_POLLS: '429 RESOURCE_EXHAUSTED',
      LONG_POLLS_FULL: '503 UNAVAILABLE',
      MESSAGE_ID_REUSED: '409 ALREADY_EXISTS',
      EVENT_CURSOR_AHEAD: '400 OUT_OF_RANGE',
      EVENT_CURSOR_INVALID: '400 INVALID_ARGUMENT',
    });
    expect(toRestError(a2aError('EXTENSION_SUPPORT_REQUIRED', 'needs x')).body).toEqual(
      restError(400, 'FAILED_PRECONDITION', 'needs x', [INFO('EXTENSION_SUPPORT_REQUIRED')]),
    );
  });

  test('each error a route can reach, with its status and body', async () => {
    const done = (await send('tck-complete-task-3')).json.task;
    const answers = [
      await call(tck.url, 'GET', '/tasks/no-such-task'),
      await call(tck.url, 'POST', `/tasks/${done.id}:cancel`),
      await call(noPush.url, 'GET', `/tasks/${done.id}/pushNotificationConfigs`),
      await send('again', { message: msg('again', { taskId: done.id }) }),
      await call(tck.url, 'POST', '/message:send', JSON.stringify({ message: msg('x') }), {
        'Content-Type': 'text/plain',
        'A2A-Version': '1.0',
      }),
      await send('img', {
        message: { ...msg('img'), parts: [{ raw: 'AAAA', mediaType: 'image/png' }] },
      }),
      await call(tck.url, 'GET', '/tasks', undefined, {}),
      await call(tck.url, 'GET', '/tasks', undefined, { 'A2A-Version': '0.3' }),
      await call(tck.url, 'GET', '/tasks', undefined, { 'A2A-Version': '2.0' }),
    ];
    expect(
      answers.map((a) => [
        a.status,
        a.type,
        a.json.error.code,
        a.json.error.status,
        a.json.error.details?.[0]?.reason,
      ]),
    ).toEqual([
      [404, 'application/json', 404, 'NOT_FOUND', 'TASK_NOT_FOUND'],
      [409, 'application/json', 409, 'FAILED_PRECONDITION', 'TASK_NOT_CANCELABLE'],
      [400, 'application/json', 400, 'UNIMPLEMENTED', 'PUSH_NOTIFICATION_NOT_SUPPORTED'],
      [400, 'application/json', 400, 'UNIMPLEMENTED', 'UNSUPPORTED_OPERATION'],
      [415, 'application/json', 415, 'INVALID_ARGUMENT', 'CONTENT_TYPE_NOT_SUPPORTED'],
      [415, 'application/json', 415, 'INVALID_ARGUMENT', 'CONTENT_TYPE_NOT_SUPPORTED'],
      [400, 'application/json', 400, 'UNIMPLEMENTED', 'VERSION_NOT_SUPPORTED'],
      [400, 'application/json', 400, 'UNIMPLEMENTED', 'VERSION_NOT_SUPPORTED'],
      [400, 'application/json', 400, 'UNIMPLEMENTED', 'VERSION_NOT_SUPPORTED'],
    ]);
    expect(answers[6]!.json.error.message).toBe(
      'The request sent no A2A-Version (which means 0.3); the HTTP+JSON binding speaks A2A 1.0 only (JSON-RPC at /a2a also speaks 0.3)',
    );
    // The version may come as a query parameter instead; application/a2a+json bodies are accepted.
    expect(
      (await call(tck.url, 'GET', `/tasks/${done.id}?A2A-Version=1.0`, undefined, { ...TEST_AUTH }))
        .status,
    ).toBe(200);
    expect(
      (
        await call(
          tck.url,
          'POST',
          '/message:send',
          { message: msg('tck-complete-task-4') },
          { 'Content-Type': 'application/a2a+json; charset=utf-8', 'A2A-Version': '1.0' },
        )
      ).status,
    ).toBe(200);
  });
});

describe('hostile input gets a 4xx AIP-193 answer and changes nothing', () => {
  test('malformed JSON, wrong types, path-like ids, huge bodies, unknown routes and methods', async () => {
    await send('tck-complete-task-5', {}, small);
    const before = await small.node.store.count();
    const post = (path: string, body: string, headers: Record<string, string> = V1) =>
      call(small.url, 'POST', path, body, headers);
    // A streamed body has no Content-Length, so the limit is counted while reading.
    const chunked = async (text: string): Promise<Answer> => {
      const body = new ReadableStream({
        start: (c) => (c.enqueue(new TextEncoder().encode(text)), c.close()),
      });
      const res = await fetch(`${small.url}/message:send`, { method: 'POST', headers: V1, body });
      return { status: res.status, type: res.headers.get('content-type'), json: await res.json() };
    };
    const cases: [string, Promise<Answer>][] = [
      ['malformed JSON', post('/message:send', '{"message":')],
      ['empty body', post('/message:send', '')],
      ['array body', post('/message:send', '[1,2]')],
      [
        'wrong types',
        post(
          '/message:send',
          JSON.stringify({ message: { messageId: 7, role: 'ROLE_USER', parts: 'x' } }),
        ),
      ],
      [
        'bad role',
        post('/message:send', JSON.stringify({ message: { ...msg('r'), role: 'ROLE_ROOT' } })),
      ],
      [
        'no content type',
        post('/message:send', JSON.stringify({ message: msg('c') }), { 'A2A-Version': '1.0' }),
      ],
      [
        'huge body',
        post(
          '/message:send',
          JSON.stringify({ message: msg('big', { parts: [{ text: 'x'.repeat(4096) }] }) }),
        ),
      ],
      ['huge chunked body', chunked(`{"message":"${'y'.repeat(8192)}"}`)],
      [
        'push config for unknown task',
        post(
          '/tasks/nope/pushNotificationConfigs',
          JSON.stringify({ url: 'http://127.0.0.1:9/h' }),
        ),
      ],
      ['push config without url', post('/tasks/nope/pushNotificationConfigs', '{}')],
      ['cancel with a non-object body', post('/tasks/nope:cancel', '"x"')],
      ['dot-dot id', call(small.url, 'GET', '/tasks/..%2F..%2Fetc%2Fpasswd')],
      ['NUL id', call(small.url, 'GET', '/tasks/a%00b')],
      ['bad escape', call(small.url, 'GET', '/tasks/%E0%A4%A')],
      ['overlong id', call(small.url, 'GET', `/tasks/${'a'.repeat(300)}`)],
      ['history not a number', call(small.url, 'GET', '/tasks/x?historyLength=lots')],
      ['page size out of range', call(small.url, 'GET', '/tasks?pageSize=1000')],
      ['bad status', call(small.url, 'GET', '/tasks?status=TASK_STATE_BORED')],
      ['bad timestamp', call(small.url, 'GET', '/tasks?statusTimestampAfter=yesterday')],
      ['includeArtifacts not a boolean', call(small.url, 'GET', '/tasks?includeArtifacts=maybe')],
      ['unknown verb', post('/tasks/x:delete', '{}')],
      ['unknown message verb', post('/message:shout', '{}')],
      ['too deep', call(small.url, 'GET', '/tasks/x/pushNotificationConfigs/y/z')],
      ['unknown sub-resource', call(small.url, 'GET', '/tasks/x/artifacts')],
      ['empty id', call(small.url, 'GET', '/tasks/')],
      ['wrong method', call(small.url, 'PUT', '/tasks/x')],
      ['wrong method on send', call(small.url, 'GET', '/message:send')],
      ['delete a collection', call(small.url, 'DELETE', '/tasks')],
    ];
    const answers = await Promise.all(
      cases.map(async ([name, p]) => {
        const a = await p;
        const shaped =
          a.type === 'application/json' &&
          typeof a.json?.error?.message === 'string' &&
          a.json.error.code === a.status &&
          typeof a.json.error.status === 'string';
        return [name, a.status, shaped];
      }),
    );
    expect(answers).toEqual([
      ['malformed JSON', 400, true],
      ['empty body', 400, true],
      ['array body', 400, true],
      ['wrong types', 400, true],
      ['bad role', 400, true],
      ['no content type', 415, true],
      ['huge body', 413, true],
      ['huge chunked body', 413, true],
      ['push config for unknown task', 404, true],
      ['push config without url', 400, true],
      ['cancel with a non-object body', 400, true],
      ['dot-dot id', 404, true],
      ['NUL id', 404, true],
      ['bad escape', 400, true],
      ['overlong id', 400, true],
      ['history not a number', 400, true],
      ['page size out of range', 400, true],
      ['bad status', 400, true],
      ['bad timestamp', 400, true],
      ['includeArtifacts not a boolean', 400, true],
      ['unknown verb', 404, true],
      ['unknown message verb', 404, true],
      ['too deep', 404, true],
      ['unknown sub-resource', 404, true],
      ['empty id', 404, true],
      ['wrong method', 405, true],
      ['wrong method on send', 405, true],
      ['delete a collection', 405, true],
    ]);
    const wrong = await fetch(`${small.url}/tasks/x`, { method: 'PUT', headers: V1 });
    expect(wrong.headers.get('allow')).toBe('GET');
    const fields = await post(
      '/message:send',
      JSON.stringify({ message: { messageId: 7, role: 'ROLE_USER', parts: [{ text: 'x' }] } }),
    );
    expect(fields.json.error.details).toEqual([
      {
        '@type': 'type.googleapis.com/google.rpc.BadRequest',
        fieldViolations: [{ field: 'params.message.messageId', description: ANY }],
      },
    ]);
    expect(await small.node.store.count()).toBe(before);
    expect(small.log.lines.filter((l) => l.startsWith('error'))).toEqual([]);
  });

  test('other routes are untouched; a node without A2A has no REST routes', async () => {
    expect((await call(tck.url, 'GET', '/health')).json.ok).toBe(true);
    expect((await call(tck.url, 'GET', '/message')).json).toEqual({
      error: { code: 'NOT_FOUND', message: 'No such route' },
    });
    expect((await call(tck.url, 'GET', '/messages:send')).json).toEqual({
      error: { code: 'NOT_FOUND', message: 'No such route' },
    });
    const rpc = await call(tck.url, 'POST', '/a2a', {
      jsonrpc: '2.0',
      id: 1,
      method: 'GetTask',
      params: { id: 'nope' },
    });
    expect(rpc.json.error.code).toBe(-32001);
    const peerOnly = await startNode({ ...conformance(), name: 'peer-only', a2a: false });
    try {
      const a = await call(peerOnly.url, 'POST', '/message:send', {
        message: msg('tck-complete-task-6'),
      });
      expect([a.status, a.json]).toEqual([
        404,
        { error: { code: 'NOT_FOUND', message: 'No such route' } },
      ]);
      expect((await call(peerOnly.url, 'GET', '/tasks')).status).toBe(404);
    } finally {
      await peerOnly.dispose();
    }
  });
});
