/**
 * The mesh's slow-consumer cut on a real hub process: clients on raw sockets that claim a name and
 * then never read while another client floods the project with broadcasts. Each is cut with
 * `presence_left {reason: "slow_consumer"}` and close 1008 `slow_consumer`, the hub's memory stays
 * bounded, a reading client gets every message, and a cut client that reconnects recovers what it
 * missed from its last sequence.
 */

import { afterAll, expect, setDefaultTimeout, test } from 'bun:test';
import { rmSync } from 'node:fs';
import { join as joinMesh, RawClient, text, type Frame } from './support/mesh.ts';
import { startProcess, type ServingProcess } from './support/process.ts';
import { rssOf } from './support/raw-sse.ts';
import { rawWebSocket, type RawWebSocket } from './support/raw-ws.ts';

setDefaultTimeout(20_000); // per file (Bun scopes it so): real servers and processes are slow on a busy machine

const children: ServingProcess[] = [];
afterAll(async () => {
  for (const c of children) {
    c.proc.kill('SIGKILL');
    rmSync(c.dataDir, { recursive: true, force: true });
  }
});

const MiB = 1024 * 1024;
const PROJECT = 'main';
/** Each broadcast's text: well below the identity limit, so it travels as it is. */
const BODY_BYTES = 8_000;
/** Broadcasts in flight at once (sent, not yet `accepted`). */
const WINDOW = 32;

/** Claims `name` on a raw socket and returns it with its `claimed` frame. */
async function rawClaim(url: string, name: string): Promise<{ ws: RawWebSocket; claimed: Frame }> {
  const ws = rawWebSocket(url, '/v1/connect');
  await ws.opened;
  ws.send(JSON.stringify({ type: 'hello', protocolVersion: 3, project: PROJECT, name }));
  const claimed = await ws.next();
  expect(claimed).toMatchObject({ type: 'claimed', project: PROJECT, self: { name } });
  return { ws, claimed };
}

/** A client that reads every frame and acknowledges every message, recording their sequences. */
function reader(c: RawClient) {
  const sequences: number[] = [];
  const left: Frame[] = [];
  const wakers = new Set<() => void>();
  c.ws.addEventListener('message', () => {
    for (let f = c.frames.shift(); f; f = c.frames.shift()) {
      if (f.type === 'message') {
        sequences.push(f.message.sequence);
        void c.send({ type: 'delivered', messageId: f.message.messageId });
      }
      if (f.type === 'presence_left') left.push(f);
      for (const w of [...wakers]) w();
    }
  });
  return {
    sequences,
    left,
    /** Resolves once `done()` holds, checked at every frame. */
    until: (done: () => boolean) =>
      new Promise<void>((r) => {
        if (done()) return r();
        const w = () => done() && (wakers.delete(w), r());
        wakers.add(w);
      }),
  };
}

/**
 * Sends broadcasts, WINDOW at a time, until `enough(sent)` holds after an `accepted`; resolves with
 * the sequence of every accepted one, in order.
 */
async function flood(
  c: RawClient,
  tag: string,
  enough: (sent: number) => boolean,
  limit: number,
): Promise<number[]> {
  const accepted: number[] = [];
  let sent = 0;
  let inFlight = 0;
  const body = (i: number) => `${tag}-${i}:`.padEnd(BODY_BYTES, 'x');
  await new Promise<void>((done, fail) => {
    const pump = () => {
      while (inFlight < WINDOW && !enough(sent) && sent < limit) {
        const i = sent++;
        inFlight++;
        void c.send({
          type: 'message',
          requestId: `${tag}-${i}`,
          messageId: crypto.randomUUID(),
          target: { type: 'project' },
          payload: text(body(i)),
          attachments: [],
        });
      }
      if (inFlight > 0) return;
      c.ws.removeEventListener('message', onFrame);
      if (enough(sent)) done();
      else fail(new Error(`${tag}: stopped after ${sent} broadcasts`));
    };
    const onFrame = () => {
      for (let f = c.frames.shift(); f; f = c.frames.shift()) {
        if (f.type === 'error') return fail(new Error(`${tag}: ${JSON.stringify(f)}`));
        if (f.type !== 'accepted') continue;
        accepted.push(f.message.sequence);
        inFlight--;
      }
      pump();
    };
    c.ws.addEventListener('message', onFrame);
    pump();
  });
  return accepted;
}

test('readers that stop reading are cut with slow_consumer; memory stays bounded, a reader gets everything, the cut client recovers', async () => {
  const hub = await startProcess('hub/main.ts', [], {
    LOG_LEVEL: 'warn',
    MESH_SOCKET_BUFFER_BYTES: String(1 * MiB),
    // No heartbeat cut during the test: only the send buffer decides.
    MESH_HEARTBEAT_MS: '600000',
  });
  children.push(hub);

  const watcher = reader((await joinMesh(hub, PROJECT, 'watcher')).c);
  const flooder = (await joinMesh(hub, PROJECT, 'flooder')).c;
  const stuck = await Promise.all(
    ['stuck-1', 'stuck-2', 'stuck-3'].map((n) => rawClaim(hub.url, n)),
  );
  for (const s of stuck) s.ws.stall();
  const rssBefore = rssOf(hub.proc.pid);

  // Each stalled client starts reading again as soon as the hub has cut it, which its log says at
  // that moment. A client that does not take even its close frame within the hello timeout is cut
  // for good, without one (close null): waiting for the watcher to see the cut instead raced that
  // timeout, since on a loaded machine the watcher's own backlog of broadcasts delays it by seconds.
  const drained = stuck.map((s) =>
    hub
      .waitForLog(`mesh: slow consumer cut project="${PROJECT}" name="${s.claimed.self.name}"`)
      .then(() => s.ws.drain()),
  );
  // Until every stalled reader is cut (they hold the kernel's socket buffers plus 1 MiB each)...
  const allCut = () =>
    watcher.left.filter((f) => f.reason === 'slow_consumer').length === stuck.length;
  const first = await flood(flooder, 'a', allCut, 20_000);
  const rssAtCut = rssOf(hub.proc.pid);
  // ...and then 48 MB more: without a bound, each stalled reader would hold all of it.
  const more = await flood(flooder, 'b', (sent) => sent >= 6_000, 6_000);
  const accepted = [...first, ...more];
  await watcher.until(() => watcher.sequences.length >= accepted.length);
  const rssAfter = rssOf(hub.proc.pid);
  console.log(
    `mesh hub RSS: ${(rssBefore / MiB).toFixed(0)} MiB before, +${((rssAtCut - rssBefore) / MiB).toFixed(1)} MiB when the 3 stalled readers were cut ` +
      `(${first.length} broadcasts), +${((rssAfter - rssBefore) / MiB).toFixed(1)} MiB after ${accepted.length} broadcasts of ${BODY_BYTES} B`,
  );

  // The others saw each stalled presence leave with the documented reason; the hub logged the cut.
  expect(watcher.left.map((f) => [f.peer.name, f.reason]).sort()).toEqual(
    stuck.map((s) => [s.claimed.self.name, 'slow_consumer']),
  );
  expect(hub.log()).toContain('mesh: slow consumer cut');
  // Bounded: 3 x 70 MB would be held without the cut (measured: +16 to +45 MiB, flat over 150 MB of broadcasts).
  expect(rssAfter - rssBefore).toBeLessThan(96 * MiB);
  // The reading client got every message, once, in order.
  expect(watcher.sequences).toEqual(accepted);
  expect(accepted).toEqual(Array.from({ length: accepted.length }, (_, i) => accepted[0]! + i));

  for (const [i, s] of stuck.entries()) {
    // Reading again, the stalled client gets what was queued for it, then close 1008 slow_consumer.
    const { frames, close } = await drained[i]!;
    expect(close).toEqual({ code: 1008, reason: 'slow_consumer' });
    const got = frames.filter((f) => f.type === 'message').map((f) => f.message.sequence as number);
    // What it got is a gap-free run right after its claim, less than everything.
    expect(got).toEqual(Array.from({ length: got.length }, (_, i) => s.claimed.sequence + 1 + i));
    expect(got.length).toBeLessThan(accepted.length);
    const last = got.length ? got[got.length - 1]! : s.claimed.sequence;

    // Reconnecting as a client does (same name, the epoch and the last sequence it handled), it recovers the rest.
    const again = new RawClient(hub);
    const claimed = await again.hello(PROJECT, s.claimed.self.name, {
      recover: { epoch: s.claimed.epoch, since: last },
    });
    expect(claimed).toMatchObject({ type: 'claimed', recovery: { since: last } });
    const replayed: Frame[] = [];
    while (replayed.length < claimed.recovery.replayed) {
      const f = await again.next();
      if (f.type === 'message') replayed.push(f.message);
    }
    // Past the replay bounds the newest come and the older part is paged from history, as documented.
    const paged: Frame[] = [];
    let before = replayed[0]?.sequence ?? claimed.sequence + 1;
    while (!claimed.recovery.recovered && before > last + 1) {
      const res = await fetch(
        `${hub.url}/v1/history?project=${PROJECT}&before=${PROJECT}:${before}&limit=500`,
      );
      const page = ((await res.json()) as { messages: Frame[] }).messages.filter(
        (m) => m.sequence > last,
      );
      expect(page.length).toBeGreaterThan(0);
      paged.unshift(...page);
      before = page[0]!.sequence;
    }
    const recovered = [...paged, ...replayed];
    const missed = accepted.filter((q) => q > last);
    expect(recovered.map((m) => m.sequence)).toEqual(missed);
    expect(
      recovered.every((m) => m.from.name === 'flooder' && m.payload.data.length === BODY_BYTES),
    ).toBe(true);
    await again.close();
  }
  await flooder.close();
}, 120_000);
