/**
 * The gRPC port bounded in time and count, attacked from outside with raw sockets and node:http2
 * clients: a call whose message never finishes ends DEADLINE_EXCEEDED, a half-sent preface is cut,
 * connections past the per-process and per-address caps are closed, a reader that opens no
 * flow-control window loses its stream, and server streams share the per-principal stream cap
 * with SSE. Bounds are set small through options; the node's HTTP port answers throughout. And
 * the bound on decoded values: a body of empty items is refused while it is read, on gRPC,
 * JSON-RPC and HTTP+JSON alike, before its objects are built.
 */

import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import http2 from 'node:http2';
import net from 'node:net';
import { encodeMessage } from '../lib/a2a/grpc/encode.ts';
import { grpcCallDeps, listenGrpc, type GrpcBounds } from '../lib/a2a/grpc/server.ts';
import type { GrpcServerOptions } from '../lib/a2a/grpc/server.ts';
import { createOperationTable } from '../lib/a2a/operation-table.ts';
import { A2A_SCHEMA } from '../lib/a2a/proto/schema.ts';
import { ANONYMOUS } from '../lib/auth/principal.ts';
import { createMetricsRegistry } from '../lib/metrics/registry.ts';
import { SseStreams } from '../lib/sse/sse.ts';
import conformance from '../node/conformance.ts';
import { rawClient, serverStream, SERVICE, unary } from './support/grpc.ts';
import { startNode, type TestNode } from './support/node.ts';

setDefaultTimeout(20_000); // per file (Bun scopes it so): real servers are slow on a busy machine

const V1 = { 'a2a-version': '1.0' };
let node: TestNode;
beforeAll(async () => {
  node = await startNode(conformance());
});
afterAll(() => node.dispose());

/** A gRPC server over the test node's operations, with small bounds. */
async function serve(bounds: GrpcBounds, opts: Partial<GrpcServerOptions> = {}) {
  return listenGrpc(
    grpcCallDeps({
      operations: createOperationTable(node.node.engine, true),
      log: () => {},
      identify: () => ANONYMOUS,
      metrics: createMetricsRegistry(),
      ...opts,
    }),
    '127.0.0.1',
    0,
    bounds,
  );
}

const healthy = async () => (await fetch(`${node.url}/healthz`)).status;
const closed = (s: net.Socket | http2.ClientHttp2Session) =>
  new Promise<void>((resolve) => s.once('close', () => resolve()));
const PREFACE = 'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n';
const EMPTY_SETTINGS = Buffer.from([0, 0, 0, 4, 0, 0, 0, 0, 0]);

/** A raw socket that sends `bytes` and nothing more. */
function rawSocket(port: number, bytes: string | Buffer, localAddress?: string) {
  const s = net.connect({ port, host: '127.0.0.1', ...(localAddress ? { localAddress } : {}) });
  s.on('error', () => {});
  s.resume(); // reads what the server sends, so its end is seen
  s.once('connect', () => s.write(bytes));
  return s;
}

/** A connected HTTP/2 client session, its SETTINGS exchanged. */
async function h2(port: number, settings: http2.Settings = {}) {
  const session = http2.connect(`http://127.0.0.1:${port}`, { settings });
  session.on('error', () => {});
  await new Promise<void>((resolve) => session.once('remoteSettings', () => resolve()));
  return session;
}

/** Opens a call on `session`; resolves with its trailers' status, or the RST code of a cut stream. */
function call(session: http2.ClientHttp2Session, method: string, body?: Uint8Array, end = true) {
  const req = session.request({
    ':method': 'POST',
    ':path': `${SERVICE}/${method}`,
    'content-type': 'application/grpc',
    te: 'trailers',
    ...V1,
  });
  req.on('error', () => {});
  req.resume();
  const outcome = new Promise<{ status?: string; message?: string; rst?: number }>((resolve) => {
    req.on('trailers', (t) =>
      resolve({ status: String(t['grpc-status']), message: String(t['grpc-message']) }),
    );
    req.on('close', () => resolve({ rst: req.rstCode }));
  });
  if (body) req.write(body);
  if (end) req.end();
  return outcome;
}

describe('time bounds', () => {
  test('a call whose message never finishes ends DEADLINE_EXCEEDED GRPC_MESSAGE_TIMEOUT', async () => {
    const server = await serve({}, { messageMs: 150 });
    try {
      const session = await h2(server.port);
      // The prefix promises 1,000 bytes; ten arrive, and the call never ends its half.
      const part = new Uint8Array(15);
      new DataView(part.buffer).setUint32(1, 1000);
      const r = await call(session, 'GetTask', part, false);
      expect(r.status).toBe('4');
      expect(r.message).toContain('did not arrive in time');
      session.destroy();
      expect(await healthy()).toBe(200);
    } finally {
      await server.stop(100);
    }
  });

  test('a connection that sends half a preface, or a preface without SETTINGS, is cut', async () => {
    const server = await serve({ handshakeMs: 150 });
    try {
      const half = rawSocket(server.port, 'PRI * HTTP/2.0\r\n');
      const noSettings = rawSocket(server.port, PREFACE);
      await Promise.all([closed(half), closed(noSettings)]);
      expect(await healthy()).toBe(200);
    } finally {
      await server.stop(100);
    }
  });

  test('a reader that opens no flow-control window loses its stream after the grace', async () => {
    const server = await serve({}, { finalGraceMs: 150 });
    try {
      const session = await h2(server.port, { initialWindowSize: 0 });
      const empty = encodeMessage(A2A_SCHEMA, 'lf.a2a.v1.ListTasksRequest', {});
      const framed = new Uint8Array(5 + empty.length);
      framed.set(empty, 5);
      const r = await call(session, 'ListTasks', framed);
      // Cut with RST_STREAM: no trailers ever reached the reader.
      expect(r.status).toBeUndefined();
      session.destroy();
      expect(await healthy()).toBe(200);
    } finally {
      await server.stop(100);
    }
  });
});

describe('connection caps', () => {
  test('connections past the per-process cap are closed at once; the admitted ones serve', async () => {
    const server = await serve({ maxConnections: 2, maxPerAddress: 10 });
    try {
      const a = await h2(server.port);
      const b = await h2(server.port);
      const third = rawSocket(server.port, Buffer.concat([Buffer.from(PREFACE), EMPTY_SETTINGS]));
      await closed(third);
      const r = await call(a, 'Nope');
      expect(r.status).toBe('12');
      a.destroy();
      b.destroy();
    } finally {
      await server.stop(100);
    }
  });

  test('connections past the per-address cap are closed; another address still connects', async () => {
    const server = await serve({ maxConnections: 10, maxPerAddress: 1 });
    try {
      const first = await h2(server.port);
      const second = rawSocket(server.port, PREFACE);
      await closed(second);
      const elsewhere = http2.connect(`http://127.0.0.1:${server.port}`, {
        createConnection: () =>
          net.connect({ port: server.port, host: '127.0.0.1', localAddress: '127.0.0.2' }),
      });
      elsewhere.on('error', () => {});
      expect((await call(elsewhere, 'Nope')).status).toBe('12');
      first.destroy();
      elsewhere.destroy();
    } finally {
      await server.stop(100);
    }
  });
});

describe('streams', () => {
  test("server streams count against the principal's stream cap shared with SSE", async () => {
    const streams = new SseStreams({ maxPerOwner: 1 });
    const server = await serve({}, { streams });
    const c = rawClient(`127.0.0.1:${server.port}`);
    try {
      const body = encodeMessage(A2A_SCHEMA, 'lf.a2a.v1.SendMessageRequest', {
        message: {
          messageId: `test-resubscribe-message-id-${crypto.randomUUID()}`,
          role: 'ROLE_USER',
          parts: [{ text: 'hold' }],
        },
      });
      let second: ReturnType<typeof serverStream> | undefined;
      const first = serverStream(c, 'SendStreamingMessage', body, V1, (_m, stream) => {
        second ??= serverStream(c, 'SendStreamingMessage', body, V1).finally(() => stream.cancel());
      });
      await first;
      const refused = await second!;
      expect([refused.code, refused.reason]).toEqual([8, 'PRINCIPAL_STREAMS_FULL']);
    } finally {
      c.close();
      await server.stop(100);
    }
  });
});

describe('decoded values', () => {
  const EMPTY_ITEMS = 200_000;

  test('a gRPC message of 200,000 empty parts is INVALID_ARGUMENT PROTOBUF_TOO_MANY_VALUES', async () => {
    const server = await serve({});
    const c = rawClient(`127.0.0.1:${server.port}`);
    try {
      const body = encodeMessage(A2A_SCHEMA, 'lf.a2a.v1.SendMessageRequest', {
        message: { messageId: 'm', role: 'ROLE_USER', parts: Array(EMPTY_ITEMS).fill({}) },
      });
      const r = await unary(c, 'SendMessage', body, V1);
      expect([r.code, r.reason]).toEqual([3, 'PROTOBUF_TOO_MANY_VALUES']);
      expect(r.details).toContain('more than 100000 values');
    } finally {
      c.close();
      await server.stop(100);
    }
  });

  test('JSON-RPC and HTTP+JSON bodies of 200,000 empty items are refused before parsing', async () => {
    const items = `[${Array(EMPTY_ITEMS).fill('{}').join(',')}]`;
    const message = `{"messageId":"m","role":"ROLE_USER","parts":${items}}`;
    const headers = { 'content-type': 'application/json', 'a2a-version': '1.0' };
    const rpc = await fetch(`${node.url}/a2a`, {
      method: 'POST',
      headers,
      body: `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":${message}}}`,
    });
    const answer = await rpc.json();
    expect(answer.error.code).toBe(-32600);
    expect(answer.error.message).toContain('more than 100000 JSON values');
    const rest = await fetch(`${node.url}/message:send`, {
      method: 'POST',
      headers,
      body: `{"message":${message}}`,
    });
    expect(rest.status).toBe(400);
    expect(JSON.stringify(await rest.json())).toContain('more than 100000 JSON values');
    expect(await healthy()).toBe(200);
  });
});
