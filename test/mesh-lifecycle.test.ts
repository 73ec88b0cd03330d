/** Hub lifecycle and store rules over the wire: restart, project deletion, idempotent ids, replies, join token, heartbeat. */

import { afterEach, expect, setDefaultTimeout, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join as joinPath } from 'node:path';
import { openMeshDatabase } from '../lib/mesh/schema.ts';
import { createSqliteMeshStore } from '../lib/mesh/sqlite-store.ts';
import { silentLog } from '../lib/log.ts';
import {
  createProject,
  join,
  msg,
  RawClient,
  startHub,
  text,
  type TestHub,
} from './support/mesh.ts';

setDefaultTimeout(20_000); // per file (Bun scopes it so): real servers and processes are slow on a busy machine

let hubs: TestHub[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const h of hubs) await h.stop().catch(() => {});
  hubs = [];
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
const start = (o: Parameters<typeof startHub>[0] = {}) => {
  const h = startHub(o);
  hubs.push(h);
  return h;
};
const post = (hub: TestHub, op: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${hub.url}/api/projects.${op}`, {
    method: 'POST',
    body: JSON.stringify(body),
    headers,
  }).then(async (r) => [r.status, await r.json()]);

test('a restart keeps every accepted message (with attachments) and drops every presence', async () => {
  const dir = mkdtempSync(joinPath(tmpdir(), 'mesh-restart-'));
  dirs.push(dir);
  const file = joinPath(dir, 'hub', 'mesh.sqlite');
  const hub1 = startHub({
    store: createSqliteMeshStore({ db: openMeshDatabase(file), log: silentLog }),
  });
  await createProject(hub1, 'demo');
  const a = await join(hub1, 'demo', 'alice');
  const b = await join(hub1, 'demo', 'bob');
  const attachment = {
    name: 'notes.txt',
    payload: {
      encoding: 'base64',
      data: Buffer.from('attached bytes').toString('base64'),
      uncompressedBytes: 14,
    },
  };
  await a.c.send(
    msg('r1', 'm-1', { type: 'agent', name: 'bob' }, 'before restart', {
      attachments: [attachment],
    }),
  );
  const accepted = (await a.c.take(2))[1]!;
  expect(accepted.type).toBe('accepted');
  await hub1.stop();
  expect([await b.c.take(2), await b.c.closed]).toEqual([
    [
      { type: 'message', message: accepted.message },
      { type: 'presence_left', peer: a.self, reason: 'hub_shutdown' },
    ],
    { code: 1001, reason: 'hub_shutdown' },
  ]);

  const hub2 = start({
    store: createSqliteMeshStore({ db: openMeshDatabase(file), log: silentLog }),
    port: 0,
  });
  const history = await fetch(`${hub2.url}/v1/history?project=demo`).then((r) => r.json());
  expect(history).toEqual({ messages: [accepted.message] });
  expect(await fetch(`${hub2.url}/v1/presence?project=demo`).then((r) => r.json())).toEqual({
    project: 'demo',
    peers: [],
  });
  // The sequence continues after the restart, with no gap.
  const c = await join(hub2, 'demo', 'carol');
  await c.c.send(msg('r2', 'm-2', { type: 'project' }, 'after restart'));
  expect((await c.c.next()).message.messageRef).toBe('demo:2');
});

test('deleting a project is refused while it has presences; afterwards its sequence restarts at 1', async () => {
  const hub = start();
  expect(await post(hub, 'create', { name: 'demo', displayName: 'Demo' })).toEqual([
    200,
    { result: { project: { name: 'demo', displayName: 'Demo', createdAt: expect.any(Number) } } },
  ]);
  const a = await join(hub, 'demo', 'alice');
  await a.c.send(msg('r1', 'm-1', { type: 'project' }, 'one'));
  await a.c.next();
  expect(await post(hub, 'delete', { name: 'demo' })).toEqual([
    200,
    {
      error: {
        code: 'project-conflict',
        message: 'project demo has 1 live presence(s); it can be deleted once they leave',
      },
    },
  ]);
  await a.c.close();
  expect(await post(hub, 'delete', { name: 'demo' })).toEqual([200, { result: { deleted: true } }]);
  expect(await post(hub, 'delete', { name: 'demo' })).toEqual([
    404,
    { error: { code: 'not-found', message: 'project demo does not exist' } },
  ]);
  await post(hub, 'create', { name: 'demo' });
  const b = await join(hub, 'demo', 'bob');
  // The old id is free again: its row went with the project.
  await b.c.send(msg('r1', 'm-1', { type: 'project' }, 'fresh'));
  expect((await b.c.next()).message.messageRef).toBe('demo:1');
});

test('an identical retry returns the original without redelivery; different content under the id conflicts', async () => {
  const hub = start();
  await createProject(hub, 'demo');
  const a = await join(hub, 'demo', 'alice');
  const b = await join(hub, 'demo', 'bob');
  await a.c.next();
  const send = msg('r1', 'm-1', { type: 'agent', name: 'bob' }, 'exactly once');
  await a.c.send(send);
  const first = await a.c.next();
  await a.c.send({ ...send, requestId: 'r2' });
  await a.c.send({ ...send, requestId: 'r3', payload: text('something else') });
  await a.c.send({
    ...send,
    requestId: 'r4',
    attachments: [
      { name: 'x', payload: { encoding: 'base64', data: 'eA==', uncompressedBytes: 1 } },
    ],
  });
  expect(await a.c.take(3)).toEqual([
    { type: 'accepted', requestId: 'r2', message: first.message, recipients: [], replayed: true },
    {
      type: 'error',
      code: 'message_id_conflict',
      message: 'messageId m-1 is already used for different content',
      requestId: 'r3',
    },
    {
      type: 'error',
      code: 'message_id_conflict',
      message: 'messageId m-1 is already used for different content',
      requestId: 'r4',
    },
  ]);
  // Bob got the message once; the next thing he sees is a marker.
  await a.c.send(msg('r5', 'm-2', { type: 'agent', name: 'bob' }, 'marker'));
  expect((await b.c.take(2)).map((f) => f.message.messageId)).toEqual(['m-1', 'm-2']);
});

test('replyTo must name an existing message of the same project', async () => {
  const hub = start();
  await createProject(hub, 'demo');
  await createProject(hub, 'other');
  const a = await join(hub, 'demo', 'alice');
  await a.c.send(msg('r1', 'm-1', { type: 'project' }, 'root'));
  await a.c.send(msg('r2', 'm-2', { type: 'project' }, 'reply', { replyTo: 'demo:1' }));
  await a.c.send(msg('r3', 'm-3', { type: 'project' }, 'x', { replyTo: 'demo:99' }));
  await a.c.send(msg('r4', 'm-4', { type: 'project' }, 'x', { replyTo: 'other:1' }));
  await a.c.send(msg('r5', 'm-5', { type: 'project' }, 'x', { replyTo: 'demo:01' }));
  // Refusals are answered at once, acceptances after their commit: order by request.
  const frames = (await a.c.take(5)).sort((x, y) => x.requestId.localeCompare(y.requestId));
  expect(frames.map((f) => [f.requestId, f.code ?? f.message.replyTo ?? null])).toEqual([
    ['r1', null],
    ['r2', 'demo:1'],
    ['r3', 'unknown_reply'],
    ['r4', 'unknown_reply'],
    ['r5', 'message_rejected'],
  ]);
});

test('with a join token, hello and the protected routes need it; the token never reaches the log', async () => {
  const hub = start({ token: 's3cret-token' });
  await createProject(hub, 'demo');
  for (const extra of [{}, { token: 'wrong' }]) {
    const c = new RawClient(hub);
    expect(await c.hello('demo', 'eve', extra)).toEqual({
      type: 'error',
      code: 'claim_rejected',
      message: 'join token missing or wrong',
    });
    expect(await c.closed).toEqual({ code: 1008, reason: 'claim_rejected' });
  }
  const ok = new RawClient(hub);
  expect((await ok.hello('demo', 'alice', { token: 's3cret-token' })).type).toBe('claimed');
  expect(await post(hub, 'list', {})).toEqual([
    401,
    { error: { code: 'unauthorized', message: 'missing or wrong bearer token' } },
  ]);
  expect((await fetch(`${hub.url}/v1/history?project=demo`)).status).toBe(401);
  expect(await post(hub, 'list', {}, { authorization: 'Bearer s3cret-token' })).toEqual([
    200,
    { result: { projects: [{ name: 'demo', createdAt: expect.any(Number) }] } },
  ]);
  expect(await fetch(`${hub.url}/healthz`).then((r) => r.json())).toEqual({ ok: true });
  expect(hub.log.lines.join('\n')).not.toContain('s3cret');
});

test('a presence that leaves heartbeatMisses pings unanswered is dropped with heartbeat_timeout; one that answers stays', async () => {
  const hub = start({ limits: { heartbeatMisses: 3 } });
  await createProject(hub, 'demo');
  const a = await join(hub, 'demo', 'alice');
  expect(a.claimed).toMatchObject({ heartbeatMs: 10_000, heartbeatMisses: 3 });
  await muteClient(hub.port, 'demo', 'mute');
  const joined = await a.c.next();
  expect(joined).toEqual({
    type: 'presence_joined',
    peer: { name: 'mute', presenceId: expect.any(String) },
  });
  // Three rounds: alice's WebSocket answers each ping (and sees a `ping` frame); the mute socket answers none.
  for (let round = 0; round < 3; round++) {
    const pong = hub.nextPong();
    hub.mesh.realtime.tick();
    await pong;
    expect(await a.c.next()).toEqual({ type: 'ping' });
  }
  expect(hub.mesh.realtime.roster.list('demo').map((p) => p.name)).toEqual(['alice', 'mute']);
  hub.mesh.realtime.tick();
  expect(await a.c.take(2)).toEqual([
    { type: 'ping' },
    { type: 'presence_left', peer: joined.peer, reason: 'heartbeat_timeout' },
  ]);
  expect(hub.mesh.realtime.roster.list('demo').map((p) => p.name)).toEqual(['alice']);
  expect(hub.log.lines.join('\n')).toContain('mesh: heartbeat timeout');
});

/** A raw TCP WebSocket client that claims a name and never answers pings (Bun's WebSocket always does). */
async function muteClient(port: number, project: string, name: string) {
  let head = '';
  let upgraded!: () => void;
  const ready = new Promise<void>((r) => (upgraded = r));
  const sock = await Bun.connect({
    hostname: '127.0.0.1',
    port,
    socket: {
      data(_s, d) {
        head += Buffer.from(d).toString('latin1');
        if (head.includes('\r\n\r\n')) upgraded();
      },
    },
  });
  sock.write(
    `GET /v1/connect HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
      `Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n`,
  );
  await ready;
  const payload = Buffer.from(JSON.stringify({ type: 'hello', protocolVersion: 3, project, name }));
  // FIN + text opcode, masked length (< 126), a zero mask key leaves the payload as is.
  sock.write(Buffer.concat([Buffer.from([0x81, 0x80 | payload.length, 0, 0, 0, 0]), payload]));
  return sock;
}
