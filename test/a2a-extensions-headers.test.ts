/**
 * An `A2A-Extensions` header of 100 KB on a real node process started as the kit's scripts start
 * it (Bun reads request headers up to 128 KiB, lib/net/header-limit.ts): JSON-RPC and REST answer
 * the coded error the list's bound names (-32600 with the request's id; 400 INVALID_ARGUMENT) as
 * JSON, not Bun's bodiless 431, which now starts past 128 KiB. Over gRPC, metadata that Bun's
 * HTTP/2 decodes (under 64 KiB an entry) gets INVALID_ARGUMENT with a message; a 100 KB entry is
 * reset by Bun's HPACK decoder (COMPRESSION_ERROR, which the client reports as INTERNAL) before
 * any call exists: the figure docs/limits.md gives. The process answers on after each.
 */

import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import type * as grpc from '@grpc/grpc-js';
import { encodeMessage } from '../lib/a2a/grpc/encode.ts';
import { A2A_SCHEMA } from '../lib/a2a/proto/schema.ts';
import { rawClient, unary } from './support/grpc.ts';
import { TEST_TOKEN } from './support/node.ts';
import { startNodeProcess, type NodeProcess } from './support/node-process.ts';

setDefaultTimeout(30_000); // per file (Bun scopes it so): real processes are slow on a busy machine

const AUTH = { authorization: `Bearer ${TEST_TOKEN}` };
const HUNDRED_KB = `urn:x:a, ${'y'.repeat(100 * 1024)}`;
let node: NodeProcess;
let client: grpc.Client;

beforeAll(async () => {
  node = await startNodeProcess({ GRPC_PORT: '0' });
  client = rawClient(`127.0.0.1:${node.grpcPort}`);
});
afterAll(async () => {
  client?.close();
  await node?.stop();
});

const message = () => ({
  message: { messageId: crypto.randomUUID(), role: 'ROLE_USER', parts: [{ text: 'hi' }] },
});
const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${node.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'A2A-Version': '1.0', ...AUTH, ...headers },
    body: JSON.stringify(body),
  });
const rpc = (headers: Record<string, string> = {}) =>
  post('/a2a', { jsonrpc: '2.0', id: 'big-1', method: 'GetTask', params: { id: 'none' } }, headers);
const grpcCall = (metadata: Record<string, string> = {}) =>
  unary(client, 'GetTask', encodeMessage(A2A_SCHEMA, 'lf.a2a.v1.GetTaskRequest', { id: 'none' }), {
    'a2a-version': '1.0',
    ...AUTH,
    ...metadata,
  });

describe('an A2A-Extensions header of 100 KB', () => {
  test('JSON-RPC answers -32600 with the request id, as JSON', async () => {
    const res = await rpc({ 'A2A-Extensions': HUNDRED_KB });
    expect(res.headers.get('content-type')).toContain('application/json');
    const body = await res.json();
    expect([body.id, body.error.code]).toEqual(['big-1', -32600]);
    expect(body.error.message).toContain('A2A-Extensions');
    // The node answers on: an unknown task is its own error, not a header one.
    expect((await (await rpc()).json()).error.code).toBe(-32001);
  });

  test('REST answers 400 INVALID_ARGUMENT, as JSON', async () => {
    const res = await post('/message:send', message(), { 'A2A-Extensions': HUNDRED_KB });
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toContain('json');
    const body = JSON.stringify(await res.json());
    expect(body).toContain('INVALID_ARGUMENT');
    expect(body).toContain('A2A-Extensions');
  });

  test('past 128 KiB of headers Bun still answers 431 itself, and the process stays up', async () => {
    const res = await rpc({ 'A2A-Extensions': 'z'.repeat(200 * 1024) });
    expect(res.status).toBe(431);
    expect((await (await rpc()).json()).error.code).toBe(-32001);
  });

  test('gRPC: 60 KiB is INVALID_ARGUMENT with a message; 100 KB is reset by HTTP/2 before a call exists', async () => {
    const decoded = await grpcCall({ 'a2a-extensions': `urn:x:a, ${'y'.repeat(60 * 1024)}` });
    expect(decoded.code).toBe(3);
    expect(decoded.details).toContain('A2A-Extensions');
    const reset = await grpcCall({ 'a2a-extensions': HUNDRED_KB });
    expect(reset.code).toBe(13);
    // COMPRESSION_ERROR (9): on the stream (RST_STREAM) or, as Bun's client sees it, the session.
    expect(reset.details).toMatch(/RST_STREAM with code 9|Session closed with error code 9/);
    const after = await grpcCall();
    expect(after.code).toBe(5); // NOT_FOUND: the port answers on
  });
});
