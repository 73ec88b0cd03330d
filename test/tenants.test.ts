/**
 * Tenants on a node (lib/node/tenants.ts), with tokens of a real OpenID provider whose `tenants`
 * claim names where each client may act: a task made in one tenant is TASK_NOT_FOUND from another
 * tenant and to another owner in the same tenant, on JSON-RPC (`tenant` in params), HTTP+JSON
 * (`/{tenant}/…`) and gRPC (`tenant` in the request); a tenant the token does not name is 403
 * TENANT_FORBIDDEN (gRPC PERMISSION_DENIED); tenant paths with `..` or `%2f` route nowhere.
 */

import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import type * as grpc from '@grpc/grpc-js';
import { createOidcVerifier } from '../lib/auth/oidc/verifier.ts';
import { encodeMessage } from '../lib/a2a/grpc/encode.ts';
import { A2A_SCHEMA } from '../lib/a2a/proto/schema.ts';
import conformance from '../node/conformance.ts';
import { grpcAddressOf, rawClient, unary } from './support/grpc.ts';
import { startNode, TEST_TOKEN, testTokens, type TestNode } from './support/node.ts';
import { startProvider, type TestClient, type TestProvider } from './support/oidc-provider.ts';

setDefaultTimeout(30_000); // per file (Bun scopes it so): a real provider and node on a busy machine

const AUD = 'urn:lume:tenanted';
const client = (id: string, tenants?: string[]): TestClient => ({
  id,
  secret: `${id}-secret-0123456789abcdef0123456789`,
  scope: 'a2a.read a2a.write',
  ...(tenants ? { tenants } : {}),
});
const ACME = client('acme-app', ['acme']);
const GLOBEX = client('globex-app', ['globex']);
const ANY = client('any-app');

let op: TestProvider;
let node: TestNode;
let g: grpc.Client;
const t: Record<string, string> = {};

beforeAll(async () => {
  op = await startProvider({ clients: [ACME, GLOBEX, ANY], resources: [AUD] });
  node = await startNode(conformance(), {
    tenants: ['acme', 'globex'],
    access: {
      tokens: testTokens(),
      oidc: createOidcVerifier([{ issuer: op.issuer, audience: AUD }]),
    },
  });
  g = rawClient(grpcAddressOf(node.node.card() as never)!);
  for (const c of [ACME, GLOBEX, ANY]) t[c.id] = await op.token(c, AUD);
});
afterAll(async () => {
  g.close();
  await node.dispose();
  await op.stop();
});

async function rpc(token: string, method: string, params: Record<string, unknown>) {
  const res = await fetch(`${node.url}/a2a`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'a2a-version': '1.0',
      authorization: `Bearer ${token}`,
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  return (await res.json()) as any;
}
const rest = (token: string, path: string) =>
  fetch(`${node.url}${path}`, {
    headers: { 'a2a-version': '1.0', authorization: `Bearer ${token}` },
  });
const reason = (body: any) => body.error?.data?.[0]?.reason ?? body.error?.message;

let id: string;

describe('tenants', () => {
  test('JSON-RPC: a task of acme is not found from globex, nor by another owner in acme', async () => {
    const sent = await rpc(t['acme-app']!, 'SendMessage', {
      tenant: 'acme',
      message: { messageId: crypto.randomUUID(), role: 'ROLE_USER', parts: [{ text: 'hi' }] },
    });
    id = sent.result.task.id;
    expect((await rpc(t['acme-app']!, 'GetTask', { tenant: 'acme', id })).result.id).toBe(id);
    expect(reason(await rpc(t['any-app']!, 'GetTask', { tenant: 'acme', id }))).toBe(
      'TASK_NOT_FOUND',
    );
    expect(reason(await rpc(t['any-app']!, 'GetTask', { tenant: 'globex', id }))).toBe(
      'TASK_NOT_FOUND',
    );
    expect(reason(await rpc(TEST_TOKEN, 'GetTask', { id }))).toBe('TASK_NOT_FOUND');
    // Its own list in acme has it; the same owner outside acme may not act at all.
    const list = await rpc(t['acme-app']!, 'ListTasks', { tenant: 'acme' });
    expect(list.result.tasks.map((x: any) => x.id)).toContain(id);
  });

  test('a tenant the token does not name is TENANT_FORBIDDEN (403)', async () => {
    expect(reason(await rpc(t['acme-app']!, 'GetTask', { tenant: 'globex', id }))).toContain(
      'TENANT_FORBIDDEN',
    );
    expect(reason(await rpc(t['acme-app']!, 'ListTasks', {}))).toContain('TENANT_FORBIDDEN');
    expect(reason(await rpc(t['any-app']!, 'ListTasks', { tenant: 'initech' }))).toContain(
      'TENANT_FORBIDDEN',
    );
    const r = await rest(t['globex-app']!, `/acme/tasks/${id}`);
    expect(r.status).toBe(403);
  });

  test('HTTP+JSON /{tenant}/…: the task in its tenant only; .. and %2f route nowhere', async () => {
    expect((await rest(t['acme-app']!, `/acme/tasks/${id}`)).status).toBe(200);
    expect((await rest(t['any-app']!, `/acme/tasks/${id}`)).status).toBe(404);
    expect((await rest(t['acme-app']!, `/tasks/${id}`)).status).toBe(403);
    for (const path of [
      `/..%2facme/tasks/${id}`,
      `/acme%2f..%2f/tasks/${id}`,
      `/acme%2Ftasks/${id}`,
      `/ac%2e%2e/tasks/${id}`,
    ])
      expect([403, 404]).toContain((await rest(t['acme-app']!, path)).status);
  });

  test('gRPC: the tenant member scopes the call; another tenant is PERMISSION_DENIED', async () => {
    const get = (token: string, tenant: string) =>
      unary(g, 'GetTask', encodeMessage(A2A_SCHEMA, 'lf.a2a.v1.GetTaskRequest', { id, tenant }), {
        'a2a-version': '1.0',
        authorization: `Bearer ${token}`,
      });
    expect((await get(t['acme-app']!, 'acme')).code).toBe(0);
    expect((await get(t['any-app']!, 'acme')).code).toBe(5);
    const denied = await get(t['acme-app']!, 'globex');
    expect([denied.code, denied.reason]).toEqual([7, 'TENANT_FORBIDDEN']);
  });
});
