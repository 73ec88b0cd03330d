/**
 * What the A2A conformance kit expects, checked without the kit: the conformance agent's
 * scenarios (unknown messages per protocol version, the direct message text, follow-ups routed
 * by their own messageId prefix), a card whose capabilities hold only A2A 1.0 fields, JSON-RPC
 * bodies of another Content-Type refused before parsing, and a readable webhook refusal.
 */

import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { AGENT_BACKED_EXTENSION, readAgentBacked } from '../lib/a2a/card/card.ts';
import { WebhookSender } from '../lib/a2a/push/delivery.ts';
import { memoryLog } from '../lib/log.ts';
import conformance, { unhandledText } from '../node/conformance.ts';
import scanner from '../node/scanner/index.ts';
import {
  FIXTURES,
  msgV03,
  msgV1,
  rawPost,
  rpc,
  sseFrames,
  startNode,
  streamRpc,
  type TestNode,
} from './support/node.ts';

setDefaultTimeout(20_000); // per file (Bun scopes it so): real servers and processes are slow on a busy machine

let node: TestNode;
beforeAll(async () => {
  // The fleet lists loopback once per member; the refusal message must not repeat it.
  node = await startNode(conformance(), {
    pushAllowHosts: [
      '127.0.0.1',
      '127.0.0.1',
      'localhost',
      'Example.com',
      'example.com',
      '127.0.0.1',
    ],
  });
});
afterAll(() => node.dispose());

const states = (frames: any[]) =>
  frames.map((f) => f.result.statusUpdate?.status.state ?? f.result.status?.state).filter(Boolean);

describe('a message with no known messageId prefix', () => {
  test('over 1.0 its stream ends: the task completes with an echo of the messageId', async () => {
    const messageId = `kit-${crypto.randomUUID()}`;
    const frames: any[] = [];
    for await (const f of sseFrames(
      await streamRpc(node.url, 'SendStreamingMessage', {
        message: msgV1('anything', { messageId }),
      }),
    ))
      frames.push(f);
    const last = frames.at(-1).result.statusUpdate;
    expect(last.status.state).toBe('TASK_STATE_COMPLETED');
    expect(last.status.message.parts).toEqual([{ text: unhandledText(messageId) }]);
    expect(unhandledText(messageId)).toBe(`Unhandled messageId prefix: ${messageId}`);
  });

  test('over 0.3 its stream stays open on working until the task is canceled', async () => {
    const res = await streamRpc(node.url, 'message/stream', { message: msgV03('anything') }, '0.3');
    const frames: any[] = [];
    for await (const f of sseFrames(res)) {
      frames.push(f);
      if (f.result.kind === 'status-update' && f.result.status.state === 'working') {
        expect(f.result.final).toBe(false);
        const canceled = await rpc(node.url, 'tasks/cancel', { id: f.result.taskId }, null);
        expect(canceled.result.status.state).toBe('canceled');
      }
    }
    expect(states(frames)).toEqual(['submitted', 'working', 'canceled']);
    expect(frames.at(-1).result.final).toBe(true);
  });

  test('a blocking 1.0 send answers the completed task; a 0.3 send answers it working', async () => {
    const v1 = (await rpc(node.url, 'SendMessage', { message: msgV1('x', { messageId: 'm-1' }) }))
      .result.task;
    expect([v1.status.state, v1.status.message.parts[0].text]).toEqual([
      'TASK_STATE_COMPLETED',
      'Unhandled messageId prefix: m-1',
    ]);
    const v03 = (await rpc(node.url, 'message/send', { message: msgV03('x') }, null)).result;
    expect(v03.status.state).toBe('working');
  });
});

describe('scenarios', () => {
  test('tck-message-response answers a Message whose text is exactly "Direct message response"', async () => {
    const r = await rpc(node.url, 'SendMessage', {
      message: msgV1('hi', { messageId: 'tck-message-response-1' }),
    });
    expect(r.result).toEqual({
      message: {
        messageId: expect.any(String),
        contextId: expect.any(String),
        role: 'ROLE_AGENT',
        parts: [{ text: 'Direct message response' }],
      },
    });
  });

  test('follow-ups are routed by their own messageId prefix: input-required twice, then complete', async () => {
    const send = (text: string, messageId: string, taskId?: string) =>
      rpc(node.url, 'SendMessage', {
        message: msgV1(text, { messageId, ...(taskId ? { taskId } : {}) }),
      });
    const task = (await send('start', 'tck-input-required-a')).result.task;
    expect(task.status.state).toBe('TASK_STATE_INPUT_REQUIRED');
    for (const [i, text] of ['history 1', 'history 2'].entries()) {
      const again = (await send(text, `tck-input-required-f${i}`, task.id)).result.task;
      expect([again.id, again.status.state]).toEqual([task.id, 'TASK_STATE_INPUT_REQUIRED']);
    }
    const done = (await send('finish', 'tck-complete-task-f', task.id)).result.task;
    expect([done.id, done.status.state, done.status.message.parts[0].text]).toEqual([
      task.id,
      'TASK_STATE_COMPLETED',
      'Hello from TCK',
    ]);
    const users = done.history
      .filter((m: any) => m.role === 'ROLE_USER')
      .map((m: any) => m.parts[0].text);
    expect(users).toEqual(['start', 'history 1', 'history 2', 'finish']);
  });

  test('over 0.3 a follow-up with no known prefix keeps the task working', async () => {
    const first = (await rpc(node.url, 'message/send', { message: msgV03('one') }, null)).result;
    const next = (
      await rpc(node.url, 'message/send', { message: msgV03('two', { taskId: first.id }) }, null)
    ).result;
    expect([next.id, next.status.state]).toEqual([first.id, 'working']);
  });
});

describe('agent card capabilities', () => {
  // The A2A 1.0 AgentCapabilities and AgentExtension messages, field for field.
  const CAPABILITY_FIELDS = ['streaming', 'pushNotifications', 'extensions', 'extendedAgentCard'];
  const EXTENSION_FIELDS = ['uri', 'description', 'required', 'params'];

  test('hold only A2A 1.0 fields; agent-backed is a declared extension with params', async () => {
    for (const def of [conformance(), scanner({ fixturesDir: FIXTURES })]) {
      const n = def.name === 'conformance' ? node : await startNode(def);
      try {
        const card = await (await fetch(`${n.url}/.well-known/agent-card.json`)).json();
        const caps = card.capabilities;
        expect(Object.keys(caps).filter((k) => !CAPABILITY_FIELDS.includes(k))).toEqual([]);
        for (const ext of caps.extensions) {
          expect(Object.keys(ext).filter((k) => !EXTENSION_FIELDS.includes(k))).toEqual([]);
          expect([
            typeof ext.uri,
            typeof ext.description,
            typeof ext.required,
            typeof ext.params,
          ]).toEqual(['string', 'string', 'boolean', 'object']);
        }
        expect(caps.extensions.filter((e: any) => e.uri === AGENT_BACKED_EXTENSION)).toEqual([
          {
            uri: AGENT_BACKED_EXTENSION,
            description: expect.any(String),
            required: false,
            params: { agentBacked: false },
          },
        ]);
        expect(readAgentBacked(card)).toBe(false);
      } finally {
        if (n !== node) await n.dispose();
      }
    }
  });

  test('a card without the extension reads as unknown, not as false', () => {
    expect(readAgentBacked({ capabilities: { streaming: true } })).toBeNull();
    expect(
      readAgentBacked({
        capabilities: {
          extensions: [{ uri: AGENT_BACKED_EXTENSION, params: { agentBacked: 'yes' } }],
        },
      }),
    ).toBeNull();
    expect(readAgentBacked(null)).toBeNull();
    expect(
      readAgentBacked({
        capabilities: {
          extensions: [{ uri: AGENT_BACKED_EXTENSION, params: { agentBacked: true } }],
        },
      }),
    ).toBe(true);
  });
});

describe('JSON-RPC Content-Type', () => {
  const taskCount = async () =>
    (await rpc(node.url, 'ListTasks', { pageSize: 1 })).result.totalSize;

  test('a body sent as text/plain is refused with -32005 before it is parsed, and starts nothing', async () => {
    const before = await taskCount();
    const json = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'SendMessage',
      params: { message: msgV1('x', { messageId: 'tck-complete-task-ct' }) },
    });
    for (const body of [json, "{'jsonrpc': '2.0', 'id': 1}"]) {
      const r = await rawPost(node.url, body, {
        'Content-Type': 'text/plain',
        'A2A-Version': '1.0',
      });
      expect(r.status).toBe(200);
      expect(r.json).toEqual({
        jsonrpc: '2.0',
        id: null,
        error: {
          code: -32005,
          message: expect.stringContaining('text/plain'),
          data: [
            expect.objectContaining({
              reason: 'CONTENT_TYPE_NOT_SUPPORTED',
              domain: 'a2a-protocol.org',
            }),
          ],
        },
      });
    }
    expect(await taskCount()).toBe(before);
  });

  test('application/json (with parameters) and application/a2a+json are accepted; a missing header is refused (a browser sends none on a cross-site simple POST)', async () => {
    const body = JSON.stringify({
      jsonrpc: '2.0',
      id: 7,
      method: 'GetTask',
      params: { id: 'no-such-task' },
    });
    for (const type of ['application/json; charset=utf-8', 'Application/A2A+JSON', null]) {
      const req = new Request(`${node.url}/a2a`, {
        method: 'POST',
        headers: { 'A2A-Version': '1.0' },
        body: new Blob([body], type === null ? {} : { type }),
      });
      expect(req.headers.get('content-type')).toBe(type === null ? null : type.toLowerCase());
      expect((await (await fetch(req)).json()).error.code).toBe(type === null ? -32005 : -32001);
    }
  });
});

describe('webhook refusal', () => {
  test('says which kind of address is refused and how to allow it', async () => {
    const task = (
      await rpc(node.url, 'SendMessage', {
        message: msgV1('x', { messageId: 'tck-input-required-push' }),
      })
    ).result.task;
    const r = await rpc(node.url, 'CreateTaskPushNotificationConfig', {
      taskId: task.id,
      url: 'https://10.1.2.3/in',
    });
    expect(r.error.code).toBe(-32602);
    expect(r.error.message).toBe(
      'webhook host 10.1.2.3 is a private address; only public addresses are allowed unless PUSH_ALLOW_HOSTS lists it',
    );
    // Listed names match whatever their case; loopback is refused unless listed (checked on the
    // sender: nothing is delivered).
    const sender = new WebhookSender({
      allowHosts: ['Example.com', 'hooks.lan'],
      log: memoryLog(),
    });
    expect([
      sender.refuse('https://EXAMPLE.com/tck-push-webhook'),
      sender.refuse('http://HOOKS.lan/x'),
      sender.refuse('http://127.0.0.1:9/x'),
    ]).toEqual([
      undefined,
      undefined,
      {
        code: 'ADDRESS_REFUSED',
        message:
          'webhook host 127.0.0.1 is a loopback address; only public addresses are allowed unless PUSH_ALLOW_HOSTS lists it',
        field: 'url',
      },
    ]);
  });
});
