/**
 * The hub's `/mcp` under the official v2 client (`@modelcontextprotocol/client` 2.4.0), which
 * speaks MCP 2026-07-28 and falls back to 2025-11-25: negotiated, pinned to the new revision and
 * left on the old one, the same tools answer; the stateless wire carries the revision in every
 * request's `_meta` and no session; `subscriptions/listen` is acknowledged with what it will
 * hear. Raw requests check what the client never sends: headers that disagree with the body, a
 * revision not served, and a request mixing the two revisions' forms.
 */

import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { resolve } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { realNodeDefs, startFleet, type RunningFleet } from './support/fleet.ts';
import { TEST_AUTH, TEST_TOKEN } from './support/node.ts';

setDefaultTimeout(20_000); // per file (Bun scopes it so): real servers and processes are slow on a busy machine

let f: RunningFleet;
const clients: Client[] = [];
const seen: { session: string | null; meta: unknown }[] = [];

beforeAll(async () => {
  f = await startFleet(await realNodeDefs(['scanner']));
});
afterAll(async () => {
  for (const c of clients) await c.close().catch(() => {});
  await f.stop();
});

/** A v2 client on the hub as the test principal; every request it POSTs is noted. */
async function connect(mode: 'auto' | 'legacy' | { pin: string }): Promise<Client> {
  const client = new Client(
    { name: 'lume-v2-test', version: '1.0.0' },
    { versionNegotiation: { mode } },
  );
  const noting = async (input: RequestInfo | URL, init?: RequestInit) => {
    if (init?.method === 'POST' && typeof init.body === 'string') {
      const headers = new Headers(init.headers);
      seen.push({
        session: headers.get('mcp-session-id'),
        meta: (JSON.parse(init.body) as { params?: { _meta?: unknown } }).params?._meta,
      });
    }
    return fetch(input, init);
  };
  const transport = new StreamableHTTPClientTransport(new URL(`${f.hubUrl}/mcp`), {
    requestInit: { headers: TEST_AUTH },
    fetch: noting as typeof fetch,
  });
  await client.connect(transport);
  clients.push(client);
  return client;
}

const META_VERSION = 'io.modelcontextprotocol/protocolVersion';

describe('the v2 client on the hub', () => {
  test('negotiates 2026-07-28: no session, the revision in every request, the tools answer', async () => {
    seen.length = 0;
    const c = await connect('auto');
    const tools = (await c.listTools()).tools.map((t) => t.name);
    expect(tools).toContain('scanner_sector_movement');
    const r = await c.callTool({ name: 'scanner_sector_movement', arguments: {} });
    expect(r.isError).toBeFalsy();
    expect(c.getServerVersion()?.name).toBe('lume-a2a-hub');
    const calls = seen.filter((s) => s.meta !== undefined);
    expect(calls.length).toBeGreaterThan(0);
    for (const s of calls) {
      expect(s.session).toBeNull();
      expect((s.meta as Record<string, unknown>)[META_VERSION]).toBe('2026-07-28');
    }
  });

  test('pinned to 2026-07-28 it connects; left on the old revision it opens a 2025-11-25 session', async () => {
    const pinned = await connect({ pin: '2026-07-28' });
    expect((await pinned.listTools()).tools.length).toBeGreaterThan(0);
    seen.length = 0;
    const legacy = await connect('legacy');
    const r = await legacy.callTool({ name: 'scanner_sector_movement', arguments: {} });
    expect(r.isError).toBeFalsy();
    expect(seen.some((s) => s.session !== null)).toBe(true);
  });

  test('over stdio (bun run mcp) it speaks 2026-07-28 too, a subscription open beside the calls', async () => {
    const client = new Client(
      { name: 'lume-v2-stdio', version: '1.0.0' },
      { versionNegotiation: { mode: { pin: '2026-07-28' } } },
    );
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [resolve(import.meta.dir, '../hub/cli/mcp.ts')],
        env: {
          ...(process.env as Record<string, string>),
          LUME_HUB_URL: f.hubUrl,
          LUME_TOKEN: TEST_TOKEN,
        },
        stderr: 'pipe',
      }),
    );
    clients.push(client);
    const sub = await client.listen({ toolsListChanged: true });
    expect(sub.honoredFilter.toolsListChanged).toBe(true);
    const r = await client.callTool({ name: 'scanner_sector_movement', arguments: {} });
    expect(r.isError).toBeFalsy();
    await sub.close();
  });

  test('subscriptions/listen is acknowledged with the changes it will hear', async () => {
    const c = await connect('auto');
    const sub = await c.listen({ toolsListChanged: true, promptsListChanged: true });
    expect(sub.honoredFilter.toolsListChanged).toBe(true);
    await sub.close();
  });
});

/** A raw stateless POST to the hub's /mcp. */
async function raw(
  body: Record<string, unknown>,
  headers: Record<string, string>,
): Promise<{ status: number; json: { error?: { code: number; data?: Record<string, unknown> } } }> {
  const res = await fetch(`${f.hubUrl}/mcp`, {
    method: 'POST',
    headers: {
      ...TEST_AUTH,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...headers,
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, ...body }),
  });
  return { status: res.status, json: await res.json() };
}

const meta = (version = '2026-07-28') => ({
  [META_VERSION]: version,
  'io.modelcontextprotocol/clientCapabilities': {},
});

describe('hostile requests in the stateless form', () => {
  test('Mcp-Method or Mcp-Name disagreeing with the body is HeaderMismatch (-32020), 400', async () => {
    const call = { method: 'tools/call', params: { name: 'ask', arguments: {}, _meta: meta() } };
    const base = { 'mcp-protocol-version': '2026-07-28' };
    const wrongMethod = await raw(call, { ...base, 'mcp-method': 'tools/list', 'mcp-name': 'ask' });
    expect(wrongMethod.status).toBe(400);
    expect(wrongMethod.json.error?.code).toBe(-32020);
    const wrongName = await raw(call, { ...base, 'mcp-method': 'tools/call', 'mcp-name': 'x' });
    expect(wrongName.json.error?.code).toBe(-32020);
    const noName = await raw(call, { ...base, 'mcp-method': 'tools/call' });
    expect(noName.json.error?.code).toBe(-32020);
    // The Base64 sentinel form names the same tool.
    const encoded = `=?base64?${Buffer.from('nope').toString('base64')}?=`;
    const sentinel = await raw(
      { method: 'tools/call', params: { name: 'nope', arguments: {}, _meta: meta() } },
      { ...base, 'mcp-method': 'tools/call', 'mcp-name': encoded },
    );
    expect(sentinel.json.error?.data?.code).toBe('MCP_UNKNOWN_TOOL');
  });

  test('a revision not served is -32022 with the ones served; a header disagreeing with _meta -32020', async () => {
    const list = (v: string) => ({ method: 'tools/list', params: { _meta: meta(v) } });
    const unknown = await raw(list('2099-01-01'), {
      'mcp-protocol-version': '2099-01-01',
      'mcp-method': 'tools/list',
    });
    expect(unknown.status).toBe(400);
    expect(unknown.json.error?.code).toBe(-32022);
    expect(unknown.json.error?.data?.supported).toContain('2026-07-28');
    const disagree = await raw(list('2026-07-28'), {
      'mcp-protocol-version': '2025-11-25',
      'mcp-method': 'tools/list',
    });
    expect(disagree.json.error?.code).toBe(-32020);
  });

  test('a request mixing the forms (a session id with a _meta revision) is refused; removed methods are 404', async () => {
    const mixed = await raw(
      { method: 'tools/list', params: { _meta: meta() } },
      {
        'mcp-protocol-version': '2026-07-28',
        'mcp-method': 'tools/list',
        'mcp-session-id': 'mcp_whatever',
      },
    );
    expect(mixed.status).toBe(400);
    expect(mixed.json.error?.data?.code).toBe('MCP_MIXED_REVISIONS');
    const ping = await raw(
      { method: 'ping', params: { _meta: meta() } },
      { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'ping' },
    );
    expect(ping.status).toBe(404);
    expect(ping.json.error?.code).toBe(-32601);
  });
});
