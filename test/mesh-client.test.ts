/** The mesh client against a real hub: presences per agent, inbound handling and attachments, events, remembered connections, backoff. */

import { afterEach, expect, setDefaultTimeout, test } from 'bun:test';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { silentLog } from '../lib/log.ts';
import {
  createMeshClient,
  type ClientEvents,
  type InboundMessage,
  type MeshClientOptions,
} from '../lib/mesh/client.ts';
import { decodeAttachmentBytes } from '../lib/mesh/payload.ts';
import { memoryConnectionMemory } from '../lib/mesh/memory.ts';
import { startHub, type TestHub } from './support/mesh.ts';
import { fakeTimers } from './support/mesh-net.ts';

setDefaultTimeout(20_000); // per file (Bun scopes it so): real servers and processes are slow on a busy machine

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const f of cleanups.splice(0).reverse()) await f();
});
async function hubWith(projects: string[] = ['demo'], port = 0): Promise<TestHub> {
  const hub = startHub({ port });
  for (const p of projects) await hub.store.createProject({ name: p });
  cleanups.push(() => hub.stop());
  return hub;
}
function client(hub: { url: string }, extra: Partial<MeshClientOptions> = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'mesh-client-'));
  const c = createMeshClient({ hubUrl: hub.url, log: silentLog, attachmentsDir: dir, ...extra });
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  cleanups.push(() => c.close());
  return Object.assign(c, { dir });
}
/** Resolves with the next event of a type that passes `pick`. */
function nextEvent<K extends keyof ClientEvents>(
  c: ReturnType<typeof client>,
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

test('one presence per agent; inbound messages arrive with header and 0600 attachment files; delivery events', async () => {
  const hub = await hubWith();
  const inbox: InboundMessage[] = [];
  const alice = client(hub);
  const bob = client(hub, { onInbound: (m) => void inbox.push(m) });
  const s1 = await alice.connect('a1', 'demo', 'alice');
  const again = await alice.connect('a1', 'demo', 'alice');
  expect(again.self).toEqual(s1.self);
  expect(await bob.connect('b1', 'demo', 'bob')).toMatchObject({
    state: 'connected',
    peers: [{ name: 'alice', activity: 'idle' }],
  });

  const src = mkdtempSync(join(tmpdir(), 'mesh-src-'));
  cleanups.push(() => rmSync(src, { recursive: true, force: true }));
  writeFileSync(join(src, 'report.txt'), 'quarterly numbers');
  writeFileSync(join(src, 'zeros.bin'), new Uint8Array(64 * 1024));
  const delivered = nextEvent(alice, 'delivery');
  const sent = await alice.send('a1', {
    target: { type: 'agent', name: 'bob' },
    text: 'see attached',
    attachments: [join(src, 'report.txt'), join(src, 'zeros.bin')],
  });
  expect(sent.ok && sent.result.recipients).toEqual(['bob']);
  expect(await delivered).toEqual({
    type: 'delivery',
    messageId: expect.any(String),
    to: 'bob',
    status: 'delivered',
    agentId: 'a1',
  });

  const m = inbox[0]!;
  expect(m.text).toBe('see attached');
  expect(m.header).toMatch(
    /^\[a2a message\] ref=demo:1 from=alice project=demo at=\d{4}-\d\d-\d\dT[\d:.]+Z$/,
  );
  expect(m.attachments.map((a) => [a.name, a.bytes])).toEqual([
    ['report.txt', 17],
    ['zeros.bin', 65536],
  ]);
  expect(m.attachments[0]!.path.startsWith(join(bob.dir, 'demo', '1', 'attach-'))).toBe(true);
  expect(readFileSync(m.attachments[0]!.path, 'utf8')).toBe('quarterly numbers');
  expect(statSync(m.attachments[1]!.path).mode & 0o777).toBe(0o600);
  // History gives the bytes back.
  const h = await bob.history('b1');
  expect(
    h.ok && h.result.map((x) => x.attachments.map((a) => decodeAttachmentBytes(a.payload)?.length)),
  ).toEqual([[17, 65536]]);
  // The activity view: alice is working on nothing yet, bob was acknowledged and now "works" for alice.
  expect(alice.status('a1')?.peers).toEqual([
    { name: 'bob', presenceId: expect.any(String), activity: 'working' },
  ]);
});

test('a handler that throws gives a failed delivery; an absent peer and a bad path give coded errors', async () => {
  const hub = await hubWith();
  const alice = client(hub);
  const bob = client(hub, {
    onInbound: () => {
      throw new Error('agent is busy');
    },
  });
  await alice.connect('a1', 'demo', 'alice');
  await bob.connect('b1', 'demo', 'bob');
  const failed = nextEvent(alice, 'delivery');
  await alice.send('a1', { target: { type: 'project' }, text: 'anyone?' });
  expect(await failed).toMatchObject({ to: 'bob', status: 'failed', error: 'agent is busy' });
  const absent = await alice.send('a1', { target: { type: 'agent', name: 'zed' }, text: 'hi' });
  expect(!absent.ok && absent.error.code).toBe('A2A_RECIPIENT_NOT_PRESENT');
  const rel = await alice.send('a1', {
    target: { type: 'agent', name: 'bob' },
    text: 'hi',
    attachments: ['relative/file.txt'],
  });
  expect(!rel.ok && rel.error.code).toBe('A2A_ATTACHMENT');
  const gone = nextEvent(alice, 'change');
  await bob.disconnect('b1');
  await gone;
  expect(alice.peers('a1')).toEqual([]);
});

test('remembered connections rejoin after a restart; an explicit disconnect forgets them', async () => {
  const hub = await hubWith();
  const memory = memoryConnectionMemory();
  const first = client(hub, { memory });
  await first.connect('agent-7', 'demo', 'seven');
  await first.close();
  // Name, resume secret and stream position are remembered; the secret is a credential and goes nowhere else.
  expect(await memory.load()).toEqual({
    'agent-7': {
      project: 'demo',
      name: 'seven',
      resumeSecret: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
      epoch: expect.any(String),
      since: 0,
    },
  });
  const second = client(hub, { memory });
  expect((await second.restore()).map((s) => [s.agentId, s.state, s.name])).toEqual([
    ['agent-7', 'connected', 'seven'],
  ]);
  await second.disconnect('agent-7');
  expect(await memory.load()).toEqual({});
});

test('an unknown project ends the retries; a taken name is retried until its holder leaves', async () => {
  const hub = await hubWith();
  const holder = client(hub);
  await holder.connect('h', 'demo', 'taken');
  const t = fakeTimers();
  const c = client(hub, { timers: t.timers });
  expect(await c.connect('x', 'demo', 'taken')).toMatchObject({
    state: 'reconnecting',
    lastError: { code: 'A2A_NAME_IN_USE' },
    retryInMs: 500,
  });
  // Still held: the next attempt is refused again and the delay doubles.
  (await t.next(backoff)).fire();
  const second = await t.next(backoff);
  expect(second.ms).toBe(1000);
  expect(c.status('x')).toMatchObject({
    state: 'reconnecting',
    lastError: { code: 'A2A_NAME_IN_USE' },
  });
  // The squatter leaves; the retry already scheduled takes the name.
  await holder.disconnect('h');
  const back = nextEvent(
    c,
    'presence-changed',
    (e) => e.agentId === 'x' && e.state === 'connected',
  );
  second.fire();
  await back;
  expect(c.status('x')).toMatchObject({ state: 'connected', name: 'taken' });
  expect(c.status('x')?.lastError).toBeUndefined();

  expect(await c.connect('y', 'nope', 'free')).toMatchObject({
    state: 'stopped',
    lastError: { code: 'A2A_UNKNOWN_PROJECT' },
  });
  await c.close();
});

test('reconnect backoff doubles from 500 ms to 10 s and resets after a successful claim', async () => {
  const hub1 = startHub();
  await hub1.store.createProject({ name: 'demo' });
  const port = hub1.port;
  const t = fakeTimers();
  const c = client({ url: hub1.url }, { timers: t.timers });
  await c.connect('a', 'demo', 'alice');
  await hub1.stop(true);
  const delays: number[] = [];
  // Each scheduled retry is fired by hand; the hub is down, so each attempt fails and doubles the delay.
  for (let i = 0; i < 7; i++) {
    const timer = await t.next(backoff);
    delays.push(timer.ms);
    timer.fire();
  }
  expect(delays).toEqual([500, 1000, 2000, 4000, 8000, 10000, 10000]);
  const hub2 = startHub({ store: hub1.store, port });
  cleanups.push(() => hub2.stop());
  const back = nextEvent(c, 'presence-changed', (e) => e.state === 'connected');
  const retry = await t.next(backoff);
  retry.fire();
  await back;
  expect(c.status('a')?.state).toBe('connected');
  // A new drop starts again from 500 ms.
  hub2.mesh.close();
  expect((await t.next(backoff)).ms).toBe(500);
});

/** Reconnect delays (the heartbeat watchdog shares the timers and waits far longer). */
const backoff = (t: { ms: number }) => t.ms <= 10_000;
