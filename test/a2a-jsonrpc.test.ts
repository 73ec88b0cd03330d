/**
 * JSON-RPC 2.0 on POST /a2a, spoken raw: v0.3 answers validated against the project's schema of
 * them (fixtures/a2a-v0.3-answers.schema.json), version negotiation, batches and notifications,
 * and hostile input (malformed JSON, wrong types, oversize bodies, path-like ids) answered with
 * the right code while the node keeps serving and writes nothing outside its task folder.
 */

import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import conformance from '../node/conformance.ts';
import { valid03 } from './support/a2a-v03.ts';
import {
  collect,
  msgV03,
  msgV1,
  rawPost,
  rpc,
  startNode,
  streamRpc,
  type TestNode,
} from './support/node.ts';

setDefaultTimeout(20_000); // per file (Bun scopes it so): real servers and processes are slow on a busy machine

let node: TestNode;
beforeAll(async () => {
  node = await startNode(conformance(), { maxBodyBytes: 64 * 1024 });
});
afterAll(() => node.dispose());

describe('v0.3 answers match the v0.3 answers schema', () => {
  test('agent card', async () => {
    const card = await (await fetch(`${node.url}/.well-known/agent-card.json`)).json();
    expect(valid03('AgentCard', card)).toEqual([]);
  });

  test('message/send, tasks/get, tasks/cancel and errors', async () => {
    const sent = await rpc(
      node.url,
      'message/send',
      { message: msgV03('hi', { messageId: 'tck-artifact-file-1' }) },
      null,
    );
    expect(valid03('SendMessageSuccessResponse', sent)).toEqual([]);
    expect(sent.result.artifacts[0].parts[0]).toEqual({
      kind: 'file',
      file: { bytes: expect.any(String), mimeType: 'text/plain', name: 'output.txt' },
    });

    const reply = await rpc(
      node.url,
      'message/send',
      { message: msgV03('hi', { messageId: 'tck-message-response-1' }) },
      null,
    );
    expect(valid03('SendMessageSuccessResponse', reply)).toEqual([]);
    expect(reply.result.kind).toBe('message');

    const got = await rpc(node.url, 'tasks/get', { id: sent.result.id, historyLength: 1 }, null);
    expect(valid03('GetTaskSuccessResponse', got)).toEqual([]);

    const open = await rpc(node.url, 'message/send', { message: msgV03('stay') }, null);
    expect(open.result.status.state).toBe('working');
    const canceled = await rpc(node.url, 'tasks/cancel', { id: open.result.id }, null);
    expect(valid03('CancelTaskSuccessResponse', canceled)).toEqual([]);
    expect(canceled.result.status.state).toBe('canceled');

    const notCancelable = await rpc(node.url, 'tasks/cancel', { id: sent.result.id }, null);
    expect(valid03('JSONRPCErrorResponse', notCancelable)).toEqual([]);
    expect(notCancelable.error.code).toBe(-32002);
  });

  test('message/stream frames, with final on the last status', async () => {
    const frames = await collect(
      await streamRpc(
        node.url,
        'message/stream',
        { message: msgV03('s', { messageId: 'tck-stream-artifact-chunked-1' }) },
        '0.3',
      ),
    );
    for (const f of frames) expect(valid03('SendStreamingMessageSuccessResponse', f)).toEqual([]);
    expect(frames.map((f) => [f.result.kind, f.result.final ?? f.result.append ?? null])).toEqual([
      ['task', null],
      ['status-update', false],
      ['artifact-update', false],
      ['artifact-update', true],
      ['status-update', true],
    ]);
  });

  test('push notification config set, get, list, delete', async () => {
    const open = await rpc(
      node.url,
      'message/send',
      { message: msgV03('x', { messageId: 'tck-input-required-1' }) },
      null,
    );
    const cfg = {
      url: 'http://127.0.0.1:9/hook',
      token: 'tok',
      authentication: { schemes: ['Bearer'], credentials: 'secret' },
    };
    const set = await rpc(
      node.url,
      'tasks/pushNotificationConfig/set',
      { taskId: open.result.id, pushNotificationConfig: cfg },
      null,
    );
    expect(valid03('SetTaskPushNotificationConfigSuccessResponse', set)).toEqual([]);
    expect(JSON.stringify(set)).not.toContain('secret');
    const id = set.result.pushNotificationConfig.id;
    const get = await rpc(
      node.url,
      'tasks/pushNotificationConfig/get',
      { id: open.result.id, pushNotificationConfigId: id },
      null,
    );
    expect(valid03('GetTaskPushNotificationConfigSuccessResponse', get)).toEqual([]);
    const list = await rpc(
      node.url,
      'tasks/pushNotificationConfig/list',
      { id: open.result.id },
      null,
    );
    expect(valid03('ListTaskPushNotificationConfigSuccessResponse', list)).toEqual([]);
    expect(list.result).toHaveLength(1);
    const del = await rpc(
      node.url,
      'tasks/pushNotificationConfig/delete',
      { id: open.result.id, pushNotificationConfigId: id },
      null,
    );
    expect(valid03('DeleteTaskPushNotificationConfigSuccessResponse', del)).toEqual([]);
    const again = await rpc(
      node.url,
      'tasks/pushNotificationConfig/delete',
      { id: open.result.id, pushNotificationConfigId: id },
      null,
    );
    expect(again.result).toBeNull();
  });
});

describe('versions', () => {
  test('missing header means 0.3; 1.0 methods then get -32009', async () => {
    const r = await rpc(node.url, 'SendMessage', { message: msgV1('hi') }, null);
    expect(r.error.code).toBe(-32009);
  });

  test('a 0.3 method under A2A-Version: 1.0 is not found', async () => {
    const r = await rpc(node.url, 'message/send', { message: msgV03('hi') }, '1.0');
    expect(r.error.code).toBe(-32601);
  });

  test('an unsupported version gets -32009 with an ErrorInfo', async () => {
    for (const v of ['2.0', '0.2', 'banana']) {
      const { json } = await rawPost(
        node.url,
        JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'GetTask', params: { id: 'x' } }),
        { 'A2A-Version': v },
      );
      expect(json.id).toBe(7);
      expect(json.error.code).toBe(-32009);
      expect(json.error.data).toEqual([
        {
          '@type': 'type.googleapis.com/google.rpc.ErrorInfo',
          reason: 'VERSION_NOT_SUPPORTED',
          domain: 'a2a-protocol.org',
        },
      ]);
    }
  });

  test('A2A errors in 1.0 carry ErrorInfo with an UPPER_SNAKE reason', async () => {
    const r = await rpc(node.url, 'GetTask', { id: crypto.randomUUID() });
    expect(r.error).toEqual({
      code: -32001,
      message: expect.stringContaining('Task not found'),
      data: [
        {
          '@type': 'type.googleapis.com/google.rpc.ErrorInfo',
          reason: 'TASK_NOT_FOUND',
          domain: 'a2a-protocol.org',
        },
        {
          '@type': 'type.googleapis.com/google.rpc.BadRequest',
          fieldViolations: [{ field: 'id', description: expect.any(String) }],
        },
      ],
    });
  });

  test('GetExtendedAgentCard is unsupported (the card does not declare one)', async () => {
    expect((await rpc(node.url, 'GetExtendedAgentCard', {})).error.code).toBe(-32004);
  });
});

describe('JSON-RPC envelopes', () => {
  const post = (body: string, v = '1.0') => rawPost(node.url, body, { 'A2A-Version': v });

  test('malformed JSON is -32700 with a null id', async () => {
    for (const body of ['{', '{"jsonrpc":"2.0",', 'nul', '\u0000\u0001', '']) {
      const r = await post(body);
      expect(r.status).toBe(200);
      expect(r.json).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32700 } });
    }
  });

  test('invalid requests are -32600', async () => {
    const cases = [
      { jsonrpc: '1.0', id: 1, method: 'GetTask', params: {} },
      { id: 1, method: 'GetTask', params: {} },
      { jsonrpc: '2.0', id: 1, params: {} },
      { jsonrpc: '2.0', id: 1, method: 42 },
      { jsonrpc: '2.0', id: { a: 1 }, method: 'GetTask' },
      { jsonrpc: '2.0', id: [1], method: 'GetTask' },
      { jsonrpc: '2.0', id: 1, method: 'GetTask', params: 'x' },
      'just a string',
      42,
    ];
    for (const c of cases) {
      const r = await post(JSON.stringify(c));
      expect(r.json.error.code).toBe(-32600);
    }
  });

  test('unknown methods are -32601', async () => {
    for (const m of ['tasks/list', 'Nope', 'constructor', '__proto__', 'toString']) {
      const r = await post(
        JSON.stringify({ jsonrpc: '2.0', id: 1, method: m, params: {} }),
        m === 'tasks/list' ? '0.3' : '1.0',
      );
      expect(r.json.error.code).toBe(-32601);
    }
  });

  test('a batch answers each request in order; duplicate ids and streams inside are refused', async () => {
    const batch = [
      { jsonrpc: '2.0', id: 'a', method: 'GetTask', params: { id: 'nope' } },
      {
        jsonrpc: '2.0',
        id: 'b',
        method: 'SendMessage',
        params: { message: msgV1('x', { messageId: 'tck-complete-task-b' }) },
      },
      {
        jsonrpc: '2.0',
        method: 'SendMessage',
        params: { message: msgV1('notify', { messageId: 'tck-complete-task-n' }) },
      },
      { jsonrpc: '2.0', id: 'a', method: 'GetTask', params: { id: 'nope' } },
      { jsonrpc: '2.0', id: 'c', method: 'SendStreamingMessage', params: { message: msgV1('x') } },
      'garbage',
    ];
    const r = await post(JSON.stringify(batch));
    expect(r.json.map((x: any) => [x.id, x.error?.code ?? x.result.task.status.state])).toEqual([
      ['a', -32001],
      ['b', 'TASK_STATE_COMPLETED'],
      ['a', -32600],
      ['c', -32600],
      [null, -32600],
    ]);
  });

  test('an empty batch is -32600; a batch of notifications answers 204', async () => {
    expect((await post('[]')).json.error.code).toBe(-32600);
    const r = await post(
      JSON.stringify([{ jsonrpc: '2.0', method: 'GetTask', params: { id: 'x' } }]),
    );
    expect(r.status).toBe(204);
    expect(r.text).toBe('');
  });

  test('a notification runs but gets no answer', async () => {
    const contextId = `notify-${crypto.randomUUID()}`;
    const r = await post(
      JSON.stringify({
        jsonrpc: '2.0',
        method: 'SendMessage',
        params: { message: msgV1('x', { contextId, messageId: 'tck-complete-task-z' }) },
      }),
    );
    expect(r.status).toBe(204);
    const listed = await rpc(node.url, 'ListTasks', { contextId });
    expect(listed.result.tasks.map((t: any) => t.status.state)).toEqual(['TASK_STATE_COMPLETED']);
  });
});

describe('bad input', () => {
  const base = () => ({
    messageId: crypto.randomUUID(),
    role: 'ROLE_USER',
    parts: [{ text: 'hi' }],
  });
  const badMessages: [string, unknown][] = [
    ['no message', undefined],
    ['message is a string', 'hello'],
    ['no messageId', { role: 'ROLE_USER', parts: [{ text: 'x' }] }],
    ['messageId is a number', { ...base(), messageId: 5 }],
    ['messageId with control characters', { ...base(), messageId: 'a\u0000b' }],
    ['role missing', { messageId: 'm', parts: [{ text: 'x' }] }],
    ['role unknown', { ...base(), role: 'ROLE_ROBOT' }],
    ['parts missing', { messageId: 'm', role: 'ROLE_USER' }],
    ['parts empty', { ...base(), parts: [] }],
    ['parts not an array', { ...base(), parts: { text: 'x' } }],
    ['part with no content', { ...base(), parts: [{ mediaType: 'text/plain' }] }],
    ['part with two contents', { ...base(), parts: [{ text: 'x', url: 'http://a' }] }],
    ['text is a number', { ...base(), parts: [{ text: 5 }] }],
    ['raw not base64', { ...base(), parts: [{ raw: '%%%' }] }],
    ['metadata is an array', { ...base(), metadata: [1] }],
    ['contextId is an object', { ...base(), contextId: {} }],
    ['taskId is a number', { ...base(), taskId: 3 }],
    ['referenceTaskIds holds numbers', { ...base(), referenceTaskIds: [1] }],
  ];
  for (const [name, message] of badMessages) {
    test(`SendMessage: ${name} is -32602`, async () => {
      const r = await rpc(node.url, 'SendMessage', message === undefined ? {} : { message });
      expect(r.error.code).toBe(-32602);
    });
  }

  test('wrong types in configuration and other params are -32602', async () => {
    const cases: [string, unknown][] = [
      ['SendMessage', { message: base(), configuration: { returnImmediately: 'yes' } }],
      ['SendMessage', { message: base(), configuration: { historyLength: -1 } }],
      ['SendMessage', { message: base(), configuration: { historyLength: 1.5 } }],
      ['SendMessage', { message: base(), configuration: 'fast' }],
      ['GetTask', {}],
      ['GetTask', { id: 42 }],
      ['GetTask', { id: crypto.randomUUID(), historyLength: 'all' }],
      ['ListTasks', { pageSize: 0 }],
      ['ListTasks', { pageSize: 1000 }],
      ['ListTasks', { status: 'DONE' }],
      ['ListTasks', { statusTimestampAfter: 'yesterday' }],
      ['ListTasks', { pageToken: 'not-a-token' }],
      ['CancelTask', { id: null }],
      ['CreateTaskPushNotificationConfig', { taskId: crypto.randomUUID() }],
    ];
    for (const [method, params] of cases) {
      const r = await rpc(node.url, method, params);
      expect([method, r.error?.code]).toEqual([method, -32602]);
    }
    const r03 = await rpc(
      node.url,
      'message/send',
      {
        message: {
          kind: 'message',
          messageId: 'm',
          role: 'user',
          parts: [{ kind: 'image', x: 1 }],
        },
      },
      null,
    );
    expect(r03.error.code).toBe(-32602);
  });

  test('an unsupported media type is -32005', async () => {
    const r = await rpc(node.url, 'SendMessage', {
      message: { ...base(), parts: [{ raw: 'AAAA', mediaType: 'image/png' }] },
    });
    expect(r.error.code).toBe(-32005);
  });

  test('a body over the limit is refused with 413 and -32600, and the node keeps serving', async () => {
    const huge = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'SendMessage',
      params: { message: { ...base(), parts: [{ text: 'x'.repeat(200_000) }] } },
    });
    const r = await rawPost(node.url, huge, { 'A2A-Version': '1.0' });
    expect(r.status).toBe(413);
    expect(r.json.error.code).toBe(-32600);
    // Same again without a Content-Length the server could trust: a chunked body.
    const chunked = new ReadableStream({
      start(c) {
        for (let i = 0; i < 20; i++) c.enqueue(new TextEncoder().encode('x'.repeat(10_000)));
        c.close();
      },
    });
    const res = await fetch(`${node.url}/a2a`, {
      method: 'POST',
      body: chunked,
      headers: { 'A2A-Version': '1.0', 'Content-Type': 'application/json' },
    });
    expect(res.status).toBe(413);
    expect(
      (
        await rpc(node.url, 'SendMessage', {
          message: { ...base(), messageId: 'tck-complete-task-after' },
        })
      ).result.task.status.state,
    ).toBe('TASK_STATE_COMPLETED');
  });

  test('path-like and foreign task ids are -32001 and touch no file', async () => {
    const tasksDir = join(node.dataDir, 'conformance', 'tasks');
    const before = readdirSync(tasksDir).sort();
    const ids = [
      '../../etc/passwd',
      '../tasks',
      '/etc/passwd',
      '..%2F..%2Fetc%2Fpasswd',
      'C:\\Windows\\win.ini',
      '',
      ' ',
      'a'.repeat(300),
    ];
    for (const id of ids) {
      const calls: [string, unknown, '1.0' | null][] = [
        ['GetTask', { id }, '1.0'],
        ['CancelTask', { id }, '1.0'],
        ['SubscribeToTask', { id }, '1.0'],
        ['CreateTaskPushNotificationConfig', { taskId: id, url: 'http://127.0.0.1:9/x' }, '1.0'],
        ['tasks/get', { id }, null],
        ['tasks/pushNotificationConfig/list', { id }, null],
      ];
      // An empty taskId is ProtoJSON's default value, i.e. "no task": it would start a new task.
      if (id !== '') calls.push(['SendMessage', { message: { ...base(), taskId: id } }, '1.0']);
      for (const [method, params, v] of calls) {
        const r = await rpc(node.url, method, params, v);
        expect([method, id, [-32001, -32602].includes(r.error?.code)]).toEqual([method, id, true]);
      }
    }
    expect(readdirSync(tasksDir).sort()).toEqual(before);
    expect(existsSync(join(node.dataDir, 'etc'))).toBe(false);
    expect((await fetch(`${node.url}/health`)).status).toBe(200);
  });

  test('no request produces a 5xx', async () => {
    const bodies = [
      '{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"x","role":"ROLE_USER","parts":[{"data":{"__proto__":{"a":1}}}]}}}',
      '{"jsonrpc":"2.0","id":1,"method":"ListTasks","params":[]}',
      '{"jsonrpc":"2.0","id":1e400,"method":"GetTask"}',
      '[[[[]]]]',
      '{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":{"$gt":""}}}',
    ];
    for (const b of bodies) {
      const r = await rawPost(node.url, b, { 'A2A-Version': '1.0' });
      expect(r.status).toBeLessThan(500);
      expect(r.json.jsonrpc ?? r.json[0]?.jsonrpc).toBe('2.0');
    }
  });
});
