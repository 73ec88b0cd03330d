/**
 * The slow-consumer rule of the hub's socket writer (hub/mesh/socket-out.ts) over a socket whose
 * backlog the test sets: the close frame waits until the reader has taken its backlog, since Bun
 * ends a socket a few seconds after `close()` whatever it still holds (a reader slower than that
 * lost its backlog and its close: `bun test test/mesh-slow-consumer.test.ts` on a busy machine
 * showed it). Nothing more is queued for a cut socket, and one whose reader takes nothing for a
 * heartbeat's verdict is terminated.
 */

import { expect, setDefaultTimeout, test } from 'bun:test';
import { createSocketOut, type WS } from '../hub/mesh/socket-out.ts';
import { Presence } from '../hub/mesh/roster.ts';
import type { Timers } from '../hub/mesh/timers.ts';
import { MESH_LIMITS } from '../lib/mesh/limits.ts';

setDefaultTimeout(20_000); // per file (Bun scopes it so): real servers and processes are slow on a busy machine

const LIMIT = 64 * 1024;

/** A socket that keeps what is written and holds `buffered` bytes until the test says otherwise. */
function socket() {
  const s = {
    readyState: 1,
    buffered: 0,
    texts: [] as string[],
    closes: [] as [number, string][],
    terminated: 0,
    data: { kind: 'mesh', closing: false } as WS['data'],
    sendText(t: string) {
      s.texts.push(t);
      s.buffered += t.length;
    },
    cork(fn: () => void) {
      fn();
    },
    getBufferedAmount: () => s.buffered,
    close(code: number, reason: string) {
      s.closes.push([code, reason]);
      s.readyState = 2;
    },
    terminate() {
      s.terminated++;
      s.readyState = 3;
    },
  };
  return s;
}

function writer() {
  const armed: { fn: () => void; ms: number }[] = [];
  const timers: Timers = {
    setTimeout: (fn, ms) => {
      armed.push({ fn, ms });
      return 0 as unknown as ReturnType<typeof setTimeout>;
    },
    clearTimeout: () => {},
    setInterval: () => 0 as unknown as ReturnType<typeof setInterval>,
    clearInterval: () => {},
  };
  const left: Presence[] = [];
  const io = createSocketOut({
    log: () => {},
    limits: { ...MESH_LIMITS, maxSocketBufferedBytes: LIMIT },
    timers,
    leave: (p) => left.push(p),
  });
  return { io, armed, left };
}

/** Queues frames for `ws` and lets the writer's turn run (it writes once per event-loop turn). */
async function write(io: ReturnType<typeof createSocketOut>, ws: WS, frames: string[]) {
  for (const f of frames) io.out(ws, f);
  await new Promise((r) => setImmediate(r));
}

test('a cut socket gets its close only once its backlog is out, and nothing more is queued for it', async () => {
  const { io, armed, left } = writer();
  const s = socket();
  const ws = s as unknown as WS;
  s.data.presence = new Presence('main', 'stuck', 'p1', 0, ws, Buffer.alloc(32));
  await write(
    io,
    ws,
    Array.from({ length: 20 }, () => 'x'.repeat(4096)),
  );
  // Past the bound: the presence left with slow_consumer; the socket is open, its close held back.
  expect(left.map((p) => [p.name, p.leaveReason])).toEqual([['stuck', 'slow_consumer']]);
  expect(s.closes).toEqual([]);
  expect(s.readyState).toBe(1);
  const written = s.texts.length;
  await write(io, ws, ['{"type":"message"}']);
  expect(s.texts.length).toBe(written);
  // The reader takes part of it: still no close.
  s.buffered = 1000;
  io.drained(ws);
  expect(s.closes).toEqual([]);
  // All of it: the close goes out, once.
  s.buffered = 0;
  io.drained(ws);
  io.drained(ws);
  expect(s.closes).toEqual([[1008, 'slow_consumer']]);
  // The idle period was armed for a heartbeat's verdict.
  expect(armed.map((a) => a.ms)).toEqual([MESH_LIMITS.heartbeatMs * MESH_LIMITS.heartbeatMisses]);
});

test('a cut socket whose reader takes nothing is terminated after a heartbeat verdict; one that takes some gets another', async () => {
  const { io, armed } = writer();
  const s = socket();
  const ws = s as unknown as WS;
  await write(
    io,
    ws,
    Array.from({ length: 20 }, () => 'x'.repeat(4096)),
  );
  expect(armed.length).toBe(1);
  // Some of the backlog was taken during the period: another period.
  s.buffered -= 4096;
  armed.shift()!.fn();
  expect([s.terminated, armed.length]).toEqual([0, 1]);
  // Nothing taken during the next: terminated, without a close frame it could not read.
  armed.shift()!.fn();
  expect(s.terminated).toBe(1);
  expect(s.closes).toEqual([]);
});

test('a socket under the bound is written as usual and never cut', async () => {
  const { io, armed, left } = writer();
  const s = socket();
  const ws = s as unknown as WS;
  await write(io, ws, ['a', 'b', 'c']);
  expect(s.texts).toEqual(['a', 'b', 'c']);
  expect([left.length, armed.length, s.closes.length]).toEqual([0, 0, 0]);
  io.drained(ws);
  expect(s.closes).toEqual([]);
});
