/**
 * The gRPC binding from the outside, with @grpc/grpc-js sending bytes the test chooses: status
 * codes and ErrorInfo reasons (§10), `a2a-version`, bearer principals and a stranger's task,
 * hostile requests (bad protobuf, a message past 4 MiB, an unknown method, compression, two
 * messages, a non-gRPC request), `traceparent`, metrics, a stream ended by a shutdown, and
 * `grpc: false`. The node stays up through all of it.
 */

import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import http2 from 'node:http2';
import type * as grpc from '@grpc/grpc-js';
import { decodeMessage } from '../lib/a2a/grpc/decode.ts';
import { encodeMessage } from '../lib/a2a/grpc/encode.ts';
import { A2A_SCHEMA } from '../lib/a2a/proto/schema.ts';
import { grpcCallDeps, listenGrpc } from '../lib/a2a/grpc/server.ts';
import { createOperationTable } from '../lib/a2a/operation-table.ts';
import { ANONYMOUS } from '../lib/auth/principal.ts';
import { createMetricsRegistry } from '../lib/metrics/registry.ts';
import { currentTrace } from '../lib/telemetry/trace-context.ts';
import { TokenBook } from '../lib/auth/tokens.ts';
import conformance from '../node/conformance.ts';
import { grpcAddressOf, rawClient, serverStream, unary } from './support/grpc.ts';
import { startFleet } from './support/fleet.ts';
import { agentNode, startNode, TEST_TOKEN, type TestNode } from './support/node.ts';
import { parsePrometheus, valueOf as metricValue } from './support/prometheus.ts';

setDefaultTimeout(20_000); // per file (Bun scopes it so): real servers and processes are slow on a busy machine

const OTHER_TOKEN = 'other-principal-token-0123456789abcdef';
const V1 = { 'a2a-version': '1.0' };
const AUTH = { ...V1, authorization: `Bearer ${TEST_TOKEN}` };
const encode = (type: string, value: unknown) =>
  encodeMessage(A2A_SCHEMA, `lf.a2a.v1.${type}`, value);
const decode = (type: string, bytes: Uint8Array) => {
  const r = decodeMessage(A2A_SCHEMA, `lf.a2a.v1.${type}`, bytes);
  if (!r.ok) throw new Error(r.error.message);
  return r.result as any;
};
const send = (prefix: string, extra: Record<string, unknown> = {}) =>
  encode('SendMessageRequest', {
    message: {
      messageId: `${prefix}-${crypto.randomUUID()}`,
      role: 'ROLE_USER',
      parts: [{ text: 'hello' }],
    },
    ...extra,
  });

let node: TestNode;
let client: grpc.Client;
const traces: (string | undefined)[] = [];

beforeAll(async () => {
  node = await startNode(conformance(), {
    access: { tokens: TokenBook.of({ tester: TEST_TOKEN, other: OTHER_TOKEN }) },
  });
  client = rawClient(grpcAddressOf(node.node.card())!);
});
afterAll(async () => {
  client.close();
  await node.dispose();
});

describe('status codes and ErrorInfo', () => {
  test('TaskNotFound is NOT_FOUND with reason TASK_NOT_FOUND in a2a-protocol.org, and names the field', async () => {
    const r = await unary(client, 'GetTask', encode('GetTaskRequest', { id: 'no-such' }), AUTH);
    expect([r.code, r.reason, r.domain, r.field]).toEqual([
      5,
      'TASK_NOT_FOUND',
      'a2a-protocol.org',
      'id',
    ]);
    expect(r.details).toBe('Task not found: no-such');
  });

  test('a completed task is not cancelable (FAILED_PRECONDITION); the extended card is UNIMPLEMENTED', async () => {
    const done = await unary(client, 'SendMessage', send('tck-complete-task'), AUTH);
    const { task } = decode('SendMessageResponse', done.messages[0]!);
    expect(task.status.state).toBe('TASK_STATE_COMPLETED');
    const r = await unary(client, 'CancelTask', encode('CancelTaskRequest', { id: task.id }), AUTH);
    expect([r.code, r.reason]).toEqual([9, 'TASK_NOT_CANCELABLE']);
    const card = await unary(client, 'GetExtendedAgentCard', new Uint8Array(0), AUTH);
    expect([card.code, card.reason]).toEqual([12, 'UNSUPPORTED_OPERATION']);
  });

  test('bad params are INVALID_ARGUMENT with the field: a message without parts', async () => {
    const bad = encode('SendMessageRequest', {
      message: { messageId: 'm', role: 'ROLE_USER', parts: [] },
    });
    const r = await unary(client, 'SendMessage', bad, AUTH);
    expect([r.code, r.reason]).toEqual([3, 'INVALID_PARAMS']);
    expect(r.field).toBe('params.message.parts');
  });

  test('a2a-version: missing (0.3) and 99.0 are VERSION_NOT_SUPPORTED (UNIMPLEMENTED); 1.0.1 is 1.0', async () => {
    const bearer = { authorization: `Bearer ${TEST_TOKEN}` };
    const none = await unary(client, 'SendMessage', send('tck-complete-task'), bearer);
    expect([none.code, none.reason]).toEqual([12, 'VERSION_NOT_SUPPORTED']);
    expect(none.details).toContain('0.3');
    const future = await unary(client, 'SendMessage', send('tck-complete-task'), {
      ...bearer,
      'a2a-version': '99.0',
    });
    expect([future.code, future.reason]).toEqual([12, 'VERSION_NOT_SUPPORTED']);
    const patch = await unary(client, 'SendMessage', send('tck-complete-task'), {
      ...bearer,
      'a2a-version': '1.0.1',
    });
    expect(patch.code).toBe(0);
  });
});

describe('principals', () => {
  test('a call with two authorization entries is UNAUTHENTICATED, whichever of them is good', async () => {
    const session = http2.connect(`http://${grpcAddressOf(node.node.card())!}`, {
      strictSingleValueFields: false,
    } as http2.ClientSessionOptions);
    try {
      const trailers = await new Promise<Record<string, unknown>>((resolve, reject) => {
        // Raw header pairs: Node's client would otherwise keep one authorization, as its server does.
        const req = session.request([
          ':method',
          'POST',
          ':path',
          '/lf.a2a.v1.A2AService/SendMessage',
          'content-type',
          'application/grpc',
          'te',
          'trailers',
          'a2a-version',
          '1.0',
          'authorization',
          `Bearer ${TEST_TOKEN}`,
          'authorization',
          'Bearer someone-else',
        ] as unknown as http2.OutgoingHttpHeaders);
        req.on('trailers', resolve);
        req.on('response', (h) => h['grpc-status'] !== undefined && resolve(h));
        req.on('error', reject);
        req.resume();
        const body = send('tck-complete-task');
        const frame = new Uint8Array(5 + body.length);
        new DataView(frame.buffer).setUint32(1, body.length);
        frame.set(body, 5);
        req.end(frame);
      });
      expect(trailers['grpc-status']).toBe('16');
      expect(decodeURIComponent(String(trailers['grpc-message']))).toContain(
        'more than one authorization',
      );
    } finally {
      session.close();
    }
  });

  test('a wrong token is UNAUTHENTICATED; an anonymous caller may read but not cancel', async () => {
    const wrong = await unary(client, 'SendMessage', send('tck-complete-task'), {
      ...V1,
      authorization: 'Bearer not-a-token',
    });
    expect([wrong.code, wrong.reason, wrong.domain]).toEqual([16, 'UNAUTHENTICATED', 'lume-a2a']);
    const open = await unary(
      client,
      'SendMessage',
      send('tck-input-required', { configuration: { returnImmediately: true } }),
      V1,
    );
    const { task } = decode('SendMessageResponse', open.messages[0]!);
    const cancel = await unary(
      client,
      'CancelTask',
      encode('CancelTaskRequest', { id: task.id }),
      V1,
    );
    expect([cancel.code, cancel.reason]).toEqual([16, 'UNAUTHENTICATED']);
  });

  test('a task is visible to its principal only: another token gets NOT_FOUND, also on a stream', async () => {
    const mine = await unary(
      client,
      'SendMessage',
      send('tck-input-required', { configuration: { returnImmediately: true } }),
      AUTH,
    );
    const { task } = decode('SendMessageResponse', mine.messages[0]!);
    const other = { ...V1, authorization: `Bearer ${OTHER_TOKEN}` };
    const got = await unary(client, 'GetTask', encode('GetTaskRequest', { id: task.id }), other);
    expect([got.code, got.reason]).toEqual([5, 'TASK_NOT_FOUND']);
    const sub = await serverStream(
      client,
      'SubscribeToTask',
      encode('SubscribeToTaskRequest', { id: task.id }),
      other,
    );
    expect([sub.code, sub.reason, sub.messages.length]).toEqual([5, 'TASK_NOT_FOUND', 0]);
    const list = await unary(client, 'ListTasks', encode('ListTasksRequest', {}), other);
    expect(decode('ListTasksResponse', list.messages[0]!).tasks ?? []).not.toContainEqual(
      expect.objectContaining({ id: task.id }),
    );
  });
});

describe('hostile requests', () => {
  test('bytes that are not a SendMessageRequest: INVALID_ARGUMENT PROTOBUF_MALFORMED, nothing stored', async () => {
    const before = await node.node.store.count();
    for (const bytes of [[0x12, 0x05, 0x61], [0x12, 0x80], [0x13], [0x12, 0x02, 0xc3, 0x28]]) {
      const r = await unary(client, 'SendMessage', Uint8Array.from(bytes), AUTH);
      expect([r.code, r.reason]).toEqual([3, 'PROTOBUF_MALFORMED']);
    }
    expect(await node.node.store.count()).toBe(before);
  });

  test('a message past 4 MiB is RESOURCE_EXHAUSTED; the node serves the next call', async () => {
    const big = encode('SendMessageRequest', {
      message: {
        messageId: 'big',
        role: 'ROLE_USER',
        parts: [{ text: 'x'.repeat(4 * 1024 * 1024) }],
      },
    });
    const r = await unary(client, 'SendMessage', big, AUTH);
    expect([r.code, r.reason]).toEqual([8, 'GRPC_MESSAGE_TOO_LARGE']);
    const next = await unary(client, 'SendMessage', send('tck-complete-task'), AUTH);
    expect(next.code).toBe(0);
  });

  test('an unknown method is UNIMPLEMENTED', async () => {
    const r = await unary(client, 'DropAllTasks', new Uint8Array(0), AUTH);
    expect([r.code, r.reason]).toEqual([12, 'GRPC_UNKNOWN_METHOD']);
  });

  test('raw HTTP/2: a compressed message, two messages, no message, a JSON POST', async () => {
    const address = grpcAddressOf(node.node.card())!;
    const session = http2.connect(`http://${address}`);
    const call = (body: Uint8Array, type = 'application/grpc') =>
      new Promise<{ status: number; grpc?: string; reason?: string }>((resolve, reject) => {
        const req = session.request({
          ':method': 'POST',
          ':path': '/lf.a2a.v1.A2AService/GetTask',
          'content-type': type,
          te: 'trailers',
          ...AUTH,
        });
        let status = 0;
        req.on('response', (h) => (status = Number(h[':status'])));
        req.on('trailers', (t) =>
          resolve({
            status,
            grpc: String(t['grpc-status']),
            reason: String(t['grpc-message']),
          }),
        );
        req.on('end', () => resolve({ status }));
        req.on('error', reject);
        req.resume();
        req.end(body);
      });
    const msg = encode('GetTaskRequest', { id: 'x' });
    const prefix = (flag: number, n: number) => [flag, 0, 0, 0, n];
    expect(await call(Uint8Array.from([...prefix(1, msg.length), ...msg]))).toMatchObject({
      grpc: '12',
    });
    expect(
      await call(Uint8Array.from([...prefix(0, msg.length), ...msg, ...prefix(0, 0)])),
    ).toMatchObject({ grpc: '3' });
    expect(await call(new Uint8Array(0))).toMatchObject({ grpc: '3' });
    expect(await call(Uint8Array.from([1, 2, 3]), 'application/json')).toEqual({ status: 415 });
    session.close();
  });
});

describe('trace context, metrics', () => {
  test('traceparent metadata is the context the agent works in', async () => {
    const traced = await startNode(
      agentNode('traced', {
        handle(ctx) {
          traces.push(currentTrace()?.traceId);
          ctx.complete('ok');
        },
      }),
    );
    const c = rawClient(grpcAddressOf(traced.node.card())!);
    try {
      const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
      const r = await unary(c, 'SendMessage', send('plain'), {
        ...AUTH,
        traceparent: `00-${traceId}-00f067aa0ba902b7-01`,
      });
      expect(r.code).toBe(0);
      expect(traces).toEqual([traceId]);
    } finally {
      c.close();
      await traced.dispose();
    }
  });

  test('calls, failures by reason and latency are counted by method and status', async () => {
    const text = await (await fetch(`${node.url}/metrics`)).text();
    const m = parsePrometheus(text);
    expect(
      metricValue(m, 'lume_grpc_requests_total', { method: 'GetTask', status: 'NOT_FOUND' }),
    ).toBeGreaterThanOrEqual(1);
    expect(
      metricValue(m, 'lume_grpc_errors_total', {
        method: 'SendMessage',
        code: 'PROTOBUF_MALFORMED',
      }),
    ).toBe(4);
    expect(
      metricValue(m, 'lume_grpc_errors_total', { method: 'other', code: 'GRPC_UNKNOWN_METHOD' }),
    ).toBe(1);
    expect(text).toContain('lume_grpc_request_duration_seconds_count{method="SendMessage"}');
  });
});

describe('connections', () => {
  test('a connection with no call open is closed after the idle bound; the server keeps serving', async () => {
    const server = await listenGrpc(
      grpcCallDeps({
        operations: createOperationTable(node.node.engine, true),
        log: () => {},
        identify: () => ANONYMOUS,
        metrics: createMetricsRegistry(),
      }),
      '127.0.0.1',
      0,
      { idleMs: 200 },
    );
    try {
      const session = http2.connect(`http://127.0.0.1:${server.port}`);
      const closed = new Promise<string>((resolve) => {
        session.on('goaway', () => resolve('goaway'));
        session.on('close', () => resolve('close'));
      });
      session.on('error', () => {});
      expect(['goaway', 'close']).toContain(await closed);
      const c = rawClient(`127.0.0.1:${server.port}`);
      const r = await unary(c, 'GetTask', encode('GetTaskRequest', { id: 'x' }), V1);
      expect(r.reason).toBe('TASK_NOT_FOUND');
      c.close();
    } finally {
      await server.stop(100);
    }
  });
});

describe("the hub's node", () => {
  test('serves gRPC beside the hub, listed on its card, under the hub’s access policy', async () => {
    const f = await startFleet([]);
    try {
      const port = await f.hubGrpc;
      const card = await (await fetch(`${f.hubUrl}/.well-known/agent-card.json`)).json();
      expect(grpcAddressOf(card)).toBe(`127.0.0.1:${port}`);
      const c = rawClient(grpcAddressOf(card)!);
      const list = await unary(c, 'ListTasks', encode('ListTasksRequest', {}), AUTH);
      expect([list.code, decode('ListTasksResponse', list.messages[0]!).totalSize ?? 0]).toEqual([
        0, 0,
      ]);
      const wrong = await unary(c, 'ListTasks', encode('ListTasksRequest', {}), {
        ...V1,
        authorization: 'Bearer nope',
      });
      expect(wrong.code).toBe(16);
      c.close();
    } finally {
      await f.stop();
    }
  });
});

describe('streams and stops', () => {
  test('a stream open at shutdown ends with UNAVAILABLE, reason SHUTTING_DOWN; grpc: false serves none', async () => {
    const other = await startNode(conformance());
    const c = rawClient(grpcAddressOf(other.node.card())!);
    let stopping: Promise<void> | undefined;
    const r = await serverStream(
      c,
      'SendStreamingMessage',
      send('test-resubscribe-message-id'),
      AUTH,
      () => {
        stopping ??= other.stop();
      },
    );
    await stopping;
    c.close();
    expect([r.code, r.reason, r.domain]).toEqual([14, 'SHUTTING_DOWN', 'lume-a2a']);
    expect(r.messages.length).toBeGreaterThanOrEqual(1);
    expect(decode('StreamResponse', r.messages[0]!).task.id).toBeString();

    const off = await startNode(conformance(), { grpc: false, dataDir: other.dataDir });
    expect(grpcAddressOf(off.node.card())).toBeUndefined();
    await off.dispose();
  });
});
