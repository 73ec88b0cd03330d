/**
 * @module hub/mesh/slow-consumer — the end of a mesh socket whose reader fell more than
 * `maxSocketBufferedBytes` behind: its presence leaves with `slow_consumer`, nothing more is queued
 * for it, its close 1008 `slow_consumer` goes out once its backlog has, and it is terminated when
 * its reader takes nothing for a heartbeat's verdict.
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
  /** A presence leaves (its socket is cut); its `leaveReason` is already set. */
  leave: (p: Presence) => void;
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
  const cutSlowConsumer = (ws: WS) => {
    ws.data.closing = true;
    ws.data.cut = true;
    const p = ws.data.presence;
    log('warn', 'mesh: slow consumer cut', {
      project: p?.project,
      name: p?.name,
      buffered: ws.getBufferedAmount(),
    });
    if (p) {
      p.leavingWith('slow_consumer');
      o.leave(p);
    }
    closeIfDrained(ws);
    endWhenIdle(ws, ws.getBufferedAmount());
  };
  return {
    /** Cuts `ws` (what the caller still queues for it is the caller's to drop). */
    cut: cutSlowConsumer,
    /** Bun's `drain`: a cut socket whose backlog is out gets its close. */
    closeIfDrained,
  };
}
