/**
 * OpenTelemetry's A2A semantic conventions (semantic-conventions-genai, docs/gen-ai/a2a.md) on the
 * spans a node and the hub export, received by a real OTLP/HTTP collector stand-in: the official
 * @a2a-js/sdk client calls a node over JSON-RPC, HTTP+JSON and gRPC, each call under a
 * `traceparent` of its own, and each operation arrives as a SERVER span named after its method,
 * child of the caller's span, with `a2a.method.name`, `a2a.protocol.version`, `a2a.message.id`,
 * `a2a.task.id`, `a2a.task.state`, `gen_ai.conversation.id`, `gen_ai.agent.*` from the card, and a
 * refusal's `error.type` with ERROR status; a stream's span ends with its last state. Through the
 * hub, `fleet.message` is a CLIENT `SendMessage` span and the node's SERVER span hangs under it.
 * The node's `/metrics` labels its operations with the same names. An MCP tool call's
 * `_meta.traceparent` puts the fleet call the hub makes for it in that trace.
 */

import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { Role } from '@a2a-js/sdk';
import {
  ClientFactory,
  ClientFactoryOptions,
  JsonRpcTransportFactory,
  RestTransportFactory,
} from '@a2a-js/sdk/client';
import { GrpcTransportFactory } from '@a2a-js/sdk/client/grpc';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import conformance from '../node/conformance.ts';
import { createOtlpExporter } from '../lib/fleet/otlp.ts';
import { Catalog } from '../lib/catalog/catalog.ts';
import { childContext, withTrace } from '../lib/telemetry/trace-context.ts';
import { attr, checkOtlpRequest, startOtlpReceiver, type OtlpReceiver } from './support/otlp.ts';
import { startNode, TEST_TOKEN, type TestNode } from './support/node.ts';
import { startFleet, type RunningFleet } from './support/fleet.ts';
import { parsePrometheus, valueOf } from './support/prometheus.ts';

setDefaultTimeout(30_000); // per file (Bun scopes it so): real servers and processes are slow on a busy machine

let receiver: OtlpReceiver;
let tck: TestNode;
const exporter = (self: string) =>
  createOtlpExporter({ url: `${receiver.url}/v1/traces`, headers: {}, self, delayMs: 5 });

beforeAll(async () => {
  receiver = startOtlpReceiver();
  tck = await startNode(conformance(), { spanExport: exporter('conformance') });
});
afterAll(async () => {
  await tck?.dispose();
  receiver?.stop();
});

const textPart = (t: string) => ({
  content: { $case: 'text' as const, value: t },
  filename: '',
  mediaType: 'text/plain',
  metadata: undefined,
});
const message = (messageId: string) =>
  ({
    messageId,
    role: Role.ROLE_USER,
    parts: [textPart('hello')],
    contextId: '',
    taskId: '',
    extensions: [],
    referenceTaskIds: [],
    metadata: undefined,
  }) as any;

const BINDINGS = [
  ['JSON-RPC', () => new JsonRpcTransportFactory()],
  ['HTTP+JSON', () => new RestTransportFactory()],
  ['gRPC', () => new GrpcTransportFactory()],
] as const;

const server = (spans: any[], name: string) => spans.filter((s) => s.name === name && s.kind === 2);

describe('a node exports a SERVER span per operation, on every binding', () => {
  for (const [binding, transport] of BINDINGS)
    test(`${binding}: SendMessage, GetTask, a refused GetTask and a stream`, async () => {
      const client: any = await new ClientFactory({
        ...ClientFactoryOptions.default,
        transports: [transport()],
      }).createFromUrl(tck.url);
      const caller = childContext();
      const opts = {
        serviceParameters: {
          authorization: `Bearer ${TEST_TOKEN}`,
          traceparent: `00-${caller.traceId}-${caller.spanId}-01`,
        },
      };
      const id = `otel-${binding}-${crypto.randomUUID()}`;
      const sent = await client.sendMessage({ message: message(id) }, opts);
      const task = sent.task ?? sent;
      await client.getTask({ id: task.id, historyLength: 0 }, opts);
      const refusedGet = await client.getTask({ id: 'no-such-task', historyLength: 0 }, opts).then(
        () => 'answered',
        () => 'refused',
      );
      expect(refusedGet).toBe('refused');
      const streamed = `tck-stream-001-${crypto.randomUUID()}`;
      for await (const _ of client.sendMessageStream({ message: message(streamed) }, opts));

      const spans = await receiver.waitFor(caller.traceId, 4);
      for (const r of receiver.requests) checkOtlpRequest(r.body);
      const [send] = server(spans, 'SendMessage');
      expect(send).toBeDefined();
      expect(send.parentSpanId).toBe(caller.spanId);
      expect(send.status.code).toBe(0);
      for (const [key, value] of [
        ['a2a.method.name', 'SendMessage'],
        ['a2a.protocol.version', '1.0'],
        ['a2a.message.id', id],
        ['a2a.task.id', task.id],
        ['a2a.task.state', 'TASK_STATE_COMPLETED'],
        ['gen_ai.conversation.id', task.contextId],
        ['gen_ai.agent.name', 'conformance'],
      ])
        expect([key, attr(send, key)]).toEqual([key, value]);
      expect(attr(send, 'gen_ai.agent.description')).toEqual(expect.stringContaining('TCK'));
      expect(attr(send, 'error.type')).toBeUndefined();

      const gets = server(spans, 'GetTask');
      const ok = gets.find((s) => attr(s, 'a2a.task.id') === task.id);
      const refused = gets.find((s) => attr(s, 'a2a.task.id') === 'no-such-task');
      expect(attr(ok, 'a2a.task.state')).toBe('TASK_STATE_COMPLETED');
      expect([refused.status.code, attr(refused, 'error.type')]).toEqual([2, '-32001']);

      const stream = (await receiver.waitFor(caller.traceId, 4)).find(
        (s) => s.name === 'SendStreamingMessage',
      );
      expect([attr(stream, 'a2a.method.name'), attr(stream, 'a2a.message.id')]).toEqual([
        'SendStreamingMessage',
        streamed,
      ]);
      expect(attr(stream, 'a2a.task.state')).toBe('TASK_STATE_COMPLETED');
      expect(BigInt(stream.endTimeUnixNano)).toBeGreaterThanOrEqual(
        BigInt(stream.startTimeUnixNano),
      );
      client.transport?.close?.();
    });

  test('0.3 methods are named as 1.0 names them; /metrics labels operations with the same names', async () => {
    const caller = childContext();
    const res = await fetch(`${tck.url}/a2a`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        authorization: `Bearer ${TEST_TOKEN}`,
        traceparent: `00-${caller.traceId}-${caller.spanId}-01`,
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tasks/get', params: { id: 'gone' } }),
    });
    expect((await res.json()).error.code).toBe(-32001);
    const [span] = await receiver.waitFor(caller.traceId, 1);
    expect([span.name, attr(span, 'a2a.protocol.version'), attr(span, 'error.type')]).toEqual([
      'GetTask',
      '0.3',
      '-32001',
    ]);
    const metrics = parsePrometheus(
      await (
        await fetch(`${tck.url}/metrics`, { headers: { authorization: `Bearer ${TEST_TOKEN}` } })
      ).text(),
    );
    const labels = {
      a2a_method_name: 'GetTask',
      a2a_protocol_version: '0.3',
      error_type: '-32001',
    };
    expect(valueOf(metrics, 'lume_a2a_server_operations_total', labels)).toBeGreaterThanOrEqual(1);
    expect(
      valueOf(metrics, 'lume_task_states_total', { a2a_task_state: 'TASK_STATE_COMPLETED' }),
    ).toBeGreaterThanOrEqual(3);
  });
});

describe('through the hub', () => {
  let f: RunningFleet;
  const echo = {
    name: 'echo',
    description: 'Echoes',
    catalog: new Catalog([
      {
        id: 'echo.say',
        name: 'Say',
        description: 'Says the word back',
        tags: ['echo'],
        keywords: ['say'],
        readOnly: true,
        args: { word: { type: 'string', description: 'the word', required: true } },
        run: ({ word }: { word: string }) => ({ said: word }),
      },
    ]),
  };
  beforeAll(async () => {
    f = await startFleet([echo as any], {
      hub: { otlp: { url: `${receiver.url}/v1/traces`, headers: {}, delayMs: 5 } },
      nodes: (name) => ({ spanExport: exporter(name) }),
    });
  });
  afterAll(() => f?.stop());

  test('fleet.message is a CLIENT SendMessage span; the node SERVER span hangs under it', async () => {
    const caller = childContext();
    const r = await withTrace(caller, () =>
      f.hub.invoker.message('echo', 'echo.say', { word: 'hi' }, { contextId: 'ctx-otel-1' }),
    );
    expect(r).toMatchObject({ ok: true, result: { said: 'hi' } });
    const spans = await receiver.waitFor(caller.traceId, 2);
    for (const r of receiver.requests) checkOtlpRequest(r.body);
    const client = spans.find((s) => s.kind === 3);
    const served = spans.find((s) => s.kind === 2);
    expect(client.name).toBe('SendMessage');
    expect(client.parentSpanId).toBe(caller.spanId);
    expect(served.parentSpanId).toBe(client.spanId);
    for (const span of [client, served]) {
      expect(attr(span, 'a2a.method.name')).toBe('SendMessage');
      expect(attr(span, 'gen_ai.conversation.id')).toBe('ctx-otel-1');
      expect(attr(span, 'a2a.task.state')).toBe('TASK_STATE_COMPLETED');
      expect(attr(span, 'a2a.protocol.version')).toBe('1.0');
    }
    expect(attr(client, 'a2a.message.id')).toBe(attr(served, 'a2a.message.id'));
    expect(attr(client, 'a2a.task.id')).toBe(attr(served, 'a2a.task.id'));
    expect(attr(client, 'server.port')).toBe(String(new URL(f.nodes.get('echo')!.url).port));
    expect([attr(client, 'gen_ai.agent.name'), attr(served, 'gen_ai.agent.name')]).toEqual([
      'echo',
      'echo',
    ]);
  });

  test("an MCP tool call's _meta.traceparent puts the call the hub makes in that trace", async () => {
    const client = new Client({ name: 'otel-test', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${f.hubUrl}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${TEST_TOKEN}` } },
      }),
    );
    try {
      const caller = childContext();
      const traceparent = `00-${caller.traceId}-${caller.spanId}-01`;
      const answer = await client.callTool({
        name: 'echo_say',
        arguments: { word: 'via mcp' },
        _meta: { traceparent },
      });
      expect(answer.isError).toBeFalsy();
      // The hub's record of the call (written before the tool answers) is in _meta's trace.
      const records = (
        (await (
          await fetch(`${f.hubUrl}/api/trace?traceId=${caller.traceId}`, {
            headers: { authorization: `Bearer ${TEST_TOKEN}` },
          })
        ).json()) as any
      ).records as any[];
      const said = records.find((r) => r.capability === 'echo.say');
      expect([said.to, said.traceId]).toEqual(['echo', caller.traceId]);
    } finally {
      await client.close();
    }
  });

  test("the hub's own node exports its SERVER spans through the hub's exporter", async () => {
    const caller = childContext();
    const res = await fetch(`${f.hubUrl}/a2a`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'A2A-Version': '1.0',
        authorization: `Bearer ${TEST_TOKEN}`,
        traceparent: `00-${caller.traceId}-${caller.spanId}-01`,
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'GetTask', params: { id: 'nope' } }),
    });
    expect((await res.json()).error.code).toBe(-32001);
    const [span] = await receiver.waitFor(caller.traceId, 1);
    expect([span.name, span.kind, attr(span, 'gen_ai.agent.name')]).toEqual(['GetTask', 2, 'a2a']);
  });
});
