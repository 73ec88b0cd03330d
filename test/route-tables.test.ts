/**
 * The route tables (lib/node/routes.ts, hub/http/routes.ts) are the one list of what a node and
 * the hub serve: a node mounts exactly the table's routes, every hub route in the table is
 * answered by the part it names (never by the node's 404), no part of the hub answers a path the
 * table does not name, the metrics label each route with its template, and docs/routes.md is what
 * the tables render.
 */

import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { rmSync } from 'node:fs';
import { HUB_ROUTE_TABLE, hubOwnerOf, renderRouteDocs } from '../hub/http/routes.ts';
import { hubRoutes } from '../hub/metrics.ts';
import { REST_ROUTES } from '../lib/a2a/rest/binding.ts';
import { V1_METHODS, v1Operations } from '../lib/a2a/operations.ts';
import type { TaskEngine } from '../lib/a2a/engine/engine.ts';
import { templaterOf } from '../lib/metrics/http.ts';
import { createNode } from '../lib/node/create-node.ts';
import { NODE_ROUTE_TABLE, nodeRouteTemplates } from '../lib/node/routes.ts';
import { startFleet, type RunningFleet } from './support/fleet.ts';
import { agentNode, tempDir, withAuth } from './support/node.ts';

setDefaultTimeout(20_000); // per file (Bun scopes it so): real servers are slow on a busy machine

const ROOT = join(import.meta.dir, '..');
const echo = agentNode('routes', { handle: (ctx) => ctx.complete('ok') });

/** What an Elysia app mounted, as `METHOD path` (Elysia lists `ALL` for `.all`). */
function mounted(opts: { a2a?: boolean; identity?: unknown }): string[] {
  const dataDir = tempDir();
  try {
    const def = opts.a2a === false ? { ...echo, a2a: false as const } : echo;
    const node = createNode(def, {
      dataDir,
      port: 0,
      ...(opts.identity ? { identity: opts.identity } : {}),
    });
    return node.app.routes.map((r) => `${r.method} ${r.path}`).sort();
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

const expected = (keep: (r: (typeof NODE_ROUTE_TABLE)[number]) => boolean) =>
  NODE_ROUTE_TABLE.filter(keep)
    .map((r) => `${r.method} ${r.path}`)
    .sort();

describe('the node route table', () => {
  test('is exactly what a node mounts: with and without A2A, with and without published keys', () => {
    expect(mounted({})).toEqual(expected((r) => r.when !== 'identity' && r.when !== 'mcp'));
    expect(mounted({ identity: { node: 'routes' } })).toEqual(expected((r) => r.when !== 'mcp'));
    expect(mounted({ a2a: false })).toEqual(expected((r) => r.when === undefined));
  });

  test('names every HTTP+JSON route of the binding, and the metrics label each with its template', () => {
    const templates = nodeRouteTemplates();
    for (const r of REST_ROUTES) expect(templates).toContain(r.template);
    const label = templaterOf(templates);
    const concrete = (t: string) => t.replace('{id}', 'a1b2').replace('{configId}', 'c3');
    expect(templates.map((t) => label(concrete(t)))).toEqual(templates);
    expect(label('/tasks/a1b2:unknown/x')).toBe('other');
    expect(label('/not-a-route')).toBe('other');
  });
});

describe('the HTTP+JSON route list', () => {
  // Building the table touches no engine: its operations only close over it.
  const operations = Object.keys(v1Operations({} as TaskEngine, true)).sort();

  test('names only methods of the 1.0 operation table, and serves every one of them', () => {
    expect(operations).toEqual([...V1_METHODS].sort());
    const named = REST_ROUTES.flatMap((r) => r.ops.map((op) => `${r.template} ${op}`));
    expect(named.filter((n) => !operations.includes(n.split(' ')[1]!))).toEqual([]);
    expect(
      operations.filter((op) => !REST_ROUTES.some((r) => r.ops.includes(op as never))),
    ).toEqual([]);
  });
});

describe('the hub route table', () => {
  let f: RunningFleet;
  beforeAll(async () => {
    f = await startFleet([]);
  });
  afterAll(() => f?.stop());

  const concrete = (t: string) =>
    t
      .replace('{id}', 'no-such-negotiation')
      .replace('/vendor/{file}', '/vendor/preact.mjs')
      .replace('/{console file}', '/app.js');

  test('every route it names is answered by the part it names, never by the node 404', async () => {
    const answers: string[] = [];
    for (const r of HUB_ROUTE_TABLE) {
      const path = concrete(r.template);
      expect(hubOwnerOf(path)).toBe(r.owner);
      const res = await fetch(`${f.hubUrl}${path}`, {
        method: r.methods[0],
        headers: withAuth({ 'content-type': 'application/json', origin: f.hubUrl }),
        redirect: 'manual',
        ...(r.methods[0] === 'POST' ? { body: '{}' } : {}),
      });
      // A stream is a part's answer (the node's 404 is JSON); it is cut here, not read to its end.
      if (res.headers.get('content-type')?.startsWith('text/event-stream')) {
        await res.body?.cancel();
        continue;
      }
      const text = await res.text();
      // The node's fallback answers `{"error":{"code":"NOT_FOUND","message":"No such route"}}`.
      if (text.includes('No such route')) answers.push(`${r.methods[0]} ${path}`);
    }
    expect(answers).toEqual([]);
  });

  test('a path no entry names reaches the node, which answers its own routes and the coded 404', async () => {
    expect(hubOwnerOf('/api/unknown')).toBeUndefined();
    const res = await fetch(`${f.hubUrl}/api/unknown`, { headers: withAuth() });
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ error: { code: 'NOT_FOUND', message: 'No such route' } });
    const card = await fetch(`${f.hubUrl}/.well-known/agent-card.json`);
    expect(card.status).toBe(200);
  });

  test('no part of the hub answers a path its source spells that the table does not name', () => {
    const sources = [
      'hub/http/api.ts',
      'hub/http/login.ts',
      'hub/mesh/http.ts',
      'hub/mesh/server.ts',
    ];
    const named = new Set(HUB_ROUTE_TABLE.map((r) => r.template));
    const unnamed: string[] = [];
    for (const file of sources) {
      const text = readFileSync(join(ROOT, file), 'utf8');
      // Every path literal a part compares a request's path with: `'/api/…'`, `'/v1/…'`, `'/login'`.
      for (const m of text.matchAll(/(?:===|case)\s*'(\/(?:api|v1|login|logout)[^'\s]*)'/g)) {
        const path = m[1]!.endsWith('/') ? `${m[1]}{id}` : m[1]!;
        if (!named.has(path)) unnamed.push(`${file}: ${m[1]}`);
      }
    }
    expect(unnamed).toEqual([]);
  });

  test('the metrics label each route with its template', () => {
    for (const r of HUB_ROUTE_TABLE.filter((x) => !x.template.includes('{')))
      expect(hubRoutes(r.template)).toBe(r.template);
    expect(hubRoutes('/api/negotiations/abc')).toBe('/api/negotiations/{id}');
    expect(hubRoutes('/vendor/preact.mjs')).toBe('/vendor/{file}');
    expect(hubRoutes('/pages/fleet.js')).toBe('/{console file}.js');
    expect(hubRoutes('/tasks/abc:cancel')).toBe('/tasks/{id}:cancel');
  });
});

test('docs/routes.md is what the tables render (bun hub/cli/routes-doc.ts --write)', () => {
  expect(readFileSync(join(ROOT, 'docs/routes.md'), 'utf8')).toBe(renderRouteDocs());
});
