/**
 * `/metrics` on a node and on the hub, read by a strict parser of the Prometheus text format:
 * the families and their types, route templates instead of raw paths, counters that move with
 * traffic and never fall; the registry's own bounds and escaping; the access rule beyond loopback.
 */

import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Catalog, type Capability } from '../lib/catalog/catalog.ts';
import { createMeshClient } from '../lib/mesh/client.ts';
import { silentLog } from '../lib/log.ts';
import { createNode } from '../lib/node/create-node.ts';
import type { NodeDefinition } from '../lib/node/node-types.ts';
import { codedJsonResponse } from '../lib/metrics/answer-code.ts';
import { createRequestObserver, errorCodeOf, routeTemplater } from '../lib/metrics/http.ts';
import { createMetricsRegistry, PROMETHEUS_CONTENT_TYPE } from '../lib/metrics/registry.ts';
import { bunCommand } from './support/bundle.ts';
import { startFleet, type RunningFleet } from './support/fleet.ts';
import { startNode, tempDir, TEST_AUTH } from './support/node.ts';
import { startProcess } from './support/process.ts';
import { TokenBook } from '../lib/auth/tokens.ts';
import { assertMonotonic, parsePrometheus, valueOf, type Family } from './support/prometheus.ts';

setDefaultTimeout(20_000); // per file (Bun scopes it so): real servers and processes are slow on a busy machine

const word: Capability = {
  id: 'w.echo',
  name: 'Echo',
  description: 'Echoes a word',
  tags: ['test'],
  keywords: ['echo', 'word'],
  readOnly: true,
  args: { word: { type: 'string', description: 'a word' } },
  run: (a: Record<string, unknown>) => ({ echo: a.word ?? 'none' }),
} as unknown as Capability;
const w: NodeDefinition = { name: 'w', description: 'echoes', catalog: new Catalog([word]) };

let f: RunningFleet;
beforeAll(async () => {
  f = await startFleet([w]);
});
afterAll(() => f.stop());

async function scrape(url: string): Promise<Map<string, Family>> {
  const res = await fetch(`${url}/metrics`);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toBe(PROMETHEUS_CONTENT_TYPE);
  return parsePrometheus(await res.text());
}

const a2a = (url: string, method: string, params: unknown) =>
  fetch(`${url}/a2a`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'A2A-Version': '1.0' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  }).then((r) => r.json() as Promise<any>);

describe("a node's /metrics", () => {
  test('parses strictly; requests, latency, errors and task states move with traffic; counters never fall', async () => {
    const url = f.nodes.get('w')!.url;
    const before = await scrape(url);
    for (const [name, type] of [
      ['lume_http_requests_total', 'counter'],
      ['lume_http_request_duration_seconds', 'histogram'],
      ['lume_http_errors_total', 'counter'],
      ['lume_task_states_total', 'counter'],
      ['lume_webhook_queue', 'gauge'],
      ['lume_sse_streams', 'gauge'],
    ] as const)
      expect([name, before.get(name)?.type]).toEqual([name, type]);

    const sent = await a2a(url, 'SendMessage', {
      message: {
        messageId: 'm-1',
        role: 'ROLE_USER',
        parts: [{ data: { skill: 'w.echo', args: { word: 'hi' } } }],
      },
    });
    const taskId = sent.result.task.id as string;
    expect(sent.result.task.status.state).toBe('TASK_STATE_COMPLETED');
    expect(
      (await fetch(`${url}/tasks/${taskId}`, { headers: { 'A2A-Version': '1.0' } })).status,
    ).toBe(200);
    expect(
      (await fetch(`${url}/tasks/no-such-task`, { headers: { 'A2A-Version': '1.0' } })).status,
    ).toBe(404);
    expect((await a2a(url, 'GetTask', { id: 'no-such-task' })).error.code).toBe(-32001);
    expect((await fetch(`${url}/no/such/route/${taskId}`)).status).toBe(404);
    // A stream, read to its end: no longer counted as open once its end was read.
    const stream = await fetch(`${url}/a2a`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'A2A-Version': '1.0' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 2,
        method: 'SendStreamingMessage',
        params: {
          message: {
            messageId: 'm-2',
            role: 'ROLE_USER',
            parts: [{ data: { skill: 'w.echo', args: {} } }],
          },
        },
      }),
    });
    expect(await stream.text()).toContain('TASK_STATE_COMPLETED');

    const after = await scrape(url);
    assertMonotonic(before, after);
    const grew = (name: string, labels: Record<string, string>) =>
      valueOf(after, name, labels) - valueOf(before, name, labels);
    expect(grew('lume_http_requests_total', { route: '/a2a', method: 'POST', status: '200' })).toBe(
      3,
    );
    expect(
      grew('lume_http_requests_total', { route: '/tasks/{id}', method: 'GET', status: '200' }),
    ).toBe(1);
    expect(
      grew('lume_http_requests_total', { route: '/tasks/{id}', method: 'GET', status: '404' }),
    ).toBe(1);
    expect(grew('lume_http_requests_total', { route: 'other', method: 'GET', status: '404' })).toBe(
      1,
    );
    expect(grew('lume_http_request_duration_seconds_count', { route: '/a2a' })).toBe(3);
    expect(grew('lume_task_states_total', { a2a_task_state: 'TASK_STATE_COMPLETED' })).toBe(2);
    expect(grew('lume_task_states_total', { a2a_task_state: 'TASK_STATE_WORKING' })).toBe(2);
    expect(valueOf(after, 'lume_sse_streams', { route: '/a2a' })).toBe(0);
    const errors = after;
    expect(
      valueOf(errors, 'lume_http_errors_total', { route: '/tasks/{id}', code: 'TASK_NOT_FOUND' }) -
        valueOf(before, 'lume_http_errors_total', { route: '/tasks/{id}', code: 'TASK_NOT_FOUND' }),
    ).toBe(1);
    expect(
      valueOf(errors, 'lume_http_errors_total', { route: '/a2a', code: 'TASK_NOT_FOUND' }) -
        valueOf(before, 'lume_http_errors_total', { route: '/a2a', code: 'TASK_NOT_FOUND' }),
    ).toBe(1);
    expect(
      valueOf(errors, 'lume_http_errors_total', { route: 'other', code: 'NOT_FOUND' }),
    ).toBeGreaterThanOrEqual(1);
    // No raw path or id ever becomes a label value.
    const text = await (await fetch(`${url}/metrics`)).text();
    expect(text).not.toContain(taskId);
    expect(text).not.toContain('no-such-task');
    expect(text).not.toContain('/no/such/route');
  });
});

describe("the hub's /metrics", () => {
  test("fleet calls, error codes, mesh presences and messages, and the hub's own routes", async () => {
    const before = await scrape(f.hubUrl);
    expect(before.get('lume_mesh_presences')?.type).toBe('gauge');
    // An open event stream (the trace's) is counted while it is open.
    const controller = new AbortController();
    const live = await fetch(`${f.hubUrl}/api/trace/stream`, { signal: controller.signal });
    expect(live.headers.get('content-type')).toStartWith('text/event-stream');
    expect(
      valueOf(await scrape(f.hubUrl), 'lume_sse_streams', { route: '/api/trace/stream' }),
    ).toBe(1);
    controller.abort();
    await live.body?.cancel().catch(() => {});
    expect(valueOf(before, 'lume_mesh_presences')).toBe(0);

    const invoke = (capability: string) =>
      fetch(`${f.hubUrl}/api/local-invoke`, {
        method: 'POST',
        headers: { origin: f.hubUrl, 'content-type': 'application/json', ...TEST_AUTH },
        body: JSON.stringify({ target: 'w', capability, args: { word: 'x' } }),
      });
    expect((await invoke('w.echo')).status).toBe(200);
    expect((await invoke('w.missing')).status).toBeGreaterThanOrEqual(400);

    // A mesh presence, and one message it sends to its project.
    expect(
      (
        await fetch(`${f.hubUrl}/api/projects.create`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ name: 'metrics' }),
        })
      ).status,
    ).toBe(200);
    const dir = mkdtempSync(join(tmpdir(), 'metrics-mesh-'));
    const client = createMeshClient({ hubUrl: f.hubUrl, log: silentLog, attachmentsDir: dir });
    try {
      await client.connect('agent-1', 'metrics', 'alice');
      const sent = await client.send('agent-1', { target: { type: 'project' }, text: 'hello' });
      expect(sent.ok).toBe(true);
      const during = await scrape(f.hubUrl);
      expect(valueOf(during, 'lume_mesh_presences')).toBe(1);
      expect(
        valueOf(during, 'lume_mesh_messages_total') - valueOf(before, 'lume_mesh_messages_total'),
      ).toBe(1);
    } finally {
      client.close();
      rmSync(dir, { recursive: true, force: true });
    }

    const after = await scrape(f.hubUrl);
    assertMonotonic(before, after);
    const grew = (name: string, labels: Record<string, string>) =>
      valueOf(after, name, labels) - valueOf(before, name, labels);
    expect(grew('lume_fleet_calls_total', { side: 'made', outcome: 'ok' })).toBe(1);
    expect(grew('lume_fleet_calls_total', { side: 'made', outcome: 'failed' })).toBe(1);
    expect(
      grew('lume_http_requests_total', {
        route: '/api/local-invoke',
        method: 'POST',
        status: '200',
      }),
    ).toBe(1);
    expect(
      grew('lume_http_requests_total', {
        route: '/api/projects.create',
        method: 'POST',
        status: '200',
      }),
    ).toBe(1);
    expect(
      valueOf(after, 'lume_http_requests_total', {
        route: '/metrics',
        method: 'GET',
        status: '200',
      }),
    ).toBeGreaterThanOrEqual(2);
    const failure = [...(after.get('lume_fleet_call_errors_total')?.samples ?? [])];
    expect(failure.reduce((n, s) => n + s.value, 0)).toBeGreaterThanOrEqual(1);
    // The hub's node metrics are in the same exposition (one registry per process).
    expect(after.get('lume_task_states_total')?.type).toBe('counter');
  });
});

describe('the registry', () => {
  test('escapes label values and help text, folds unknown and excess labels into "other"', () => {
    const r = createMetricsRegistry();
    const c = r.counter('t_total', 'help with \\ and\nnewline', {
      labels: ['v', 'm'],
      values: { m: ['GET'] },
      maxSeries: 3,
    });
    c.inc({ v: 'quote " back \\ nl \n', m: 'GET' });
    c.inc({ v: 'b', m: 'BREW' });
    c.inc({ v: 'c', m: 'GET' });
    c.inc({ v: 'd', m: 'GET' }); // a fourth series: folded
    c.inc({ v: 'e', m: 'GET' }, 2); // folded too
    c.inc({ v: 'x'.repeat(200), m: 'GET' }); // too long: other
    c.inc({ v: 'c', m: 'GET' }, -5); // never down
    const text = r.render();
    expect(text).toContain('# HELP t_total help with \\\\ and\\nnewline\n');
    expect(text).toContain('t_total{v="quote \\" back \\\\ nl \\n",m="GET"} 1\n');
    const parsed = parsePrometheus(text);
    expect(valueOf(parsed, 't_total', { v: 'quote " back \\ nl \n', m: 'GET' })).toBe(1);
    expect(valueOf(parsed, 't_total', { v: 'b', m: 'other' })).toBe(1);
    expect(valueOf(parsed, 't_total', { v: 'c', m: 'GET' })).toBe(1);
    expect(valueOf(parsed, 't_total', { v: 'other', m: 'other' })).toBe(4);
    expect(parsed.get('t_total')!.samples).toHaveLength(4);
  });

  test('a histogram renders cumulative buckets, +Inf, _sum and _count', () => {
    const r = createMetricsRegistry();
    const h = r.histogram('t_seconds', 'time', [0.1, 1], { labels: ['route'] });
    for (const v of [0.05, 0.5, 0.5, 3]) h.observe({ route: '/a' }, v);
    const parsed = parsePrometheus(r.render());
    expect(valueOf(parsed, 't_seconds_bucket', { route: '/a', le: '0.1' })).toBe(1);
    expect(valueOf(parsed, 't_seconds_bucket', { route: '/a', le: '1' })).toBe(3);
    expect(valueOf(parsed, 't_seconds_bucket', { route: '/a', le: '+Inf' })).toBe(4);
    expect(valueOf(parsed, 't_seconds_count', { route: '/a' })).toBe(4);
    expect(valueOf(parsed, 't_seconds_sum', { route: '/a' })).toBeCloseTo(4.05);
  });

  test('bad names are refused when a metric is made', () => {
    const r = createMetricsRegistry();
    expect(() => r.counter('bad-name', 'x')).toThrow();
    expect(() => r.counter('ok_total', 'x', { labels: ['__reserved'] })).toThrow();
    expect(() => r.histogram('h', 'x', [1], { labels: ['le'] })).toThrow();
    expect(() => r.histogram('h2', 'x', [2, 1])).toThrow();
    r.gauge('g', 'x');
    expect(() => r.gauge('g', 'x')).toThrow();
  });

  test('the strict parser refuses what the format forbids', () => {
    const bad = [
      'x 1', // no newline at the end
      'x 1\n', // no TYPE
      '# TYPE x counter\nx -1\n',
      '# TYPE x counter\nx{a="b} 1\n',
      '# TYPE x counter\nx{a="\\t"} 1\n',
      '# TYPE x counter\nx{1a="b"} 1\n',
      '# TYPE x counter\nx 1\nx 2\n',
      '# TYPE x counter\n# TYPE y gauge\ny 1\nx 1\n',
      '# TYPE h histogram\nh_bucket{le="1"} 1\nh_sum 1\nh_count 1\n', // no +Inf
      '# TYPE h histogram\nh_bucket{le="1"} 2\nh_bucket{le="+Inf"} 1\nh_sum 1\nh_count 1\n',
      '# TYPE h histogram\nh_bucket{le="+Inf"} 2\nh_sum 1\nh_count 1\n',
      '# TYPE x counter\nx one\n',
    ];
    for (const text of bad) expect(() => parsePrometheus(text)).toThrow();
  });

  test('error codes are read from every coded failure shape', () => {
    expect(errorCodeOf({ ok: false, error: { code: 'PEER_LOOP', message: '' } })).toBe('PEER_LOOP');
    expect(
      errorCodeOf({
        error: {
          code: 404,
          status: 'NOT_FOUND',
          details: [{ '@type': 'x', reason: 'TASK_NOT_FOUND' }],
        },
      }),
    ).toBe('TASK_NOT_FOUND');
    expect(
      errorCodeOf({
        jsonrpc: '2.0',
        error: { code: -32001, message: '', data: { reason: 'TASK_NOT_FOUND' } },
      }),
    ).toBe('TASK_NOT_FOUND');
    expect(errorCodeOf({ jsonrpc: '2.0', error: { code: -32700, message: '' } })).toBe(
      'PARSE_ERROR',
    );
    expect(errorCodeOf({ result: {} })).toBeUndefined();
  });

  test('an answer that carries the code its builder rendered counts as the same answer read back from its body', async () => {
    const bodies = [
      {
        jsonrpc: '2.0',
        id: 1,
        error: {
          code: -32001,
          message: 'Task not found',
          data: [{ '@type': 'x', reason: 'TASK_NOT_FOUND' }],
        },
      },
      { jsonrpc: '2.0', id: 2, result: { task: { id: 't' } } },
      { jsonrpc: '2.0', id: 3, error: { code: -32700, message: 'Parse error' } },
      [{ jsonrpc: '2.0', id: 4, error: { code: -32601, message: 'Method not found' } }],
    ];
    // What each builder says it rendered (a batch's answer carries no one code).
    const rendered = new Map<unknown, string | null>(
      bodies.map((b, i) => [JSON.stringify(b), ['TASK_NOT_FOUND', null, 'PARSE_ERROR', null][i]!]),
    );
    const counts = async (build: (doc: unknown) => Response) => {
      const registry = createMetricsRegistry();
      const fetch = createRequestObserver(registry, routeTemplater(['/a2a'])).wrap((req: Request) =>
        req.json().then(build),
      );
      for (const doc of bodies) {
        const res = await fetch(
          new Request('http://127.0.0.1/a2a', { method: 'POST', body: JSON.stringify(doc) }),
        );
        expect(await res.json()).toEqual(doc); // the answer itself reaches the caller unchanged
      }
      const families = parsePrometheus(registry.render());
      return [...(families.get('lume_http_errors_total')?.samples ?? [])]
        .map((s) => `${s.labels.code}=${s.value}`)
        .sort();
    };
    const told = await counts((doc) =>
      codedJsonResponse(doc, 200, rendered.get(JSON.stringify(doc)) ?? null),
    );
    const readBack = await counts(
      (doc) =>
        new Response(JSON.stringify(doc), { headers: { 'content-type': 'application/json' } }),
    );
    expect(told).toEqual(['PARSE_ERROR=1', 'TASK_NOT_FOUND=1']);
    expect(told).toEqual(readBack);
  });
});

describe('who may read /metrics', () => {
  const def: NodeDefinition = { name: 'm', description: 'm', catalog: new Catalog([word]) };
  const get = (node: ReturnType<typeof createNode>, headers: Record<string, string> = {}) =>
    node.fetch(new Request('http://node.example/metrics', { headers }));

  test('bound beyond loopback without an access hook: refused with METRICS_FORBIDDEN', async () => {
    const dir = tempDir();
    const node = createNode(def, { dataDir: dir, host: '0.0.0.0', push: false });
    try {
      const res = await get(node);
      expect(res.status).toBe(403);
      expect(((await res.json()) as any).error.code).toBe('METRICS_FORBIDDEN');
    } finally {
      await node.engine.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('with an access hook, the hook decides', async () => {
    const dir = tempDir();
    const node = createNode(def, {
      dataDir: dir,
      host: '0.0.0.0',
      push: false,
      metricsAccess: (req) =>
        req.headers.get('authorization') === 'Bearer ops'
          ? undefined
          : Response.json({ error: { code: 'UNAUTHENTICATED' } }, { status: 401 }),
    });
    try {
      expect((await get(node)).status).toBe(401);
      const ok = await get(node, { authorization: 'Bearer ops' });
      expect(ok.status).toBe(200);
      parsePrometheus(await ok.text());
    } finally {
      await node.engine.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('/metrics through the access policy, with tokens made by `bun run keys token add`', () => {
  /** `bun run keys token add <name>` over a data folder: the token it prints once. */
  async function tokenAdd(dataDir: string, name: string): Promise<string> {
    const proc = Bun.spawn(
      bunCommand([join(import.meta.dir, '..', 'hub', 'cli', 'keys.ts'), 'token', 'add', name]),
      { env: { ...process.env, DATA_DIR: dataDir }, stdout: 'pipe', stderr: 'pipe' },
    );
    const [out, code] = await Promise.all([new Response(proc.stdout).text(), proc.exited]);
    expect(code).toBe(0);
    return out.trim().split('\n').at(-1)!;
  }
  const read = (url: string, token?: string) =>
    fetch(`${url}/metrics`, token ? { headers: { authorization: `Bearer ${token}` } } : {});

  test('the hub: open on loopback; where it needs a principal, a bearer token opens it and nothing else does', async () => {
    // The token is made before the hub starts (a running hub re-reads the token file each second).
    const dataDir = tempDir();
    const ops = await tokenAdd(dataDir, 'ops');
    const fleetFile = join(dataDir, 'fleet.json');
    await Bun.write(
      fleetFile,
      JSON.stringify({
        hub: { name: 'a2a', port: 0, role: 'hub', file: 'hub/main.ts' },
        nodes: [],
      }),
    );
    const open = await startProcess('hub/main.ts');
    const guarded = await startProcess(
      'hub/main.ts',
      [],
      { PORT: '0', HUB_REQUIRE_LOGIN: '1' },
      { dataDir, fleetFile },
    );
    try {
      expect((await read(open.url)).status).toBe(200);
      const refused = await read(guarded.url);
      expect(refused.status).toBe(401);
      expect(refused.headers.get('www-authenticate')).toStartWith('Bearer');
      expect(((await refused.json()) as any).error.status).toBe('UNAUTHENTICATED');
      expect((await read(guarded.url, 'not-a-token')).status).toBe(401);
      const ok = await read(guarded.url, ops);
      expect(ok.status).toBe(200);
      expect(parsePrometheus(await ok.text()).has('lume_http_requests_total')).toBe(true);
      expect(guarded.log()).not.toContain(ops);
    } finally {
      await Promise.all([open.stop(), guarded.stop()]);
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  test('a node: open on loopback; with the policy of a node bound beyond loopback, a bearer token opens it', async () => {
    const dataDir = tempDir();
    const ops = await tokenAdd(dataDir, 'ops');
    const loopback = await startNode(w, { dataDir, access: { tokens: TokenBook.open(dataDir) } });
    const beyond = await startNode(w, {
      dataDir,
      access: { tokens: TokenBook.open(dataDir), anonymous: 'none' },
    });
    try {
      expect((await read(loopback.url)).status).toBe(200);
      const refused = await read(beyond.url);
      expect(refused.status).toBe(401);
      expect(refused.headers.get('www-authenticate')).toStartWith('Bearer');
      expect((await read(beyond.url, 'not-a-token')).status).toBe(401);
      const ok = await read(beyond.url, ops);
      expect(ok.status).toBe(200);
      parsePrometheus(await ok.text());
    } finally {
      await Promise.all([loopback.stop(), beyond.stop()]);
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
