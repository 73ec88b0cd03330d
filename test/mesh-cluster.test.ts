/**
 * Several hubs on one PostgreSQL database: clients on different hubs message each other (direct,
 * broadcast, delivery outcomes), a roster name is unique across the cluster, and a `kill -9` of a
 * hub process moves its clients to the other hub with nothing lost (resume and recovery), while a
 * client that does not come back is dropped when the dead hub's lease runs out.
 */

import { afterAll, afterEach, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SQL } from 'bun';
import { silentLog } from '../lib/log.ts';
import { createMeshClient, type InboundMessage } from '../lib/mesh/client.ts';
import { createPostgresMeshStore } from '../lib/mesh/postgres-store.ts';
import { createPostgresCluster, newHubId } from '../hub/mesh/postgres-cluster.ts';
import {
  join as claim,
  msg,
  RawClient,
  startHub,
  type Frame,
  type TestHub,
} from './support/mesh.ts';
import { bunCommand } from './support/bundle.ts';
import { type FilePostgres, sharedPostgres } from './support/postgres.ts';

setDefaultTimeout(20_000); // per file (Bun scopes it so): real servers and processes are slow on a busy machine

const root = join(import.meta.dir, '..');
let pg: FilePostgres;
let dbSeq = 0;
const cleanups: (() => unknown)[] = [];
beforeAll(async () => {
  pg = await sharedPostgres();
}, 60_000);
afterEach(async () => {
  for (const f of cleanups.splice(0).reverse()) await f();
});
afterAll(async () => {
  await pg?.release();
});

/** A hub in this process on a shared database (its own connections, store and lease). */
async function clusterHub(url: string): Promise<TestHub> {
  const sql = new SQL(url, { max: 4 });
  const hubId = newHubId();
  const store = await createPostgresMeshStore({ sql, log: silentLog, origin: hubId });
  const cluster = await createPostgresCluster({ sql, log: silentLog, hubId, leaseMs: 1_000 });
  const hub = startHub({ store, cluster });
  cleanups.push(async () => {
    await hub.stop();
    await cluster.close();
    await sql.close();
  });
  return hub;
}

/** Takes frames until one passes `pick` (presence and ping frames from other hubs may come first). */
async function until(c: RawClient, pick: (f: Frame) => boolean): Promise<Frame> {
  for (;;) {
    const f = await c.next();
    if (pick(f)) return f;
  }
}
const post = (hub: { url: string }, op: string, body: unknown) =>
  // JSON, as the hub's access policy requires of every POST body (a bare string body would go as text/plain).
  fetch(`${hub.url}/api/projects.${op}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  }).then((r) => r.json());

test('two hubs on one database: direct, broadcast and delivery outcomes cross hubs; a name is unique across them', async () => {
  const url = await pg.createDatabase(`cluster_${++dbSeq}`);
  const [a, b] = [await clusterHub(url), await clusterHub(url)];
  expect(await post(a, 'create', { name: 'demo' })).toMatchObject({
    result: { project: { name: 'demo' } },
  });
  expect(await post(b, 'create', { name: 'demo' })).toEqual({
    error: { code: 'project-conflict', message: 'project demo already exists' },
  });

  const alice = await claim(a, 'demo', 'alice');
  cleanups.push(() => alice.c.close());
  const bob = await claim(b, 'demo', 'bob');
  cleanups.push(() => bob.c.close());
  expect(bob.claimed.peers).toEqual([alice.self]);
  expect(await alice.c.next()).toEqual({ type: 'presence_joined', peer: bob.self });

  // The name bob is held on hub b: hub a refuses it.
  const impostor = new RawClient(a);
  expect(await impostor.hello('demo', 'bob')).toEqual({
    type: 'error',
    code: 'name_in_use',
    message: 'name bob is already present in project demo',
  });
  expect(await impostor.closed).toEqual({ code: 1008, reason: 'name_in_use' });

  // Direct: alice on a -> bob on b, and bob's acknowledgement comes back to a.
  await alice.c.send(msg('r1', 'm-1', { type: 'agent', name: 'bob' }, 'hello from a'));
  const accepted = await alice.c.next();
  expect(accepted).toMatchObject({
    type: 'accepted',
    requestId: 'r1',
    recipients: ['bob'],
    message: {
      messageRef: 'demo:1',
      target: { type: 'agent', name: 'bob', presenceId: bob.self.presenceId },
    },
  });
  expect(await until(bob.c, (f) => f.type === 'message')).toEqual({
    type: 'message',
    message: accepted.message,
  });
  await bob.c.send({ type: 'delivered', messageId: 'm-1' });
  expect(await alice.c.next()).toEqual({
    type: 'delivery',
    messageId: 'm-1',
    to: 'bob',
    status: 'delivered',
  });

  // Broadcast: bob on b -> everyone; alice's failure comes back to b.
  await bob.c.send(msg('r2', 'm-2', { type: 'project' }, 'to all'));
  const acceptedB = await until(bob.c, (f) => f.type === 'accepted');
  expect(acceptedB).toMatchObject({ recipients: ['alice'], message: { messageRef: 'demo:2' } });
  expect(await alice.c.next()).toEqual({ type: 'message', message: acceptedB.message });
  await alice.c.send({ type: 'delivery_failed', messageId: 'm-2', error: 'busy' });
  expect(await until(bob.c, (f) => f.type === 'delivery')).toEqual({
    type: 'delivery',
    messageId: 'm-2',
    to: 'alice',
    status: 'failed',
    error: 'busy',
  });

  // One history and one roster, whichever hub is asked.
  const history = await fetch(`${b.url}/v1/history?project=demo`).then((r) => r.json());
  expect(history.messages.map((m: Frame) => [m.messageRef, m.from.name])).toEqual([
    ['demo:1', 'alice'],
    ['demo:2', 'bob'],
  ]);
  const roster = await fetch(`${a.url}/v1/presence?project=demo`).then((r) => r.json());
  expect(roster.peers.map((p: Frame) => p.name)).toEqual(['alice', 'bob']);
  expect(await post(a, 'delete', { name: 'demo' })).toMatchObject({
    error: { code: 'project-conflict' },
  });

  // bob leaves b: alice on a hears it, and the name is free on a.
  await bob.c.close();
  expect(await alice.c.next()).toEqual({
    type: 'presence_left',
    peer: bob.self,
    reason: 'connection_closed',
  });
  const bob2 = await claim(a, 'demo', 'bob');
  cleanups.push(() => bob2.c.close());
  expect(bob2.self.presenceId).not.toBe(bob.self.presenceId);
});

test('a burst across hubs: many messages, a large one, several scripts, replies and broadcasts arrive whole and in order', async () => {
  const url = await pg.createDatabase(`cluster_${++dbSeq}`);
  const [a, b] = [await clusterHub(url), await clusterHub(url)];
  expect(await post(a, 'create', { name: 'burst' })).toMatchObject({
    result: { project: { name: 'burst' } },
  });
  const alice = await claim(a, 'burst', 'alice');
  cleanups.push(() => alice.c.close());
  const bob = await claim(b, 'burst', 'bob');
  cleanups.push(() => bob.c.close());
  await until(alice.c, (f) => f.type === 'presence_joined');

  // Sent without waiting, so they commit in a few groups: 60 of about 500 bytes in several scripts,
  // one of 20,000 bytes, an attachment, a reply and a broadcast.
  const big = 'x'.repeat(20_000);
  const sends = Array.from({ length: 60 }, (_, i) =>
    msg(`r${i}`, `m-${i}`, { type: 'agent', name: 'bob' }, `${i} ${'é€𝄞 '.repeat(60)}`),
  );
  sends.push(msg('r-big', 'm-big', { type: 'agent', name: 'bob' }, big));
  sends.push(
    msg('r-att', 'm-att', { type: 'agent', name: 'bob' }, 'with a file', {
      attachments: [
        {
          name: 'a.txt',
          payload: { encoding: 'base64', data: btoa('tab\there'), uncompressedBytes: 8 },
        },
      ],
      replyTo: 'burst:1',
    }),
  );
  sends.push(msg('r-all', 'm-all', { type: 'project' }, 'to all\nof you'));
  for (const f of sends) alice.c.ws.send(JSON.stringify(f));

  const accepted = new Map<string, Frame>();
  while (accepted.size < sends.length) {
    const f = await until(alice.c, (x) => x.type === 'accepted');
    accepted.set(f.message.messageId, f.message);
  }
  const received: Frame[] = [];
  while (received.length < sends.length)
    received.push((await until(bob.c, (f) => f.type === 'message')).message);
  // In sequence order, each exactly as its sender was told.
  expect(received.map((m) => m.sequence)).toEqual(
    [...accepted.values()].map((m) => m.sequence).sort((x, y) => x - y),
  );
  for (const m of received) expect(m).toEqual(accepted.get(m.messageId)!);
  expect(received.find((m) => m.messageId === 'm-big')!.payload.data).toBe(big);
  expect(received.find((m) => m.messageId === 'm-att')).toMatchObject({
    replyTo: 'burst:1',
    attachments: [{ name: 'a.txt' }],
  });
});

test('a resume secret takes a presence over from another hub, with the missed messages replayed', async () => {
  const url = await pg.createDatabase(`cluster_${++dbSeq}`);
  const [a, b] = [await clusterHub(url), await clusterHub(url)];
  await post(a, 'create', { name: 'demo' });
  const alice = await claim(a, 'demo', 'alice');
  const bob = await claim(b, 'demo', 'bob');
  cleanups.push(() => bob.c.close());
  await alice.c.next(); // bob joined
  await bob.c.send(msg('r1', 'm-1', { type: 'agent', name: 'alice' }, 'one'));
  await until(bob.c, (f) => f.type === 'accepted');
  const first = await alice.c.next();
  // alice's socket to a goes quiet (a half-open path); meanwhile bob writes again.
  await bob.c.send(msg('r2', 'm-2', { type: 'agent', name: 'alice' }, 'two'));
  await until(bob.c, (f) => f.type === 'accepted');
  const again = new RawClient(b);
  cleanups.push(() => again.close());
  const claimed = await again.hello('demo', 'alice', {
    resume: alice.claimed.resumeSecret,
    recover: { epoch: alice.claimed.epoch, since: first.message.sequence },
  });
  expect(claimed).toMatchObject({
    type: 'claimed',
    resumed: true,
    self: alice.self,
    peers: [bob.self],
    recovery: { recovered: true, since: 1, replayed: 1 },
  });
  expect(claimed.resumeSecret).toBeUndefined();
  expect((await again.next()).message.messageId).toBe('m-2');
  // The old socket on a is cut without a departure; bob saw no one leave or join.
  expect(await alice.c.closed).toMatchObject({ code: 1006 });
  await again.send({ type: 'delivered', messageId: 'm-2' });
  expect(await until(bob.c, (f) => f.type !== 'ping')).toEqual({
    type: 'delivery',
    messageId: 'm-2',
    to: 'alice',
    status: 'delivered',
  });
  // A wrong secret does not take the name.
  const thief = new RawClient(a);
  expect((await thief.hello('demo', 'alice', { resume: 'not-the-secret' })).code).toBe(
    'name_in_use',
  );
});

/** A real hub process on the shared database; resolves with its URL once it listens. */
async function hubProcess(
  url: string,
  dir: string,
): Promise<{ url: string; proc: ReturnType<typeof Bun.spawn> }> {
  const fleetFile = join(dir, 'fleet.json');
  writeFileSync(
    fleetFile,
    JSON.stringify({ hub: { name: 'a2a', port: 0, role: 'hub', file: 'hub/main.ts' }, nodes: [] }),
  );
  const proc = Bun.spawn(bunCommand(['hub/main.ts']), {
    cwd: root,
    env: {
      ...process.env,
      FLEET_FILE: fleetFile,
      DATA_DIR: dir,
      PORT: '0',
      MESH_DATABASE_URL: url,
      MESH_LEASE_MS: '1500',
      LOG_LEVEL: 'warn',
    },
    stdout: 'pipe',
    stderr: 'inherit',
  });
  cleanups.push(async () => {
    proc.kill('SIGKILL');
    await proc.exited;
  });
  const reader = (proc.stdout as ReadableStream<Uint8Array>).getReader();
  let out = '';
  for (;;) {
    const line = /hub listening on (\S+)/.exec(out);
    if (line) return { url: line[1]!.replace(/\/$/, ''), proc };
    const r = await reader.read();
    if (r.done) throw new Error(`hub exited before listening: ${out}`);
    out += new TextDecoder().decode(r.value);
  }
}

test('kill -9 of a hub process: its clients move to the other hub and miss nothing; a client that does not come back is dropped', async () => {
  const url = await pg.createDatabase(`cluster_${++dbSeq}`);
  const dirs = [mkdtempSync(join(tmpdir(), 'mesh-hub-')), mkdtempSync(join(tmpdir(), 'mesh-hub-'))];
  cleanups.push(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
  const [one, two] = await Promise.all(dirs.map((d) => hubProcess(url, d)));
  await post(one!, 'create', { name: 'demo' });

  const attachments = mkdtempSync(join(tmpdir(), 'mesh-att-'));
  cleanups.push(() => rmSync(attachments, { recursive: true, force: true }));
  const inbox: InboundMessage[] = [];
  // alice starts on hub one and knows hub two; bob is on hub two.
  const alice = createMeshClient({
    hubUrl: one!.url,
    hubUrls: [two!.url],
    log: silentLog,
    attachmentsDir: attachments,
    onInbound: (m) => void inbox.push(m),
  });
  const bob = createMeshClient({
    hubUrl: two!.url,
    hubUrls: [one!.url],
    log: silentLog,
    attachmentsDir: attachments,
  });
  cleanups.push(
    () => alice.close(),
    () => bob.close(),
  );
  const before = await alice.connect('a', 'demo', 'alice');
  await bob.connect('b', 'demo', 'bob');
  // eve is on hub one and will not come back; a watcher on hub two sees who leaves and why.
  const watcher = await claim(two!, 'demo', 'watcher');
  cleanups.push(() => watcher.c.close());
  const eve = await claim(one!, 'demo', 'eve');
  expect(await until(watcher.c, (f) => f.type === 'presence_joined')).toMatchObject({
    peer: { name: 'eve' },
  });

  const texts = () => inbox.map((m) => m.text);
  /** Resolves once alice has handled `n` messages. */
  const waitFor = (n: number) =>
    new Promise<void>((resolve) => {
      if (inbox.length >= n) return resolve();
      const off = alice.on('change', () => {
        if (inbox.length >= n) {
          off();
          resolve();
        }
      });
    });
  const sent = [];
  sent.push(await bob.send('b', { target: { type: 'agent', name: 'alice' }, text: 'before 1' }));
  sent.push(await bob.send('b', { target: { type: 'project' }, text: 'before 2' }));
  await waitFor(2);

  const recovery = new Promise<{ replayed: number; resumed: boolean }>((resolve) =>
    alice.on('recovery', (e) => resolve(e)),
  );
  one!.proc.kill('SIGKILL');
  await one!.proc.exited;
  // While alice is away, bob keeps writing: accepted, committed, waiting for her.
  for (let i = 1; i <= 5; i++)
    sent.push(
      await bob.send('b', {
        target: { type: i % 2 ? 'project' : 'agent', ...(i % 2 ? {} : { name: 'alice' }) } as never,
        text: `during ${i}`,
      }),
    );
  expect(sent.every((r) => r.ok)).toBe(true);

  expect(await recovery).toMatchObject({ resumed: true, recovered: true });
  await waitFor(7);
  expect(texts()).toEqual([
    'before 1',
    'before 2',
    'during 1',
    'during 2',
    'during 3',
    'during 4',
    'during 5',
  ]);
  const after = alice.status('a')!;
  expect(after).toMatchObject({ state: 'connected', hubUrl: two!.url, self: before.self });
  // Sequences as handled: gap-free and in order.
  expect(inbox.map((m) => m.message.sequence)).toEqual([1, 2, 3, 4, 5, 6, 7]);
  // Live again on hub two: a new message arrives directly.
  sent.push(await bob.send('b', { target: { type: 'agent', name: 'alice' }, text: 'after' }));
  await waitFor(8);
  expect(texts().at(-1)).toBe('after');

  // eve's lease died with hub one: the others hear she left (alice resumed, so she never left).
  expect(await until(watcher.c, (f) => f.type === 'presence_left')).toEqual({
    type: 'presence_left',
    peer: eve.self,
    reason: 'hub_lost',
  });
  await eve.c.closed;
  const roster = await fetch(`${two!.url}/v1/presence?project=demo`).then((r) => r.json());
  expect(roster.peers.map((p: Frame) => p.name)).toEqual(['alice', 'bob', 'watcher']);
}, 60_000);
