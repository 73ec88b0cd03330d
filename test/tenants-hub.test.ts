/**
 * Tenants on the hub (hub/http/tenant-paths.ts) with a real fleet on port 0: the hub's card lists
 * its tenants' interfaces and the official SDK client acts in one, another tenant's task being
 * TASK_NOT_FOUND; a fleet call made in a tenant (`/{tenant}/api/local-invoke`) carries the tenant
 * to the node and into the trace (`tenant` on the record, `a2a.tenant` on its span); trace reads
 * and streams in a tenant hold only its calls; each tenant has its own AI Catalog (its members,
 * valid against the published schema) and ARD search; a token naming tenants is 403
 * TENANT_FORBIDDEN outside them; hostile tenant paths route nowhere.
 */

import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { readFileSync, rmSync } from 'node:fs';
import { Role } from '@a2a-js/sdk';
import { ClientFactory, ClientFactoryOptions, JsonRpcTransportFactory } from '@a2a-js/sdk/client';
import Ajv2020 from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { addToken, TokenBook } from '../lib/auth/tokens.ts';
import { recordSpan } from '../lib/fleet/record-span.ts';
import { realNodeDefs, startFleet, type RunningFleet } from './support/fleet.ts';
import { FIXTURES, TEST_TOKEN, tempDir } from './support/node.ts';
import { rawRequest } from './support/raw-http.ts';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { signInAt } from './support/console-session.ts';
import { consoleTicketKey, newConsoleUrl } from '../hub/http/tickets.ts';

setDefaultTimeout(60_000); // per file (Bun scopes it so): a hub and two nodes on a busy machine

const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats(ajv);
const validCatalog = ajv.compile(
  JSON.parse(readFileSync(`${FIXTURES}/ard/ai-catalog.schema.json`, 'utf8')),
);

const dir = tempDir('lume-a2a-hub-tenants-');
let f: RunningFleet;
let acmeKit: string;
let anyKit: string;

beforeAll(async () => {
  acmeKit = addToken(dir, 'acme-kit', undefined, ['acme']);
  anyKit = addToken(dir, 'any-kit');
  const book = () => TokenBook.open(dir, { extra: { tester: TEST_TOKEN } });
  f = await startFleet(await realNodeDefs(['scanner', 'crm']), {
    hub: { tokens: book(), tenants: ['acme', 'globex'], consoleKey: consoleTicketKey(dir) },
    nodes: (name) => ({
      tenants: name === 'scanner' ? ['acme', 'globex'] : ['acme'],
      access: { tokens: book() },
    }),
  });
});
afterAll(async () => {
  await f?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const get = (token: string, path: string) =>
  fetch(`${f.hubUrl}${path}`, { headers: { authorization: `Bearer ${token}` } });
const post = (token: string, path: string, body: unknown) =>
  fetch(`${f.hubUrl}${path}`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${token}`,
      origin: f.hubUrl,
      'content-type': 'application/json',
    },
    body: JSON.stringify(body),
  });
const codeOf = async (res: Response) => [res.status, ((await res.json()) as any).error?.code];

/** Reads an SSE response until `until` holds for the text so far; the stream is then cancelled. */
async function readUntil(res: Response, until: (text: string) => boolean): Promise<string> {
  const reader = res.body!.getReader();
  let text = '';
  while (!until(text)) {
    const { value, done } = await reader.read();
    if (done) break;
    text += new TextDecoder().decode(value);
  }
  await reader.cancel();
  return text;
}

describe('the hub in a tenant', () => {
  test("the hub's card lists its tenants; the SDK client in acme sends, globex does not see it", async () => {
    const card = await (await fetch(`${f.hubUrl}/.well-known/agent-card.json`)).json();
    expect(
      card.supportedInterfaces
        .filter((i: any) => i.protocolBinding === 'JSONRPC')
        .map((i: any) => `${i.protocolVersion} ${i.tenant ?? '-'}`),
    ).toEqual(['1.0 -', '0.3 -', '1.0 acme', '1.0 globex']);
    const clientIn = (tenant: string) =>
      new ClientFactory(
        ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
          transports: [new JsonRpcTransportFactory()],
        }),
      ).createFromAgentCard({
        ...card,
        supportedInterfaces: card.supportedInterfaces.filter((i: any) => i.tenant === tenant),
      }) as Promise<any>;
    const auth = { serviceParameters: { authorization: `Bearer ${anyKit}` } };
    const acme = await clientIn('acme');
    const sent = await acme.sendMessage(
      {
        message: {
          messageId: crypto.randomUUID(),
          role: Role.ROLE_USER,
          parts: [
            {
              content: { $case: 'data', value: { skill: 'negotiation.list', args: {} } },
              filename: '',
              mediaType: '',
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
      auth,
    );
    const id = sent.id ?? sent.task?.id;
    expect((await acme.getTask({ id }, auth)).id).toBe(id);
    // The console's task list in a tenant holds that tenant's tasks only.
    const listIn = async (tenant: string) =>
      readUntil(await get(anyKit, `/${tenant}/api/tasks/stream`), (t) => /data:[^\n]*\n\n/.test(t));
    expect(await listIn('acme')).toContain(id);
    expect(await listIn('globex')).not.toContain(id);
    const globex = await clientIn('globex');
    const err = await globex.getTask({ id }, auth).then(
      () => undefined,
      (e: Error) => e,
    );
    expect(String(err)).toMatch(/not found|TASK_NOT_FOUND/i);
    // The token naming acme only may not reach globex on the hub either.
    const denied = await fetch(`${f.hubUrl}/globex/tasks/${id}`, {
      headers: { authorization: `Bearer ${acmeKit}`, 'a2a-version': '1.0' },
    });
    expect(denied.status).toBe(403);
  });

  test("the hub's acme card: createFromUrl on it acts in acme", async () => {
    const card = await (await fetch(`${f.hubUrl}/acme/.well-known/agent-card.json`)).json();
    expect(card.supportedInterfaces.map((i: any) => i.tenant ?? i.protocolVersion)).toEqual([
      'acme',
      'acme',
      ...(card.supportedInterfaces.length === 4 ? ['acme'] : []),
      '0.3',
    ]);
    expect(card.signatures?.length).toBe(1);
    const acme: any = await new ClientFactory().createFromUrl(
      `${f.hubUrl}/acme/.well-known/agent-card.json`,
      '',
    );
    const auth = { serviceParameters: { authorization: `Bearer ${anyKit}` } };
    const data = { skill: 'negotiation.list', args: {} };
    const sent = await acme.sendMessage(
      {
        message: {
          messageId: crypto.randomUUID(),
          role: Role.ROLE_USER,
          parts: [{ content: { $case: 'data', value: data }, filename: '', mediaType: '' }],
          contextId: '',
          taskId: '',
          extensions: [],
          referenceTaskIds: [],
        },
      },
      auth,
    );
    const id = sent.id ?? sent.task?.id;
    const at = async (tenant: string) =>
      (
        await fetch(`${f.hubUrl}/${tenant}/tasks/${id}`, {
          headers: { authorization: `Bearer ${anyKit}`, 'a2a-version': '1.0' },
        })
      ).status;
    expect([await at('acme'), await at('globex')]).toEqual([200, 404]);
  });

  test('a fleet call made in acme carries the tenant into the trace; reads and streams are kept apart', async () => {
    const acmeStream = await get(anyKit, '/acme/api/trace/stream');
    const globexStream = await get(anyKit, '/globex/api/trace/stream');
    expect([acmeStream.status, globexStream.status]).toEqual([200, 200]);
    const call = { target: 'scanner', capability: 'scanner.status' };
    expect((await post(anyKit, '/acme/api/local-invoke', call)).status).toBe(200);
    expect((await post(anyKit, '/globex/api/local-invoke', call)).status).toBe(200);
    // The newest record of each tenant's call, as the whole trace shows it.
    const newest = (await (await get(anyKit, '/api/trace?capability=scanner.status')).json())
      .records as any[];
    const acmeRecord = newest.find((r) => r.tenant === 'acme').id as number;
    const globexRecord = newest.find((r) => r.tenant === 'globex').id as number;
    // Each stream carries its own tenant's call and not the other's.
    const acmeText = await readUntil(acmeStream, (t) => t.includes(`id: ${acmeRecord}\n`));
    const globexText = await readUntil(globexStream, (t) => t.includes(`id: ${globexRecord}\n`));
    expect(acmeText).not.toContain(`id: ${globexRecord}\n`);
    expect(globexText).not.toContain(`id: ${acmeRecord}\n`);
    // Pages: the tenant's own, and every tenant's for a caller naming none.
    const page = async (token: string, path: string) =>
      ((await (await get(token, path)).json()).records as any[]).map((r) => [r.id, r.tenant]);
    expect(await page(anyKit, '/acme/api/trace')).toContainEqual([acmeRecord, 'acme']);
    expect(await page(anyKit, '/acme/api/trace')).not.toContainEqual([globexRecord, 'globex']);
    const all = await page(anyKit, '/api/trace');
    expect(all).toContainEqual([acmeRecord, 'acme']);
    expect(all).toContainEqual([globexRecord, 'globex']);
    expect(await page(acmeKit, '/acme/api/trace')).toContainEqual([acmeRecord, 'acme']);
    // The span it is exported as names the tenant as OpenTelemetry's A2A conventions do.
    const rec = f.hub.trace.page({ limit: 500 }).records.find((r) => r.id === acmeRecord)!;
    expect(recordSpan(rec, 'a2a').attributes['a2a.tenant']).toBe('acme');
  });

  test('a token naming acme is TENANT_FORBIDDEN elsewhere on the API and discovery', async () => {
    for (const path of ['/api/trace', '/globex/api/trace', '/globex/.well-known/ai-catalog.json'])
      expect([path, ...(await codeOf(await get(acmeKit, path)))]).toEqual([
        path,
        403,
        'TENANT_FORBIDDEN',
      ]);
    const call = { target: 'scanner', capability: 'scanner.status' };
    expect(await codeOf(await post(acmeKit, '/globex/api/local-invoke', call))).toEqual([
      403,
      'TENANT_FORBIDDEN',
    ]);
    expect((await post(acmeKit, '/acme/api/local-invoke', call)).status).toBe(200);
  });

  test('a console session of that token is held to its tenants; /mcp too', async () => {
    const session = await signInAt(newConsoleUrl(dir, 'a2a', f.hubUrl, 'acme-kit'));
    const asSession = (path: string) => fetch(`${f.hubUrl}${path}`, { headers: session.headers });
    expect(await codeOf(await asSession('/api/trace'))).toEqual([403, 'TENANT_FORBIDDEN']);
    expect((await asSession('/acme/api/trace')).status).toBe(200);
    const initialize = (token: string, path: string) =>
      fetch(`${f.hubUrl}${path}`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${token}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
        },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'initialize',
          params: {
            protocolVersion: '2025-11-25',
            capabilities: {},
            clientInfo: { name: 'tenant-test', version: '1' },
          },
        }),
      });
    expect(await codeOf(await initialize(acmeKit, '/mcp'))).toEqual([403, 'TENANT_FORBIDDEN']);
    expect(await codeOf(await initialize(acmeKit, '/globex/mcp'))).toEqual([
      403,
      'TENANT_FORBIDDEN',
    ]);
    const inAcme = await initialize(acmeKit, '/acme/mcp');
    expect([inAcme.status, await inAcme.text()]).toEqual([
      200,
      expect.stringContaining('"result"'),
    ]);
  });

  test("MCP's fleet tools on /{tenant}/mcp call nodes in that tenant (the official MCP client)", async () => {
    const client = new Client({ name: 'tenant-test', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${f.hubUrl}/acme/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${acmeKit}` } },
      }),
    );
    try {
      const before = f.hub.trace.page({ limit: 1 }).records[0]?.id ?? 0;
      const names = (await client.listTools()).tools.map((t) => t.name);
      const tool = names.find((n) => n.includes('status') && n.startsWith('scanner'))!;
      const r: any = await client.callTool({ name: tool, arguments: {} });
      expect(r.isError ?? false).toBe(false);
      const made = f.hub.trace
        .page({ limit: 50, capability: 'scanner.status' })
        .records.filter((x) => x.id > before);
      expect(made.map((x) => [x.to, x.tenant])).toEqual([['scanner', 'acme']]);
    } finally {
      await client.close();
    }
  });

  test('one AI Catalog per tenant: its members, the tenant named, valid against the published schema', async () => {
    const catalogOf = async (path: string) => {
      const res = await get(anyKit, path);
      expect(res.headers.get('content-type')).toBe('application/ai-catalog+json');
      const c = await res.json();
      expect(validCatalog(c) ? [] : validCatalog.errors).toEqual([]);
      return c;
    };
    const nodesOf = (c: any) =>
      c.entries
        .filter((e: any) => e.type !== 'application/ai-registry+json')
        .map((e: any) => e.metadata['dev.lume-a2a.node']);
    const acme = await catalogOf('/acme/.well-known/ai-catalog.json');
    const globex = await catalogOf('/globex/.well-known/ai-catalog.json');
    const whole = await catalogOf('/.well-known/ai-catalog.json');
    const sorted = (xs: string[]) => [...xs].sort();
    expect(sorted(nodesOf(acme))).toEqual(['a2a', 'crm', 'scanner']);
    expect(sorted(nodesOf(globex))).toEqual(['a2a', 'scanner']);
    expect(sorted(nodesOf(whole))).toEqual(['a2a', 'crm', 'scanner']);
    const scanner = acme.entries.find((e: any) => e.metadata['dev.lume-a2a.node'] === 'scanner');
    expect(scanner.metadata['dev.lume-a2a.tenant']).toBe('acme');
    expect(scanner.metadata['dev.lume-a2a.tenantBindings']).toBe('JSONRPC HTTP+JSON GRPC');
    expect(scanner.identifier).toMatch(/^urn:air:127\.0\.0\.1:acme:scanner$/);
    expect(acme.entries[0].url).toBe(`${f.hubUrl}/acme/ard`);
    expect(whole.entries.some((e: any) => 'dev.lume-a2a.tenant' in e.metadata)).toBe(false);
    // ARD search in globex finds no member that does not serve it.
    const found = await post(anyKit, '/globex/ard/search', {
      query: { text: 'customer follow-up' },
      federation: 'none',
    });
    const names = ((await found.json()).results as any[]).map((r) => r.displayName);
    expect(names).not.toContain('crm');
  });

  test('hostile tenant paths: not configured, dot segments, escapes, overlong, unicode', async () => {
    const host = new URL(f.hubUrl).host;
    for (const p of [
      '/initech/api/trace',
      '/initech/.well-known/ai-catalog.json',
      '/..%2facme/api/trace',
      '/acme%2fapi/trace',
      '/acme%2F..%2Fglobex/api/trace',
      `/${'a'.repeat(65)}/api/trace`,
      '/acm%C3%A9/api/trace',
      '/ACME/api/trace',
    ]) {
      const r = await rawRequest(
        f.hubUrl,
        `GET ${p} HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer ${anyKit}\r\nConnection: close\r\n\r\n`,
      );
      expect([p, r.status === 403 || r.status === 404, r.body.includes('"records"')]).toEqual([
        p,
        true,
        false,
      ]);
    }
  });
});
