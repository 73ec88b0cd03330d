/**
 * Hostile input to the hub's MCP endpoint, raw HTTP: batches, malformed and wrongly typed
 * messages, unknown methods, oversized bodies and arguments, a missing, forged or another
 * caller's session id, foreign origins and a forged Host, unsupported revisions; each gets its
 * coded refusal, changes nothing, and the endpoint keeps answering. The session table's bound and
 * idle expiry are checked in process with a clock of the test's own.
 */

import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { ANONYMOUS } from '../lib/auth/principal.ts';
import { createMcpHttp } from '../lib/mcp/http.ts';
import { MCP_LIMITS } from '../lib/mcp/limits.ts';
import { createMcpServer } from '../lib/mcp/server.ts';
import { McpSessions } from '../lib/mcp/sessions.ts';
import { createStdioBridge } from '../lib/mcp/stdio-bridge.ts';
import { realNodeDefs, startFleet, type RunningFleet } from './support/fleet.ts';
import { TEST_AUTH } from './support/node.ts';

setDefaultTimeout(20_000); // per file (Bun scopes it so): real servers and processes are slow on a busy machine

const OTHER_TOKEN = 'lume_other-principal-token-for-the-hostile-suite';
let f: RunningFleet;
beforeAll(async () => {
  f = await startFleet(await realNodeDefs(['scanner']), { tokens: { other: OTHER_TOKEN } });
});
afterAll(() => f.stop());

const BASE = { accept: 'application/json, text/event-stream', 'content-type': 'application/json' };
const init = (id: number | string = 1) => ({
  jsonrpc: '2.0',
  id,
  method: 'initialize',
  params: {
    protocolVersion: '2025-11-25',
    capabilities: {},
    clientInfo: { name: 'raw', version: '0' },
  },
});

async function post(body: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(`${f.hubUrl}/mcp`, {
    method: 'POST',
    headers: { ...BASE, ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  return {
    status: res.status,
    session: res.headers.get('mcp-session-id'),
    json: text ? JSON.parse(text) : undefined,
  };
}

/** A session of the test principal (or of `auth`), initialized. */
async function session(auth: Record<string, string> = TEST_AUTH): Promise<Record<string, string>> {
  const r = await post(init(), auth);
  expect(r.status).toBe(200);
  const h = { ...auth, 'mcp-session-id': r.session!, 'mcp-protocol-version': '2025-11-25' };
  expect((await post({ jsonrpc: '2.0', method: 'notifications/initialized' }, h)).status).toBe(202);
  return h;
}
const call = (h: Record<string, string>, method: string, params: unknown, id = 7) =>
  post({ jsonrpc: '2.0', id, method, params }, h);
const codeOf = (r: { json: any }) => r.json?.error?.data?.code ?? r.json?.error?.code;

describe('messages', () => {
  test('a batch, malformed JSON, a non-JSON-RPC object and a bad id are refused before any session exists', async () => {
    const cases = [
      await post([init(1), init(2)]),
      await post('{"jsonrpc":"2.0",'),
      await post(
        '[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]',
      ),
      await post({ id: 1, method: 'initialize' }),
      await post({ jsonrpc: '2.0', id: { x: 1 }, method: 'initialize' }),
      await post({ jsonrpc: '2.0', id: 1, method: 'initialize', params: 'x' }),
      await post({ jsonrpc: '2.0', id: 1 }),
    ];
    expect(cases.map((r) => [r.status, codeOf(r), r.session])).toEqual([
      [400, 'MCP_BATCH', null],
      [400, 'MCP_BAD_JSON', null],
      [400, 'BODY_TOO_DEEP', null],
      [400, 'MCP_BAD_MESSAGE', null],
      [400, 'MCP_BAD_MESSAGE', null],
      [400, 'MCP_BAD_PARAMS', null],
      [400, 'MCP_BAD_MESSAGE', null],
    ]);
    expect(cases[0]!.json.error.code).toBe(-32600);
    expect(cases[1]!.json.error.code).toBe(-32700);
  });

  test('unknown methods, wrong types and oversized arguments are JSON-RPC errors; the session goes on', async () => {
    const h = await session();
    const big = 'x'.repeat(MCP_LIMITS.argumentBytes);
    const answers = [
      await call(h, 'prompts/list', {}),
      await call(h, 'tools/call', { name: 42 }),
      await call(h, 'tools/call', { name: 'scanner_sector_movement', arguments: [1, 2] }),
      await call(h, 'tools/call', { name: 'scanner_sector_movement', arguments: { a: big } }),
      await call(h, 'tools/call', { name: 'no_such_tool', arguments: {} }),
      await call(h, 'resources/read', { uri: 7 }),
      await call(h, 'resources/read', { uri: 'file:///etc/passwd' }),
      await call(h, 'initialize', init().params),
    ];
    expect(answers.map((r) => [r.status, r.json.error.code, codeOf(r)])).toEqual([
      [200, -32601, 'MCP_UNKNOWN_METHOD'],
      [200, -32602, 'MCP_BAD_PARAMS'],
      [200, -32602, 'MCP_BAD_PARAMS'],
      [200, -32602, 'MCP_ARGS_TOO_LARGE'],
      [200, -32602, 'MCP_UNKNOWN_TOOL'],
      [200, -32602, 'MCP_BAD_PARAMS'],
      [200, -32002, 'MCP_UNKNOWN_RESOURCE'],
      // initialize inside a session is refused by the transport, before the message is read as a request.
      [400, -32600, 'MCP_ALREADY_INITIALIZED'],
    ]);
    expect(answers.slice(0, -1).every((r) => r.json.id === 7)).toBe(true);
    // Nothing was called on a node by any of them.
    const rows = (await (await fetch(`${f.hubUrl}/api/trace?to=scanner&limit=500`)).json()).records;
    expect(rows).toEqual([]);
    const ok = await call(h, 'tools/call', { name: 'scanner_sector_movement', arguments: {} });
    expect(ok.json.result.isError).toBeUndefined();
  });

  test('a body over the limit is 413; a wrong Accept or Content-Type is refused', async () => {
    const huge = await post({ ...init(), pad: 'x'.repeat(MCP_LIMITS.bodyBytes) });
    const noAccept = await post(init(), { accept: 'application/json' });
    const text = await post(JSON.stringify(init()), { 'content-type': 'text/plain' });
    expect([huge.status, codeOf(huge)]).toEqual([413, 'MCP_TOO_LARGE']);
    expect([noAccept.status, codeOf(noAccept)]).toEqual([406, 'MCP_NOT_ACCEPTABLE']);
    expect([text.status, codeOf(text)]).toEqual([415, 'NOT_JSON']);
  });
});

describe('sessions', () => {
  test('a missing, forged or another caller’s session id finds nothing, and the owner keeps it', async () => {
    const mine = await session();
    const id = mine['mcp-session-id']!;
    const ping = { jsonrpc: '2.0', id: 1, method: 'ping' };
    const missing = await post(ping);
    const forged = await post(ping, { ...TEST_AUTH, 'mcp-session-id': 'mcp_forged' });
    const anonymous = await post(ping, { 'mcp-session-id': id });
    const other = await post(ping, {
      authorization: `Bearer ${OTHER_TOKEN}`,
      'mcp-session-id': id,
    });
    const binary = await post(ping, { ...TEST_AUTH, 'mcp-session-id': 'x y' });
    expect([missing, forged, anonymous, other, binary].map((r) => [r.status, codeOf(r)])).toEqual([
      [400, 'MCP_SESSION_REQUIRED'],
      [404, 'MCP_UNKNOWN_SESSION'],
      [404, 'MCP_UNKNOWN_SESSION'],
      [404, 'MCP_UNKNOWN_SESSION'],
      [404, 'MCP_UNKNOWN_SESSION'],
    ]);
    // Another caller cannot end it either, nor open its stream.
    const del = await fetch(`${f.hubUrl}/mcp`, {
      method: 'DELETE',
      headers: { 'mcp-session-id': id },
    });
    expect(del.status).toBe(404);
    const stream = await fetch(`${f.hubUrl}/mcp`, {
      headers: {
        accept: 'text/event-stream',
        authorization: `Bearer ${OTHER_TOKEN}`,
        'mcp-session-id': id,
      },
    });
    expect(stream.status).toBe(404);
    expect((await post(ping, mine)).json).toEqual({ jsonrpc: '2.0', id: 1, result: {} });
    // The owner ends it; then it is gone.
    const end = await fetch(`${f.hubUrl}/mcp`, { method: 'DELETE', headers: mine });
    expect(end.status).toBe(204);
    expect((await post(ping, mine)).status).toBe(404);
  });

  test('one stream per session; an unsupported revision header is 400', async () => {
    const h = await session();
    const open = await fetch(`${f.hubUrl}/mcp`, { headers: { ...h, accept: 'text/event-stream' } });
    expect([open.status, open.headers.get('content-type')]).toEqual([200, 'text/event-stream']);
    const second = await fetch(`${f.hubUrl}/mcp`, {
      headers: { ...h, accept: 'text/event-stream' },
    });
    expect(second.status).toBe(409);
    await open.body!.cancel();
    const old = await post(
      { jsonrpc: '2.0', id: 1, method: 'ping' },
      { ...h, 'mcp-protocol-version': '1999-01-01' },
    );
    expect([old.status, codeOf(old)]).toEqual([400, 'MCP_BAD_PROTOCOL_VERSION']);
    const put = await fetch(`${f.hubUrl}/mcp`, {
      method: 'PUT',
      headers: { ...h, ...BASE },
      body: '{}',
    });
    expect([put.status, put.headers.get('allow')]).toEqual([405, 'POST, GET, DELETE']);
  });

  test('a wrong bearer token is 401 and opens nothing', async () => {
    const r = await post(init(), { authorization: 'Bearer lume_wrong' });
    expect([r.status, r.session]).toEqual([401, null]);
  });
});

describe('the browser boundary (DNS rebinding)', () => {
  test('another origin is refused on POST and GET, a forged Host on everything', async () => {
    const h = await session();
    const evil = 'http://evil.example';
    const postEvil = await post(init(), { origin: evil });
    const getEvil = await fetch(`${f.hubUrl}/mcp`, {
      headers: { ...h, accept: 'text/event-stream', origin: evil },
    });
    const host = new URL(f.hubUrl).host;
    const rebound = await fetch(`${f.hubUrl}/mcp`, {
      method: 'POST',
      headers: { ...BASE, host: `rebind.example:${host.split(':')[1]}` },
      body: JSON.stringify(init()),
    });
    const own = await post(init(), { origin: f.hubUrl });
    expect([postEvil.status, getEvil.status, rebound.status, own.status]).toEqual([
      403, 403, 403, 200,
    ]);
    expect((await getEvil.json()).error.data.code).toBe('FORBIDDEN_ORIGIN');
  });
});

describe('a hub that requires a principal', () => {
  test('refuses an anonymous MCP client outright', async () => {
    const strict = await startFleet(await realNodeDefs(['scanner']), {
      hub: { requireLogin: true },
    });
    try {
      const r = await fetch(`${strict.hubUrl}/mcp`, {
        method: 'POST',
        headers: BASE,
        body: JSON.stringify(init()),
      });
      expect([r.status, (await r.json()).error.data.code]).toEqual([401, 'UNAUTHENTICATED']);
      const catalog = await fetch(`${strict.hubUrl}/.well-known/ai-catalog.json`);
      expect(catalog.status).toBe(401);
      const ok = await fetch(`${strict.hubUrl}/mcp`, {
        method: 'POST',
        headers: { ...BASE, ...TEST_AUTH },
        body: JSON.stringify(init()),
      });
      expect(ok.status).toBe(200);
    } finally {
      await strict.stop();
    }
  });
});

describe('the session table (in process)', () => {
  const server = createMcpServer({
    info: { name: 't', version: '0' },
    tools: { list: async () => [], call: async () => undefined },
    resources: { list: async () => [], read: async () => undefined },
    limits: MCP_LIMITS,
  });
  const req = (headers: Record<string, string> = {}) =>
    new Request('http://localhost/mcp', {
      method: 'POST',
      headers: { ...BASE, ...headers },
      body: JSON.stringify(init()),
    });

  test('is bounded: past the limit initialize is 503 until an idle session expires', async () => {
    let now = 0;
    const sessions = new McpSessions(
      { ...MCP_LIMITS, sessions: 2, sessionIdleMs: 1_000 },
      () => now,
    );
    const http = createMcpHttp({
      server,
      sessions,
      limits: MCP_LIMITS,
      allowedOrigin: () => false,
      anonymousAllowed: true,
    });
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await http.fetch(req(), ANONYMOUS)).status);
    expect(statuses).toEqual([200, 200, 503]);
    const full = await http.fetch(req(), ANONYMOUS);
    expect((await full.json()).error.data.code).toBe('MCP_SESSIONS_FULL');
    now = 1_001;
    const after = await http.fetch(req(), ANONYMOUS);
    expect([after.status, sessions.size]).toEqual([200, 1]);
  });

  test('a session listening on its stream is not idle, however long since its last request', async () => {
    let now = 0;
    const sessions = new McpSessions({ ...MCP_LIMITS, sessionIdleMs: 1_000 }, () => now);
    const listening = sessions.open('anonymous', '2025-11-25', 't');
    const quiet = sessions.open('anonymous', '2025-11-25', 't');
    if (!listening.ok || !quiet.ok) throw new Error('sessions were refused');
    const stream = sessions.openStream(listening.result)!;
    now = 5_000;
    sessions.sweep();
    expect(sessions.find(listening.result.id, 'anonymous')).toBe(listening.result);
    expect(sessions.find(quiet.result.id, 'anonymous')).toBeUndefined();
    stream.close();
    now = 10_000;
    expect(sessions.find(listening.result.id, 'anonymous')).toBeUndefined();
  });

  test("one principal's sessions are capped: its least recently used one ends, nobody else's", async () => {
    let now = 0;
    const sessions = new McpSessions({ ...MCP_LIMITS, sessionsPerPrincipal: 2 }, () => now);
    const alice = { kind: 'token', name: 'alice' } as const;
    const http = createMcpHttp({
      server,
      sessions,
      limits: MCP_LIMITS,
      allowedOrigin: () => false,
      anonymousAllowed: true,
    });
    const ids: string[] = [];
    for (const caller of [alice, ANONYMOUS, alice, alice]) {
      now += 1;
      ids.push((await http.fetch(req(), caller)).headers.get('mcp-session-id')!);
    }
    expect(sessions.size).toBe(3);
    expect(sessions.find(ids[0]!, 'user:alice')).toBeUndefined();
    expect(sessions.find(ids[1]!, 'anonymous@unknown')).toBeDefined();
    expect(sessions.find(ids[3]!, 'user:alice')).toBeDefined();
  });

  test('anonymous sessions are told apart by address: another address can neither use, end nor evict one', async () => {
    const sessions = new McpSessions({ ...MCP_LIMITS, sessionsPerPrincipal: 2 });
    const http = createMcpHttp({
      server,
      sessions,
      limits: MCP_LIMITS,
      allowedOrigin: () => false,
      anonymousAllowed: true,
    });
    const mine = (await http.fetch(req(), ANONYMOUS, '10.0.0.1')).headers.get('mcp-session-id')!;
    const h = { ...BASE, 'mcp-session-id': mine };
    const list = () =>
      new Request('http://localhost/mcp', {
        method: 'POST',
        headers: h,
        body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }),
      });
    const used = await http.fetch(list(), ANONYMOUS, '10.0.0.2');
    const ended = await http.fetch(
      new Request('http://localhost/mcp', { method: 'DELETE', headers: h }),
      ANONYMOUS,
      '10.0.0.2',
    );
    expect([used.status, (await used.json()).error.data.code]).toEqual([
      404,
      'MCP_UNKNOWN_SESSION',
    ]);
    expect([ended.status, (await ended.json()).error.data.code]).toEqual([
      404,
      'MCP_UNKNOWN_SESSION',
    ]);
    // Another address's flood of initialize recycles its own share only.
    for (let i = 0; i < 5; i++)
      expect((await http.fetch(req(), ANONYMOUS, '10.0.0.2')).status).toBe(200);
    expect((await http.fetch(list(), ANONYMOUS, '10.0.0.1')).status).toBe(200);
    expect(sessions.size).toBe(3);
    // Its owner still ends it.
    const own = await http.fetch(
      new Request('http://localhost/mcp', { method: 'DELETE', headers: h }),
      ANONYMOUS,
      '10.0.0.1',
    );
    expect([own.status, sessions.size]).toEqual([204, 2]);
  });
});

describe('the stdio relay (in process)', () => {
  test('a hub that is gone answers each request with an error of its id; a notification gets nothing', async () => {
    const closed = Bun.serve({ port: 0, fetch: () => new Response('') });
    const url = `http://127.0.0.1:${closed.port}/mcp`;
    await closed.stop(true);
    const lines: string[] = [];
    const bridge = createStdioBridge({ url, write: (l) => lines.push(l), warn: () => {} });
    await bridge.line(JSON.stringify({ jsonrpc: '2.0', id: 'a', method: 'ping' }));
    await bridge.line(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }));
    await bridge.close();
    expect(lines.map((l) => JSON.parse(l))).toEqual([
      {
        jsonrpc: '2.0',
        id: 'a',
        error: { code: -32603, message: `the hub is unreachable at ${url}` },
      },
    ]);
  });

  test("the hub's refusals reach the harness as answers to the request that caused them", async () => {
    const lines: string[] = [];
    const bridge = createStdioBridge({
      url: `${f.hubUrl}/mcp`,
      token: 'lume_not-a-token',
      write: (l) => lines.push(l),
      warn: () => {},
    });
    await bridge.line(JSON.stringify(init(9)));
    // A refused notification has no request to answer: nothing is written for it.
    await bridge.line(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }));
    await bridge.close();
    expect(lines).toHaveLength(1);
    const refused = JSON.parse(lines[0]!);
    expect([refused.id, refused.error.code, refused.error.data.code]).toEqual([
      9,
      -32600,
      'UNAUTHENTICATED',
    ]);
    // A line that is not JSON reaches the hub, whose parse error (without an id) comes back.
    const open: string[] = [];
    const plain = createStdioBridge({
      url: `${f.hubUrl}/mcp`,
      write: (l) => open.push(l),
      warn: () => {},
    });
    await plain.line('this is not json');
    await plain.close();
    expect(open.map((l) => JSON.parse(l).error?.code)).toEqual([-32700]);
  });
});
