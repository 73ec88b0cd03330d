/** The mesh's HTTP routes on a real hub: meta, history errors, project API errors, body cap; port walk and the trust warning. */

import { afterEach, expect, setDefaultTimeout, test } from 'bun:test';
import { listenWithPortWalk } from '../hub/mesh/listen.ts';
import { createHubClient } from '../lib/mesh/http-client.ts';
import { startHub, text, type TestHub } from './support/mesh.ts';

setDefaultTimeout(20_000); // per file (Bun scopes it so): real servers and processes are slow on a busy machine

let hub: TestHub;
afterEach(async () => {
  await hub?.stop();
});

const get = (path: string) => fetch(hub.url + path).then(async (r) => [r.status, await r.json()]);
const post = (path: string, body: string) =>
  fetch(hub.url + path, { method: 'POST', body }).then(async (r) => [r.status, await r.json()]);

test('meta, health, and history errors with their status', async () => {
  hub = startHub();
  await hub.store.createProject({ name: 'demo' });
  expect(await get('/v1/meta')).toEqual([
    200,
    {
      pid: process.pid,
      port: hub.port,
      baseUrl: hub.url,
      startedAt: expect.any(Number),
      protocolVersion: 3,
    },
  ]);
  expect(await get('/healthz')).toEqual([200, { ok: true }]);
  expect(await get('/v1/history')).toEqual([
    400,
    { error: { code: 'A2A_BAD_REQUEST', message: 'project is required' } },
  ]);
  expect(await get('/v1/history?project=nope')).toEqual([
    404,
    { error: { code: 'not-found', message: 'project nope does not exist' } },
  ]);
  expect(await get('/v1/history?project=demo&before=demo:1&after=demo:2')).toEqual([
    400,
    { error: { code: 'A2A_BAD_REQUEST', message: 'before and after cannot be combined' } },
  ]);
  expect(await get('/v1/history?project=demo')).toEqual([200, { messages: [] }]);
  // `after=<project>:0` reads from the first message on; other projects' refs and :0 before stay refused.
  for (const id of ['m-1', 'm-2'])
    await hub.store.append({
      messageId: id,
      project: 'demo',
      from: { name: 'ann', presenceId: 'p-ann' },
      target: { type: 'project' },
      payload: text(id),
      attachments: [],
    });
  const [status, body] = await get('/v1/history?project=demo&after=demo:0');
  expect([status, (body as any).messages.map((m: any) => m.messageRef)]).toEqual([
    200,
    ['demo:1', 'demo:2'],
  ]);
  expect((await get('/v1/history?project=demo&after=other:0'))[0]).toBe(400);
  expect((await get('/v1/history?project=demo&before=demo:0'))[0]).toBe(400);
  expect((await fetch(`${hub.url}/v1/connect`)).status).toBe(426);
  expect(hub.mesh.fetch(new Request(`${hub.url}/somewhere-else`), hub.server)).toBeUndefined();
});

test('/api errors: bad JSON, non-object, bad names, wrong method, oversize body', async () => {
  hub = startHub({ limits: { maxHttpBodyBytes: 1024 } });
  expect(await post('/api/projects.create', '{nope')).toEqual([
    200,
    { error: { code: 'bad-json', message: 'body is not valid JSON' } },
  ]);
  expect(await post('/api/projects.create', '[1]')).toEqual([
    200,
    { error: { code: 'A2A_BAD_REQUEST', message: 'body must be a JSON object' } },
  ]);
  expect(await post('/api/projects.create', '{"name":"../x"}')).toEqual([
    200,
    { error: { code: 'A2A_BAD_REQUEST', message: expect.stringContaining('name must match') } },
  ]);
  expect(
    await post(
      '/api/projects.create',
      JSON.stringify({ name: 'x', description: 'y'.repeat(2000) }),
    ),
  ).toEqual([413, { error: { code: 'payload-too-large', message: 'body is over 1024 bytes' } }]);
  expect(await get('/api/projects.list')).toEqual([
    200,
    { error: { code: 'A2A_BAD_REQUEST', message: 'use POST for /api/projects.list' } },
  ]);
  // A chunked body has no Content-Length; the cap still holds.
  const stream = new ReadableStream({
    start(c) {
      for (let i = 0; i < 4; i++) c.enqueue(new TextEncoder().encode('x'.repeat(512)));
      c.close();
    },
  });
  const r = await fetch(`${hub.url}/api/projects.create`, { method: 'POST', body: stream });
  expect(await r.json()).toEqual({
    error: { code: 'payload-too-large', message: 'body is over 1024 bytes' },
  });
});

test('the HTTP client probes /v1/meta and maps codes', async () => {
  hub = startHub();
  const c = createHubClient({ baseUrl: hub.url });
  expect(await c.createProject({ name: 'demo' })).toEqual({
    ok: true,
    result: { name: 'demo', createdAt: expect.any(Number) },
  });
  expect(await c.createProject({ name: 'demo' })).toEqual({
    ok: false,
    error: {
      code: 'A2A_PROJECT_CONFLICT',
      message: 'project-conflict: project demo already exists',
    },
  });
  expect(await c.history('ghost')).toEqual({
    ok: false,
    error: { code: 'A2A_UNKNOWN_PROJECT', message: 'not-found: project ghost does not exist' },
  });
  const v4 = Bun.serve({ port: 0, fetch: () => Response.json({ protocolVersion: 4 }) });
  try {
    const old = await createHubClient({ baseUrl: v4.url.origin }).listProjects();
    expect(!old.ok && old.error.code).toBe('A2A_PROTOCOL_MISMATCH');
  } finally {
    void v4.stop(true);
  }
});

test('a taken port walks up to maxPort', () => {
  const taken = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response('busy') });
  try {
    const s = listenWithPortWalk({
      hostname: '127.0.0.1',
      port: taken.port!,
      maxPort: taken.port! + 20,
      fetch: () => new Response('ok'),
      websocket: { message() {} },
    });
    expect(s.port).toBeGreaterThan(taken.port!);
    void s.stop(true);
    expect(() =>
      listenWithPortWalk({
        hostname: '127.0.0.1',
        port: taken.port!,
        fetch: () => new Response('ok'),
        websocket: { message() {} },
      }),
    ).toThrow();
  } finally {
    void taken.stop(true);
  }
});
