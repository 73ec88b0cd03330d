/**
 * Half-open drops against a real hub: a TCP proxy swallows a client's traffic without closing
 * anything. The client gives the silent hub up, comes back under its own name with its resume
 * secret and gets what it missed; strangers cannot take the name; the heartbeat drops dead sockets;
 * recovery is bounded and says when it was partial.
 */

import { afterEach, expect, setDefaultTimeout, test } from 'bun:test';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join as joinPath } from 'node:path';
import { silentLog } from '../lib/log.ts';
import { CLOSE_GRACE_MS } from '../lib/mesh/connection.ts';
import {
  createMeshClient,
  type ClientEvents,
  type InboundMessage,
  type MeshClient,
} from '../lib/mesh/client.ts';
import { meshLimitsFromEnv } from '../lib/mesh/limits.ts';
import { fileConnectionMemory, memoryConnectionMemory } from '../lib/mesh/memory.ts';
import {
  createProject,
  join,
  msg,
  RawClient,
  startHub,
  type Frame,
  type HubOptions,
} from './support/mesh.ts';
import { fakeTimers, startBlackholeProxy, type FakeTimer } from './support/mesh-net.ts';

setDefaultTimeout(20_000); // per file (Bun scopes it so): real servers and processes are slow on a busy machine

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const f of cleanups.splice(0).reverse()) await f();
});

function setup(limits: HubOptions['limits'] = {}) {
  const hub = startHub({ limits });
  cleanups.push(() => hub.stop());
  const proxy = startBlackholeProxy(hub.port);
  cleanups.push(() => proxy.stop());
  return { hub, proxy };
}

/** A mesh client whose inbound texts land in `inbox`; `received(n)` resolves once n have arrived. */
function meshClient(
  hubUrl: string,
  timers: ReturnType<typeof fakeTimers>['timers'],
  memory = memoryConnectionMemory(),
) {
  const dir = mkdtempSync(joinPath(tmpdir(), 'mesh-resume-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const inbox: InboundMessage[] = [];
  let waiters: { n: number; resolve: () => void }[] = [];
  const client = createMeshClient({
    hubUrl,
    log: silentLog,
    timers,
    memory,
    attachmentsDir: dir,
    onInbound: (m) => {
      inbox.push(m);
      waiters = waiters.filter((w) => (inbox.length >= w.n ? (w.resolve(), false) : true));
    },
  });
  cleanups.push(() => client.close());
  return {
    client,
    inbox,
    memory,
    received: (n: number) =>
      new Promise<void>((resolve) =>
        inbox.length >= n ? resolve() : waiters.push({ n, resolve }),
      ),
  };
}

function nextEvent<K extends keyof ClientEvents>(
  c: MeshClient,
  type: K,
  pick: (e: ClientEvents[K]) => boolean = () => true,
) {
  return new Promise<ClientEvents[K]>((resolve) => {
    const off = c.on(type, (e) => {
      if (pick(e)) {
        off();
        resolve(e);
      }
    });
  });
}

/** The heartbeat watchdog: silence for heartbeatMs × (heartbeatMisses + 1) = 10 s × 3. */
const watchdog = (t: FakeTimer) => t.ms === 30_000;
const firstRetry = (t: FakeTimer) => t.ms === 500;

/** Frames of a raw client until one passes `pick` (earlier ones are returned too). */
async function until(c: RawClient, pick: (f: Frame) => boolean): Promise<Frame[]> {
  const seen: Frame[] = [];
  for (;;) {
    const f = await c.next();
    seen.push(f);
    if (pick(f)) return seen;
  }
}

test('a client dropped half-open comes back under its own name and gets the messages sent while it was away', async () => {
  const { hub, proxy } = setup();
  await createProject(hub, 'demo');
  const alice = await join(hub, 'demo', 'alice');
  const t = fakeTimers();
  const bob = meshClient(proxy.url, t.timers);
  const first = await bob.client.connect('b', 'demo', 'bob');
  expect(first.state).toBe('connected');
  const secret = (await bob.memory.load()).b!.resumeSecret!;
  expect(secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
  await alice.c.next(); // presence_joined bob

  await alice.c.send(msg('r1', 'm-1', { type: 'agent', name: 'bob' }, 'before the drop'));
  await bob.received(1);
  expect(await alice.c.take(2)).toMatchObject([
    { type: 'accepted' },
    { type: 'delivery', to: 'bob', status: 'delivered' },
  ]);

  // The network path goes dark: the hub still holds bob's presence and accepts messages for it.
  proxy.blackhole();
  await alice.c.send(msg('r2', 'm-2', { type: 'agent', name: 'bob' }, 'while away, to bob'));
  await alice.c.send(msg('r3', 'm-3', { type: 'project' }, 'while away, to everyone'));
  expect((await alice.c.take(2)).map((f) => [f.type, f.recipients])).toEqual([
    ['accepted', ['bob']],
    ['accepted', ['bob']],
  ]);

  // A stranger cannot take the name, with no secret or a wrong one.
  for (const extra of [{}, { resume: 'not-the-secret' }]) {
    const eve = new RawClient(hub);
    expect(await eve.hello('demo', 'bob', extra)).toEqual({
      type: 'error',
      code: 'name_in_use',
      message: 'name bob is already present in project demo',
    });
    expect(await eve.closed).toEqual({ code: 1008, reason: 'name_in_use' });
  }

  // Bob hears nothing from the hub for three heartbeats: it gives the hub up and reconnects.
  const reconnecting = nextEvent(bob.client, 'presence-changed', (e) => e.state === 'reconnecting');
  (await t.next(watchdog)).fire();
  expect((await reconnecting).error).toEqual({
    code: 'A2A_CLIENT_TRANSPORT',
    message: 'connection closed (4000 hub_silent)',
  });
  const recovery = nextEvent(bob.client, 'recovery');
  const settled = nextEvent(
    bob.client,
    'presence-changed',
    (e) => e.state === 'connected' || e.state === 'stopped',
  );
  (await t.next(firstRetry)).fire();
  expect((await settled).state).toBe('connected');
  expect(await recovery).toEqual({
    agentId: 'b',
    recovered: true,
    since: 1,
    replayed: 2,
    resumed: true,
  });
  await bob.received(3);
  expect(bob.inbox.map((m) => [m.message.messageRef, m.text])).toEqual([
    ['demo:1', 'before the drop'],
    ['demo:2', 'while away, to bob'],
    ['demo:3', 'while away, to everyone'],
  ]);
  // Same presence: peers saw no departure, and the replayed messages' acknowledgements reach alice.
  expect(bob.client.status('b')).toMatchObject({ state: 'connected', self: first.self });
  expect(await alice.c.take(2)).toEqual([
    { type: 'delivery', messageId: 'm-2', to: 'bob', status: 'delivered' },
    { type: 'delivery', messageId: 'm-3', to: 'bob', status: 'delivered' },
  ]);
  expect(hub.mesh.realtime.roster.list('demo').map((p) => [p.name, p.presenceId])).toEqual([
    ['alice', alice.self.presenceId],
    ['bob', first.self!.presenceId],
  ]);
  // Bob can talk again over the new socket.
  const reply = await bob.client.send('b', {
    target: { type: 'agent', name: 'alice' },
    text: 'back',
  });
  expect(reply.ok && reply.result.message.messageRef).toBe('demo:4');
  expect(hub.log.lines.join('\n')).toContain('mesh: presence resumed');
  expect(hub.log.lines.join('\n')).not.toContain(secret);
});

test('the heartbeat drops a presence whose socket went dark; the name is free again and the way back recovers broadcasts', async () => {
  const { hub, proxy } = setup();
  await createProject(hub, 'demo');
  const alice = await join(hub, 'demo', 'alice');
  const bob = new RawClient({ url: proxy.url });
  const claimed = await bob.hello('demo', 'bob');
  expect(claimed).toMatchObject({
    type: 'claimed',
    resumed: false,
    sequence: 0,
    heartbeatMisses: 2,
  });
  const gone = (await alice.c.next()).peer;
  proxy.blackhole();
  // Two rounds go unanswered by bob; alice's WebSocket answers each ping.
  for (let round = 0; round < 2; round++) {
    const pong = hub.nextPong();
    hub.mesh.realtime.tick();
    await pong;
    expect(await alice.c.next()).toEqual({ type: 'ping' });
  }
  hub.mesh.realtime.tick();
  expect(await alice.c.take(2)).toEqual([
    { type: 'ping' },
    { type: 'presence_left', peer: gone, reason: 'heartbeat_timeout' },
  ]);

  await alice.c.send(msg('r1', 'm-1', { type: 'project' }, 'while bob was gone'));
  expect((await alice.c.next()).recipients).toEqual([]);
  // Bob comes back on a new connection: its old secret has nothing left to take over, so this is a
  // fresh presence with a new secret, and the broadcast it missed is replayed.
  const back = new RawClient({ url: proxy.url });
  const again = await back.hello('demo', 'bob', {
    resume: claimed.resumeSecret,
    recover: { epoch: claimed.epoch, since: 0 },
  });
  expect(again).toMatchObject({
    type: 'claimed',
    resumed: false,
    recovery: { recovered: true, since: 0, replayed: 1 },
  });
  expect(again.self.presenceId).not.toBe(claimed.self.presenceId);
  expect(again.resumeSecret).not.toBe(claimed.resumeSecret);
  expect((await back.next()).message.messageRef).toBe('demo:1');
});

test('recovery is bounded: past the limit the newest are replayed, recovered is false, and history pages the rest', async () => {
  const { hub } = setup({ recoveryMaxMessages: 3 });
  await createProject(hub, 'demo');
  const alice = await join(hub, 'demo', 'alice');
  const carol = await join(hub, 'demo', 'carol');
  const bob = await join(hub, 'demo', 'bob');
  const position = { epoch: bob.claimed.epoch, since: bob.claimed.sequence };
  await bob.c.close();
  for (let i = 1; i <= 5; i++)
    await alice.c.send(msg(`r${i}`, `m-${i}`, { type: 'project' }, `news ${i}`));
  await alice.c.send(msg('r6', 'm-6', { type: 'agent', name: 'carol' }, 'not for bob'));
  await until(alice.c, (f) => f.requestId === 'r6');

  const back = new RawClient(hub);
  const claimed = await back.hello('demo', 'bob', { recover: position });
  expect(claimed).toMatchObject({
    resumed: false,
    sequence: 6,
    recovery: { recovered: false, since: 0, replayed: 3 },
  });
  expect((await back.take(3)).map((f) => f.message.messageRef)).toEqual([
    'demo:3',
    'demo:4',
    'demo:5',
  ]);
  const older = await fetch(`${hub.url}/v1/history?project=demo&before=demo:3`).then((r) =>
    r.json(),
  );
  expect(older.messages.map((m: { messageRef: string }) => m.messageRef)).toEqual([
    'demo:1',
    'demo:2',
  ]);
  // Nothing else was replayed: the next frame is a live message.
  await carol.c.send(msg('r7', 'm-7', { type: 'agent', name: 'bob' }, 'live'));
  expect((await back.next()).message.messageRef).toBe('demo:7');
});

test('a recreated project is a new stream: recovery replays it from the start and says it was partial; bad recover fields are refused', async () => {
  const { hub } = setup();
  await createProject(hub, 'demo');
  const bob = await join(hub, 'demo', 'bob');
  const old = { epoch: bob.claimed.epoch, since: 4 };
  await bob.c.close();
  expect(await hub.store.deleteProject('demo')).toBe(true);
  await createProject(hub, 'demo');
  const alice = await join(hub, 'demo', 'alice');
  await alice.c.send(msg('r1', 'm-1', { type: 'project' }, 'first of the new stream'));
  await alice.c.next();
  const back = new RawClient(hub);
  const claimed = await back.hello('demo', 'bob', { recover: old });
  expect(claimed.epoch).not.toBe(old.epoch);
  expect(claimed.recovery).toEqual({ recovered: false, since: 0, replayed: 1 });
  expect((await back.next()).message.messageRef).toBe('demo:1');

  for (const [extra, message] of [
    [{ recover: { epoch: old.epoch } }, 'recover must be {epoch: string, since: integer >= 0}'],
    [
      { recover: { epoch: old.epoch, since: -1 } },
      'recover must be {epoch: string, since: integer >= 0}',
    ],
    [{ resume: 42 }, 'resume must be the resume secret string from an earlier claim'],
  ] as const) {
    const c = new RawClient(hub);
    expect(await c.hello('demo', 'zed', extra)).toEqual({
      type: 'error',
      code: 'claim_rejected',
      message,
    });
    expect(await c.closed).toEqual({ code: 1008, reason: 'claim_rejected' });
  }
});

test('after a restart, the remembered connection (0600 file) resumes the half-open presence and recovers its messages', async () => {
  const { hub, proxy } = setup();
  await createProject(hub, 'demo');
  const alice = await join(hub, 'demo', 'alice');
  const dir = mkdtempSync(joinPath(tmpdir(), 'mesh-memory-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const file = joinPath(dir, 'mesh-connections.json');

  const t1 = fakeTimers();
  const first = meshClient(proxy.url, t1.timers, fileConnectionMemory(file));
  const s1 = await first.client.connect('agent-b', 'demo', 'bob');
  await alice.c.next(); // presence_joined bob
  proxy.blackhole();
  await alice.c.send(msg('r1', 'm-1', { type: 'agent', name: 'bob' }, 'sent into the dark'));
  expect((await alice.c.next()).recipients).toEqual(['bob']);
  // The process shuts down; its close frame is swallowed, so the close is cut after the grace period.
  const closing = first.client.close();
  (await t1.next((x) => x.ms === CLOSE_GRACE_MS)).fire();
  await closing;
  expect(statSync(file).mode & 0o777).toBe(0o600);
  const saved = JSON.parse(readFileSync(file, 'utf8'))['agent-b'];
  expect(saved).toEqual({
    project: 'demo',
    name: 'bob',
    resumeSecret: expect.any(String),
    epoch: expect.any(String),
    since: 0,
  });

  // A new process with the same file: the hub still holds bob (nothing told it), and the secret takes it over.
  const second = meshClient(hub.url, fakeTimers().timers, fileConnectionMemory(file));
  const [restored] = await second.client.restore();
  expect(restored).toMatchObject({ agentId: 'agent-b', state: 'connected', self: s1.self });
  await second.received(1);
  expect(second.inbox.map((m) => m.text)).toEqual(['sent into the dark']);
  expect(await alice.c.next()).toEqual({
    type: 'delivery',
    messageId: 'm-1',
    to: 'bob',
    status: 'delivered',
  });
  expect(hub.log.lines.join('\n')).not.toContain(saved.resumeSecret);
});

test('heartbeat and recovery limits come from the environment; a bad value names its variable', () => {
  expect(
    meshLimitsFromEnv({
      MESH_HEARTBEAT_MS: '2500',
      MESH_HEARTBEAT_MISSES: '4',
      MESH_RECOVERY_MAX_MESSAGES: '50',
      OTHER: 'x',
    }),
  ).toEqual({
    ok: true,
    value: { heartbeatMs: 2500, heartbeatMisses: 4, recoveryMaxMessages: 50 },
  });
  expect(meshLimitsFromEnv({})).toEqual({ ok: true, value: {} });
  for (const bad of ['0', '-5', '1.5', 'ten'])
    expect(meshLimitsFromEnv({ MESH_HEARTBEAT_MISSES: bad })).toEqual({
      ok: false,
      message: `MESH_HEARTBEAT_MISSES must be a positive integer, got ${JSON.stringify(bad)}`,
    });
});
