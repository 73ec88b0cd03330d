/**
 * Tenants on a node's card and on the kit's own tokens: with tenants configured the card lists the
 * 1.0 interfaces again per tenant with `tenant` set (0.3 fields unchanged) and its signature still
 * verifies (the official SDK's `verifyAgentCardSignature` and our own); the official SDK client
 * built from a tenant's interfaces (JSON-RPC, HTTP+JSON, gRPC) sends in that tenant; a token made
 * with `bun run keys token add <name> --tenants a` may act only there (403 TENANT_FORBIDDEN, gRPC
 * PERMISSION_DENIED) and `keys token list` shows its tenants; another tenant's task is
 * TASK_NOT_FOUND on get, cancel, subscribe and push configs, and absent from lists.
 */

import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { rmSync } from 'node:fs';
import type * as grpc from '@grpc/grpc-js';
import { Role, verifyAgentCardSignature } from '@a2a-js/sdk';
import {
  ClientFactory,
  ClientFactoryOptions,
  JsonRpcTransportFactory,
  RestTransportFactory,
} from '@a2a-js/sdk/client';
import { GrpcTransportFactory } from '@a2a-js/sdk/client/grpc';
import { encodeMessage } from '../lib/a2a/grpc/encode.ts';
import { A2A_SCHEMA } from '../lib/a2a/proto/schema.ts';
import { addToken, TokenBook } from '../lib/auth/tokens.ts';
import conformance from '../node/conformance.ts';
import { bunCommand } from './support/bundle.ts';
import { grpcAddressOf, rawClient, serverStream, unary } from './support/grpc.ts';
import { startNode, TEST_TOKEN, tempDir, type TestNode } from './support/node.ts';
import { ROOT } from './support/processes.ts';
import { rawRequest } from './support/raw-http.ts';

setDefaultTimeout(30_000); // per file (Bun scopes it so): a node, SDK clients and a CLI process

const dir = tempDir('lume-a2a-tenant-tokens-');
let node: TestNode;
let plain: TestNode;
let g: grpc.Client;
let acmeKit: string;
let anyKit: string;
let card: any;
/** The node's exported A2A server spans. */
const spans: { name: string; attributes: Record<string, unknown> }[] = [];

beforeAll(async () => {
  acmeKit = addToken(dir, 'acme-kit', undefined, ['acme']);
  anyKit = addToken(dir, 'any-kit');
  const tokens = TokenBook.open(dir, { extra: { tester: TEST_TOKEN } });
  node = await startNode(conformance(), {
    tenants: ['acme', 'globex'],
    access: { tokens },
    spanExport: { add: (s) => void spans.push(s as any) },
  });
  plain = await startNode(conformance());
  card = await (await fetch(`${node.url}/.well-known/agent-card.json`)).json();
  g = rawClient(grpcAddressOf(card)!);
});
afterAll(async () => {
  g.close();
  await node.dispose();
  await plain.dispose();
  rmSync(dir, { recursive: true, force: true });
});

const headers = (token: string) => ({
  'content-type': 'application/json',
  'a2a-version': '1.0',
  authorization: `Bearer ${token}`,
});
async function rpc(token: string, method: string, params: Record<string, unknown>) {
  const res = await fetch(`${node.url}/a2a`, {
    method: 'POST',
    headers: headers(token),
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  return (await res.json()) as any;
}
const reason = (body: any) => body.error?.data?.[0]?.reason ?? body.error?.message;
const sdkMessage = (text: string) =>
  ({
    messageId: crypto.randomUUID(),
    role: Role.ROLE_USER,
    parts: [
      { content: { $case: 'text', value: text }, filename: '', mediaType: '', metadata: undefined },
    ],
    contextId: '',
    taskId: '',
    extensions: [],
    referenceTaskIds: [],
    metadata: undefined,
  }) as any;

/** The official SDK client over one binding, built from the card's interfaces of `tenant`. */
async function sdkClientIn(tenant: string, transport: 'JSONRPC' | 'HTTP+JSON' | 'GRPC') {
  const factory = new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports: [
        transport === 'JSONRPC'
          ? new JsonRpcTransportFactory()
          : transport === 'GRPC'
            ? new GrpcTransportFactory()
            : new RestTransportFactory(),
      ],
    }),
  );
  const mine = card.supportedInterfaces.filter((i: any) => i.tenant === tenant);
  return (await factory.createFromAgentCard({ ...card, supportedInterfaces: mine })) as any;
}

describe('the card with tenants', () => {
  test('lists the 1.0 interfaces per tenant after the untenanted ones; 0.3 fields as before', async () => {
    const plainCard = await (await fetch(`${plain.url}/.well-known/agent-card.json`)).json();
    const shape = (c: any, base: string) =>
      c.supportedInterfaces.map((i: any) =>
        [i.url.replace(base, 'B'), i.protocolBinding, i.protocolVersion, i.tenant ?? '-'].join(' '),
      );
    const grpcUrl = grpcAddressOf(card)!;
    expect(shape(card, node.url).map((s: string) => s.replace(grpcUrl, 'G'))).toEqual([
      'B/a2a JSONRPC 1.0 -',
      'B/a2a JSONRPC 0.3 -',
      'B HTTP+JSON 1.0 -',
      'G GRPC 1.0 -',
      'B/a2a JSONRPC 1.0 acme',
      'B HTTP+JSON 1.0 acme',
      'G GRPC 1.0 acme',
      'B/a2a JSONRPC 1.0 globex',
      'B HTTP+JSON 1.0 globex',
      'G GRPC 1.0 globex',
    ]);
    // Without tenants no interface names one; the 0.3 members are the same on both cards.
    expect(plainCard.supportedInterfaces.some((i: any) => 'tenant' in i)).toBe(false);
    expect(plainCard.supportedInterfaces).toHaveLength(4);
    const v03 = (c: any) => [
      c.protocolVersion,
      c.preferredTransport,
      c.additionalInterfaces.length,
    ];
    expect(v03(card)).toEqual(v03(plainCard));
    expect(card.additionalInterfaces).toEqual([{ url: `${node.url}/a2a`, transport: 'JSONRPC' }]);
    expect(plainCard.additionalInterfaces).toEqual([
      { url: `${plain.url}/a2a`, transport: 'JSONRPC' },
    ]);
  });

  test('the signed card verifies with the official SDK; a tenant changed by one letter does not', async () => {
    const finder = async (kid: string, jku?: string) => {
      const set = (await (await fetch(jku!)).json()) as { keys: { kid: string }[] };
      return set.keys.find((k) => k.kid === kid) as any;
    };
    const verify = async (c: unknown) => {
      const debug = console.debug;
      console.debug = () => {};
      try {
        await verifyAgentCardSignature(finder)(c as any);
        return true;
      } catch {
        return false;
      } finally {
        console.debug = debug;
      }
    };
    expect(await verify(card)).toBe(true);
    const forged = structuredClone(card);
    forged.supportedInterfaces[4].tenant = 'acmf';
    expect(await verify(forged)).toBe(false);
  });
});

describe('the official SDK client in a tenant', () => {
  test('JSON-RPC, HTTP+JSON and gRPC each send and read back in the interface tenant', async () => {
    const auth = { serviceParameters: { authorization: `Bearer ${anyKit}` } };
    for (const binding of ['JSONRPC', 'HTTP+JSON', 'GRPC'] as const) {
      const acme = await sdkClientIn('acme', binding);
      const globex = await sdkClientIn('globex', binding);
      const sent = await acme.sendMessage({ message: sdkMessage(`hi ${binding}`) }, auth);
      const id = sent.id ?? sent.task?.id;
      expect(typeof id).toBe('string');
      expect((await acme.getTask({ id }, auth)).id).toBe(id);
      // The same principal in another tenant does not see it.
      const err = await globex.getTask({ id }, auth).then(
        () => undefined,
        (e: Error) => e,
      );
      expect(String(err)).toMatch(/not found|TASK_NOT_FOUND|-32001/i);
      const listed = await globex.listTasks(
        { tenant: '', contextId: '', status: 0, pageToken: '' },
        auth,
      );
      expect(listed.tasks.map((t: any) => t.id)).not.toContain(id);
    }
  });
});

describe('kit tokens that name tenants', () => {
  test('keys token add --tenants stores them; keys token list shows them', async () => {
    const data = tempDir('lume-a2a-keys-');
    try {
      const run = (args: string[]) =>
        Bun.spawn(bunCommand(['hub/cli/keys.ts', 'token', ...args]), {
          cwd: ROOT,
          env: { ...process.env, DATA_DIR: data },
          stdin: 'ignore',
          stdout: 'pipe',
          stderr: 'pipe',
        });
      const add = run(['add', 'ops', '--tenants', 'acme,globex']);
      const [code, out] = await Promise.all([add.exited, new Response(add.stdout).text()]);
      expect([code, out.split('\n')[0]]).toEqual([
        0,
        expect.stringContaining('token for ops, tenants acme,globex'),
      ]);
      const bad = run(['add', 'bad', '--tenants', '../x']);
      const [badCode, badErr] = await Promise.all([bad.exited, new Response(bad.stderr).text()]);
      expect([badCode === 0, badErr]).toEqual([false, expect.stringContaining('tenants are')]);
      const list = run(['list']);
      const listed = await new Response(list.stdout).text();
      expect(listed).toMatch(/^ops\s+\S+\s+tenants acme,globex$/m);
      expect(listed).not.toContain('bad');
    } finally {
      rmSync(data, { recursive: true, force: true });
    }
  });

  test('a token naming acme may act there only: 403 elsewhere, gRPC PERMISSION_DENIED', async () => {
    const sent = await rpc(acmeKit, 'SendMessage', {
      tenant: 'acme',
      message: { messageId: crypto.randomUUID(), role: 'ROLE_USER', parts: [{ text: 'hi' }] },
    });
    const id = sent.result.task.id;
    expect((await rpc(acmeKit, 'GetTask', { tenant: 'acme', id })).result.id).toBe(id);
    for (const tenant of ['globex', 'initech', undefined])
      expect(reason(await rpc(acmeKit, 'GetTask', { tenant, id }))).toContain('TENANT_FORBIDDEN');
    // A `/{tenant}/…` request names its tenant on its span, as one with the `tenant` member does.
    const viaPath = await fetch(`${node.url}/acme/tasks/${id}`, { headers: headers(acmeKit) });
    expect(viaPath.status).toBe(200);
    const getSpans = spans.filter(
      (s) => s.name === 'GetTask' && s.attributes['a2a.task.id'] === id,
    );
    expect(getSpans.map((s) => s.attributes['a2a.tenant'])).toEqual(['acme', 'acme']);
    const r = await fetch(`${node.url}/globex/tasks/${id}`, { headers: headers(acmeKit) });
    expect([r.status, (await r.json()).error.details[0].reason]).toEqual([403, 'TENANT_FORBIDDEN']);
    const denied = await unary(
      g,
      'GetTask',
      encodeMessage(A2A_SCHEMA, 'lf.a2a.v1.GetTaskRequest', { id, tenant: 'globex' }),
      { 'a2a-version': '1.0', authorization: `Bearer ${acmeKit}` },
    );
    expect([denied.code, denied.reason]).toEqual([7, 'TENANT_FORBIDDEN']);
  });

  test("another tenant's task is TASK_NOT_FOUND on every operation, never a hint", async () => {
    const sent = await rpc(anyKit, 'SendMessage', {
      tenant: 'acme',
      message: { messageId: crypto.randomUUID(), role: 'ROLE_USER', parts: [{ text: 'hi' }] },
    });
    const id = sent.result.task.id;
    const push = { url: 'http://127.0.0.1:9/hook' };
    const ops: [string, Record<string, unknown>][] = [
      ['GetTask', { id }],
      ['CancelTask', { id }],
      ['CreateTaskPushNotificationConfig', { taskId: id, ...push }],
      ['ListTaskPushNotificationConfigs', { taskId: id }],
      ['GetTaskPushNotificationConfig', { taskId: id, id: 'x' }],
      ['DeleteTaskPushNotificationConfig', { taskId: id, id: 'x' }],
    ];
    for (const [method, params] of ops) {
      const other = await rpc(anyKit, method, { ...params, tenant: 'globex' });
      const untenanted = await rpc(anyKit, method, params);
      expect([method, reason(other), reason(untenanted)]).toEqual([
        method,
        'TASK_NOT_FOUND',
        'TASK_NOT_FOUND',
      ]);
    }
    // Subscribe: SSE on JSON-RPC and a gRPC stream, both refused as not found.
    const sub = await fetch(`${node.url}/a2a`, {
      method: 'POST',
      headers: headers(anyKit),
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'SubscribeToTask',
        params: { id, tenant: 'globex' },
      }),
    });
    expect(await sub.text()).toContain('TASK_NOT_FOUND');
    const gs = await serverStream(
      g,
      'SubscribeToTask',
      encodeMessage(A2A_SCHEMA, 'lf.a2a.v1.SubscribeToTaskRequest', { id, tenant: 'globex' }),
      { 'a2a-version': '1.0', authorization: `Bearer ${anyKit}` },
    );
    expect([gs.code, gs.reason]).toEqual([5, 'TASK_NOT_FOUND']);
    const rest = await fetch(`${node.url}/globex/tasks/${id}:cancel`, {
      method: 'POST',
      headers: headers(anyKit),
      body: '{}',
    });
    expect([rest.status, (await rest.json()).error.details[0].reason]).toEqual([
      404,
      'TASK_NOT_FOUND',
    ]);
    const list = await rpc(anyKit, 'ListTasks', { tenant: 'globex' });
    expect(list.result.tasks.map((t: any) => t.id)).not.toContain(id);
    // Still there, in its own tenant.
    expect((await rpc(anyKit, 'GetTask', { tenant: 'acme', id })).result.id).toBe(id);
  });

  test('hostile tenant paths and members route nowhere and change nothing', async () => {
    const paths = [
      '/..%2facme/tasks',
      '/acme%2F..%2Fglobex/tasks',
      `/${'a'.repeat(65)}/tasks`,
      '/acm%C3%A9/tasks',
      '/ACME/tasks',
      '/initech/tasks',
    ];
    // Written byte for byte (fetch would resolve `%2e%2e` itself before sending).
    const host = new URL(node.url).host;
    for (const p of paths) {
      const r = await rawRequest(
        node.url,
        `GET ${p} HTTP/1.1\r\nHost: ${host}\r\nA2A-Version: 1.0\r\nAuthorization: Bearer ${anyKit}\r\nConnection: close\r\n\r\n`,
      );
      expect([p, r.status === 403 || r.status === 404]).toEqual([p, true]);
    }
    // `%2e%2e` is a dot segment (RFC 3986 §2.3, the URL standard): the path is `/tasks`, the
    // untenanted list, which holds none of a tenant's tasks.
    const dots = await rawRequest(
      node.url,
      `GET /%2e%2e/tasks HTTP/1.1\r\nHost: ${host}\r\nA2A-Version: 1.0\r\nAuthorization: Bearer ${anyKit}\r\nConnection: close\r\n\r\n`,
    );
    const inAcme = (await rpc(anyKit, 'ListTasks', { tenant: 'acme' })).result.tasks;
    expect(inAcme.length).toBeGreaterThan(0);
    for (const t of inAcme) expect(dots.body).not.toContain(t.id);
    for (const tenant of [
      '..',
      'acme/../globex',
      'a'.repeat(200),
      'acmé',
      'ACME',
      ''.padEnd(3, '\u0000'),
    ])
      expect(reason(await rpc(anyKit, 'ListTasks', { tenant }))).toContain('TENANT_FORBIDDEN');
  });
});
