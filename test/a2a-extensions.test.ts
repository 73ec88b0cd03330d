/**
 * A2A extensions negotiated (A2A 1.0 §3.3.4, §4.6) on every binding of a node whose author
 * declared two (one `required`): the card lists them; a call that does not name the required one
 * is refused with ExtensionSupportRequiredError (-32008) on JSON-RPC (the official SDK's client
 * too), HTTP+JSON and gRPC, streams included, before any task exists; a call that names them gets
 * them back in `A2A-Extensions` (an answer, an SSE stream, gRPC metadata), and a capability reads
 * whether its caller activated the optional one. An over-long list is a coded -32600; in this
 * test's own process (Bun's 16 KiB header default) 100 KB of header is refused before any route by
 * the HTTP server (431) and the gRPC port alike; test/a2a-extensions-headers.test.ts is a node
 * started as the kit starts it, where it gets the coded error.
 */

import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import type * as grpc from '@grpc/grpc-js';
import { ClientFactory, ClientFactoryOptions, JsonRpcTransportFactory } from '@a2a-js/sdk/client';
import { Role } from '@a2a-js/sdk';
import { encodeMessage } from '../lib/a2a/grpc/encode.ts';
import { A2A_SCHEMA } from '../lib/a2a/proto/schema.ts';
import { capability, defineNode, extensionActive } from '../lib/kit/node.ts';
import { grpcAddressOf, rawClient, serverStream, unary } from './support/grpc.ts';
import { startNode, TEST_TOKEN, type TestNode } from './support/node.ts';

setDefaultTimeout(30_000); // per file (Bun scopes it so): real servers are slow on a busy machine

const REQUIRED = 'urn:test:extension:contract:v1';
const OPTIONAL = 'https://example.com/ext/verbose/v1';
const BOTH = `${REQUIRED}, ${OPTIONAL}`;

const extNode = defineNode(() => ({
  name: 'ext',
  description: 'A node with extensions',
  extensions: [
    { uri: REQUIRED, description: 'Calls must accept the contract', required: true },
    { uri: OPTIONAL, description: 'Longer answers', required: false, params: { level: 2 } },
  ],
  capabilities: [
    capability({
      id: 'ext.check',
      name: 'Check',
      description: 'Says whether the caller activated the optional extension',
      tags: ['test'],
      keywords: ['check'],
      readOnly: true,
      args: {},
      run: () => ({ verbose: extensionActive(OPTIONAL), contract: extensionActive(REQUIRED) }),
    }),
  ],
}));

let node: TestNode;
let grpcClient: grpc.Client;
beforeAll(async () => {
  node = await startNode(extNode());
  grpcClient = rawClient(grpcAddressOf(node.node.card())!);
});
afterAll(async () => {
  grpcClient?.close();
  await node?.dispose();
});

const AUTH = { authorization: `Bearer ${TEST_TOKEN}` };
const checkMessage = () => ({
  message: {
    messageId: crypto.randomUUID(),
    role: 'ROLE_USER',
    parts: [{ data: { skill: 'ext.check', args: {} } }],
  },
});
const rpc = (method: string, params: unknown, headers: Record<string, string> = {}) =>
  fetch(`${node.url}/a2a`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'A2A-Version': '1.0', ...AUTH, ...headers },
    body: JSON.stringify({ jsonrpc: '2.0', id: 'req-7', method, params }),
  });
const rest = (path: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${node.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'A2A-Version': '1.0', ...AUTH, ...headers },
    body: JSON.stringify(body),
  });
const grpcSend = () =>
  encodeMessage(A2A_SCHEMA, 'lf.a2a.v1.SendMessageRequest', {
    message: { messageId: crypto.randomUUID(), role: 'ROLE_USER', parts: [{ text: 'hi' }] },
  });
const GRPC_MD = { 'a2a-version': '1.0', ...AUTH };
const tasksNow = async () =>
  (await (await rpc('ListTasks', {}, { 'A2A-Extensions': REQUIRED })).json()).result.tasks.length;

describe('A2A extensions', () => {
  test('the card declares the author’s extensions after the agent-backed one', async () => {
    const card = await (await fetch(`${node.url}/.well-known/agent-card.json`)).json();
    expect(card.capabilities.extensions.map((e: any) => [e.uri, e.required])).toEqual([
      ['urn:lume-a2a:extension:agent-backed:v1', false],
      [REQUIRED, true],
      [OPTIONAL, false],
    ]);
    expect(card.capabilities.extensions[2].params).toEqual({ level: 2 });
  });

  test('a call without the required extension is -32008 on every binding, streams included', async () => {
    const before = await tasksNow();
    const a = await (await rpc('SendMessage', checkMessage())).json();
    expect([a.id, a.error.code]).toEqual(['req-7', -32008]);
    expect(a.error.message).toContain(REQUIRED);
    const streamed = await rpc('SendStreamingMessage', checkMessage(), {
      'A2A-Extensions': OPTIONAL,
    });
    expect(streamed.headers.get('content-type')).toContain('application/json');
    expect((await streamed.json()).error.code).toBe(-32008);
    const r = await rest('/message:send', checkMessage());
    const rb = await r.json();
    expect([r.status, rb.error.status, rb.error.details[0].reason]).toEqual([
      400,
      'FAILED_PRECONDITION',
      'EXTENSION_SUPPORT_REQUIRED',
    ]);
    const rs = await rest('/message:stream', checkMessage());
    expect([rs.status, (await rs.json()).error.details[0].reason]).toEqual([
      400,
      'EXTENSION_SUPPORT_REQUIRED',
    ]);
    const g = await unary(grpcClient, 'SendMessage', grpcSend(), GRPC_MD);
    expect([g.code, g.reason]).toEqual([9, 'EXTENSION_SUPPORT_REQUIRED']); // FAILED_PRECONDITION
    const gs = await serverStream(grpcClient, 'SendStreamingMessage', grpcSend(), GRPC_MD);
    expect([gs.code, gs.reason, gs.messages.length]).toEqual([9, 'EXTENSION_SUPPORT_REQUIRED', 0]);
    // The official SDK's client sees the same refusal.
    const sdk: any = await new ClientFactory(
      ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
        transports: [new JsonRpcTransportFactory()],
      }),
    ).createFromUrl(node.url);
    const refused = await sdk
      .sendMessage(
        {
          message: {
            messageId: crypto.randomUUID(),
            role: Role.ROLE_USER,
            parts: [
              {
                content: { $case: 'text', value: 'hi' },
                filename: '',
                mediaType: 'text/plain',
                metadata: undefined,
              },
            ],
            contextId: '',
            taskId: '',
            extensions: [],
            referenceTaskIds: [],
            metadata: undefined,
          },
        },
        { serviceParameters: AUTH },
      )
      .then(
        () => 'answered',
        (e: Error) => e.message,
      );
    expect(refused).toContain(REQUIRED);
    // Nothing was started.
    expect(await tasksNow()).toBe(before);
  });

  test('named, they are echoed on answers and streams, and a capability reads them', async () => {
    const a = await rpc('SendMessage', checkMessage(), {
      'A2A-Extensions': `${BOTH}, urn:unknown`,
    });
    expect(a.headers.get('A2A-Extensions')).toBe(BOTH);
    const task = (await a.json()).result.task;
    expect(task.status.state).toBe('TASK_STATE_COMPLETED');
    expect(task.artifacts[0].parts[0].data).toEqual({ verbose: true, contract: true });
    const only = await rpc('SendMessage', checkMessage(), { 'A2A-Extensions': REQUIRED });
    expect(only.headers.get('A2A-Extensions')).toBe(REQUIRED);
    expect((await only.json()).result.task.artifacts[0].parts[0].data.verbose).toBe(false);
    // 0.3's header name is read too.
    const legacy = await rpc('SendMessage', checkMessage(), { 'X-A2A-Extensions': BOTH });
    expect(legacy.headers.get('A2A-Extensions')).toBe(BOTH);
    const s = await rpc('SendStreamingMessage', checkMessage(), { 'A2A-Extensions': BOTH });
    expect([s.headers.get('content-type'), s.headers.get('A2A-Extensions')]).toEqual([
      'text/event-stream',
      BOTH,
    ]);
    expect(await s.text()).toContain('TASK_STATE_COMPLETED');
    const r = await rest('/message:send', checkMessage(), { 'A2A-Extensions': BOTH });
    expect([r.status, r.headers.get('A2A-Extensions')]).toEqual([200, BOTH]);
    const g = await unary(grpcClient, 'SendMessage', grpcSend(), {
      ...GRPC_MD,
      'a2a-extensions': BOTH,
    });
    expect([g.code, g.extensions]).toEqual([0, BOTH]);
  });

  test('a list past its bounds is -32600; 100 KB of header is refused before any route', async () => {
    const long = `${REQUIRED}, ${'x'.repeat(9 * 1024)}`;
    const a = await (await rpc('SendMessage', checkMessage(), { 'A2A-Extensions': long })).json();
    expect([a.id, a.error.code]).toEqual(['req-7', -32600]);
    const many = Array.from({ length: 40 }, (_, i) => `urn:x:${i}`).join(',');
    const r = await rest('/message:send', checkMessage(), {
      'A2A-Extensions': `${REQUIRED},${many}`,
    });
    expect(r.status).toBe(400);
    const huge = { 'A2A-Extensions': `${REQUIRED}, ${'y'.repeat(100 * 1024)}` };
    expect((await rpc('SendMessage', checkMessage(), huge)).status).toBe(431);
    const g = await unary(grpcClient, 'SendMessage', grpcSend(), {
      ...GRPC_MD,
      'a2a-extensions': huge['A2A-Extensions'],
    });
    expect(g.code).not.toBe(0);
    // The node answers on.
    const ok = await rpc('SendMessage', checkMessage(), { 'A2A-Extensions': REQUIRED });
    expect((await ok.json()).result.task.status.state).toBe('TASK_STATE_COMPLETED');
  });
});
