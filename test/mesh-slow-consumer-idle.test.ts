/**
 * The end of a cut slow consumer, with the hub's timers in the test's hands: after the cut the hub
 * waits a heartbeat's verdict (`heartbeatMs` x `heartbeatMisses`), not a hello timeout, for the
 * reader to take its backlog, and a reader that comes back to it within that period gets its close
 * 1008 `slow_consumer` whatever the period then decides.
 */

import { afterEach, expect, setDefaultTimeout, test } from 'bun:test';
import type { Timers } from '../hub/mesh/timers.ts';
import { createProject, join, msg, startHub, type TestHub } from './support/mesh.ts';
import { rawWebSocket, type RawWebSocket } from './support/raw-ws.ts';

setDefaultTimeout(20_000); // per file (Bun scopes it so): real servers and processes are slow on a busy machine

const KiB = 1024;
const HEARTBEAT_MS = 1_000;
const MISSES = 3;
/** The idle period after a cut, as the hub computes it. */
const IDLE_MS = HEARTBEAT_MS * MISSES;

let hub: TestHub | undefined;
afterEach(async () => {
  await hub?.stop();
  hub = undefined;
});

/** Real timeouts, except the idle period's, which the test fires by hand; no heartbeat intervals. */
function heldIdleTimers() {
  const held: (() => void)[] = [];
  let waiter: (() => void) | undefined;
  const timers: Timers = {
    setTimeout: (fn, ms) => {
      if (ms !== IDLE_MS) return setTimeout(fn, ms);
      held.push(fn);
      waiter?.();
      return 0 as unknown as ReturnType<typeof setTimeout>;
    },
    clearTimeout: (t) => clearTimeout(t),
    setInterval: () => 0 as unknown as ReturnType<typeof setInterval>,
    clearInterval: () => {},
  };
  return {
    timers,
    /** The next idle timer the hub arms, once it has. */
    next: async (): Promise<() => void> => {
      while (held.length === 0) await new Promise<void>((r) => (waiter = r));
      return held.shift()!;
    },
  };
}

async function stalledReader(url: string, name: string): Promise<RawWebSocket> {
  const ws = rawWebSocket(url, '/v1/connect');
  await ws.opened;
  ws.send(JSON.stringify({ type: 'hello', protocolVersion: 3, project: 'demo', name }));
  expect(await ws.next()).toMatchObject({ type: 'claimed', self: { name } });
  ws.stall();
  return ws;
}

/** Broadcasts 2 KiB messages from `sender` until the hub has cut `name`. */
async function floodUntilCut(sender: Awaited<ReturnType<typeof join>>['c'], name: string) {
  const body = 'x'.repeat(2 * KiB);
  const cut = () =>
    hub!.log.lines.some(
      (l) => l.startsWith('warn mesh: slow consumer cut') && l.includes(`"name":"${name}"`),
    );
  for (let i = 0; !cut(); i++) {
    await sender.send(msg(`m-${i}`, crypto.randomUUID(), { type: 'project' }, body));
    // Presence frames (the reader's arrival, its leaving) come in between.
    while ((await sender.next()).type !== 'accepted');
  }
}

test('a cut reader has a heartbeat verdict to take its backlog, and gets its close 1008 slow_consumer', async () => {
  const idle = heldIdleTimers();
  hub = startHub({
    limits: {
      maxSocketBufferedBytes: 64 * KiB,
      heartbeatMs: HEARTBEAT_MS,
      heartbeatMisses: MISSES,
    },
    timers: idle.timers,
  });
  await createProject(hub, 'demo');
  const sender = (await join(hub, 'demo', 'sender')).c;
  const stuck = await stalledReader(hub.url, 'stuck');
  await floodUntilCut(sender, 'stuck');
  const firstPeriod = await idle.next();
  const drained = stuck.drain();
  const { frames, close } = await drained;
  // Whatever the idle period would decide now, the reader has taken everything and its close.
  firstPeriod();
  expect(close).toEqual({ code: 1008, reason: 'slow_consumer' });
  expect(frames.some((f) => f.type === 'message')).toBe(true);
});
