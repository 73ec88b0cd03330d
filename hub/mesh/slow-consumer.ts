/**
 * @module hub/mesh/slow-consumer — the cut of a socket whose reader fell more than
 * `maxSocketBufferedBytes` behind: its presence leaves with `slow_consumer`, it gets close 1008
 * `slow_consumer` once its reader has taken its backlog, and it is terminated if its reader stops
 * taking.
 */

import type { ServerWebSocket } from 'bun';
import type { Log } from '../../lib/log.ts';
import type { MeshLimits } from '../../lib/mesh/limits.ts';
import type { MeshSocketData, Presence } from './roster.ts';
import type { Timers } from './timers.ts';

type WS = ServerWebSocket<MeshSocketData>;

export interface SlowConsumerOptions {
  log: Log;
  limits: MeshLimits;
  timers: Timers;
  /** A presence leaves; its `leaveReason` is already set. */
  leave: (p: Presence) => void;
  /** Nothing more is written to the socket: what is queued for it is discarded. */
  forget: (ws: WS) => void;
}

export function createSlowConsumerCut(o: SlowConsumerOptions) {
  const { log, limits, timers } = o;
  /**
   * The end of a cut socket: terminated when its reader takes none of its backlog (or, all taken,
   * sends no close reply) for as long as the heartbeat takes to declare a presence dead
   * (`heartbeatMs` x `heartbeatMisses`). A reader still working through its backlog gets another
   * period, however slow the machine. The bytes it holds meanwhile stay under
   * `maxSocketBufferedBytes`.
   */
  const endWhenIdle = (ws: WS, buffered: number) =>
    timers.setTimeout(() => {
      if (ws.readyState === 3) return;
      const now = ws.getBufferedAmount();
      if (now > 0 && now < buffered) endWhenIdle(ws, now);
      else ws.terminate();
    }, limits.heartbeatMs * limits.heartbeatMisses);
  /**
   * The close frame of a cut socket goes out once its backlog has: Bun ends a socket a few
   * seconds after `close()` whatever it still holds (its end timeout), which would drop the
   * backlog and the close frame of a reader that is slow to take them.
   */
  const closeIfDrained = (ws: WS) => {
    if (ws.data.cut && ws.readyState === 1 && ws.getBufferedAmount() === 0)
      ws.close(1008, 'slow_consumer');
  };
  /**
   * A socket whose reader fell more than `maxSocketBufferedBytes` behind: its presence leaves with
   * `slow_consumer`, nothing more is queued for it, and once its reader has taken what it holds it
   * gets close 1008 `slow_consumer` (`closeIfDrained`); cut for good if its reader stops taking
   * (`endWhenIdle`).
   */
  const cut = (ws: WS) => {
    ws.data.closing = true;
    ws.data.cut = true;
    o.forget(ws);
    const p = ws.data.presence;
    log('warn', 'mesh: slow consumer cut', {
      project: p?.project,
      name: p?.name,
      buffered: ws.getBufferedAmount(),
    });
    if (p) {
      p.leaveReason = 'slow_consumer';
      o.leave(p);
    }
    closeIfDrained(ws);
    endWhenIdle(ws, ws.getBufferedAmount());
  };
  return { cut, closeIfDrained };
}
