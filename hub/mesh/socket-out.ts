/**
 * @module hub/mesh/socket-out — what the hub writes to mesh sockets: frames queued per socket and
 * written once per event-loop turn inside `ws.cork()`, the slow consumer cut when its reader falls
 * too far behind (hub/mesh/slow-consumer.ts), and a socket refused (error frame, then close 1008)
 * or dropped at once.
 */

import type { ServerWebSocket } from 'bun';
import type { Log } from '../../lib/log.ts';
import type { WireCode } from '../../lib/mesh/errors.ts';
import type { MeshLimits } from '../../lib/mesh/limits.ts';
import type { ServerFrame } from '../../lib/mesh/wire.ts';
import type { MeshSocketData, Presence } from './roster.ts';
import { createSlowConsumerCut } from './slow-consumer.ts';
import type { Timers } from './timers.ts';

export type WS = ServerWebSocket<MeshSocketData>;

export interface SocketOutOptions {
  log: Log;
  limits: MeshLimits;
  timers: Timers;
  /** A presence leaves (its socket is cut as a slow consumer); its `leaveReason` is already set. */
  leave: (p: Presence) => void;
}

export type SocketOut = ReturnType<typeof createSocketOut>;

export function createSocketOut(o: SocketOutOptions) {
  const { limits, timers } = o;
  // Outgoing frames are queued per socket and written once per event-loop turn inside ws.cork(),
  // so a burst (a group commit's broadcasts, many acknowledgements) costs one write per socket
  // rather than one per frame.
  const outbox = new Map<WS, string[]>();
  let outboxScheduled = false;
  const writeOut = (ws: WS, frames: string[]) => {
    if (ws.readyState !== 1) return;
    if (frames.length === 1) ws.sendText(frames[0]!);
    else ws.cork(() => frames.forEach((f) => ws.sendText(f)));
    if (ws.getBufferedAmount() > limits.maxSocketBufferedBytes) cutSlowConsumer(ws);
  };
  const { cut, closeIfDrained } = createSlowConsumerCut(o);
  const cutSlowConsumer = (ws: WS) => {
    outbox.delete(ws);
    cut(ws);
  };
  const flushAll = () => {
    outboxScheduled = false;
    const all = [...outbox];
    outbox.clear();
    for (const [ws, frames] of all) writeOut(ws, frames);
  };
  const out = (ws: WS, text: string): void => {
    if (ws.data.cut) return;
    const q = outbox.get(ws);
    if (q) q.push(text);
    else outbox.set(ws, [text]);
    if (!outboxScheduled) {
      outboxScheduled = true;
      setImmediate(flushAll);
    }
  };
  /** Writes what is queued for one socket now (before closing it). */
  const flushSocket = (ws: WS) => {
    const q = outbox.get(ws);
    outbox.delete(ws);
    if (q) writeOut(ws, q);
  };
  const send = (ws: WS, frame: ServerFrame): void => out(ws, JSON.stringify(frame));
  const error = (ws: WS, code: WireCode, message: string, requestId?: string): void =>
    send(
      ws,
      requestId === undefined
        ? { type: 'error', code, message }
        : { type: 'error', code, message, requestId },
    );
  return {
    out,
    send,
    error,
    /** Writes every queued frame now (before the sockets close at shutdown). */
    flushAll,
    /** Bun's `drain`: a socket took some of its backlog (a cut one may now get its close). */
    drained: closeIfDrained,
    /** Cuts a socket at once: what is queued for it is discarded and nothing more is handled from it. */
    drop(ws: WS): void {
      ws.data.closing = true;
      outbox.delete(ws);
      ws.terminate();
    },
    /** Refuses a socket before or at claim: an error frame, then close 1008 with the code as the reason. */
    refuse(ws: WS, code: WireCode, message: string): void {
      if (ws.data.closing) return;
      error(ws, code, message);
      flushSocket(ws);
      ws.data.closing = true;
      if (ws.data.helloTimer) timers.clearTimeout(ws.data.helloTimer);
      ws.close(1008, code);
    },
  };
}
