/**
 * @module hub/mesh/departures — how presences end and move on the hub: a departure (pending
 * deliveries become `disconnected`, the others see `presence_left`, the name is released), a cut
 * from the hub's side, a takeover by a resuming socket, and the heartbeat that cuts the silent.
 * Delivery outcomes travel to their sender here or through the cluster.
 */

import type { DeliveryFrame, LeaveReason, ServerFrame } from '../../lib/mesh/wire.ts';
import { tellRoster, toProject } from './project-view.ts';
import type { RealtimeContext } from './realtime-context.ts';
import { peerOf, type Presence } from './roster.ts';
import type { WS } from './socket-out.ts';

/** A delivery outcome to its sender, on this hub or (through the cluster) on another. */
export function outcome(
  ctx: RealtimeContext,
  senderPresenceId: string,
  frame: DeliveryFrame,
): void {
  const p = ctx.roster.byId(senderPresenceId);
  if (p) {
    if (p.open) ctx.io.send(p.ws, frame);
  } else ctx.cluster.deliver(senderPresenceId, frame);
}

/** Removes a presence (once): pending deliveries become `disconnected`, the others see `presence_left`, the name is released. */
export function leave(ctx: RealtimeContext, p: Presence): void {
  if (!p.open) return;
  ctx.roster.remove(p);
  const reason = p.leaveReason ?? 'connection_closed';
  for (const [messageId, sender] of p.dropAcks())
    outcome(ctx, sender, { type: 'delivery', messageId, to: p.name, status: 'disconnected' });
  toProject(ctx, p.project, { type: 'presence_left', peer: peerOf(p), reason });
  tellRoster(ctx, p.project);
  ctx.cluster.release(p.project, p.name, p.presenceId, reason);
  if (ctx.roster.count(p.project) === 0) ctx.stream.unfollow(p.project);
  ctx.log('info', 'mesh: presence left', { project: p.project, name: p.name, reason });
}

/** Ends a presence from the hub's side: its socket is cut and the others see it leave with `reason`. */
export function cut(ctx: RealtimeContext, p: Presence, reason: LeaveReason, why?: string): void {
  if (why) ctx.log('warn', 'mesh: presence cut', { project: p.project, name: p.name, why });
  p.leavingWith(reason);
  ctx.io.drop(p.ws);
  leave(ctx, p);
}

/** Moves a live presence onto a new socket; the old one is cut without a departure (the presence goes on). */
export function takeOver(ctx: RealtimeContext, p: Presence, ws: WS): void {
  p.ws.data.presence = undefined;
  ctx.io.drop(p.ws);
  p.moveTo(ws);
}

/** A presence that moved to another hub: its old socket here goes without a departure. */
export function movedAway(ctx: RealtimeContext, p: Presence): void {
  ctx.roster.remove(p);
  p.dropAcks();
  p.ws.data.presence = undefined;
  ctx.io.drop(p.ws);
  if (ctx.roster.count(p.project) === 0) ctx.stream.unfollow(p.project);
}

const pingFrame = JSON.stringify({ type: 'ping' } satisfies ServerFrame);

/**
 * One heartbeat round. Each presence gets a WebSocket ping (answered by every client's WebSocket
 * layer) and a `ping` frame (which lets clients see the hub is alive); one that left
 * `heartbeatMisses` pings in a row unanswered is cut and leaves with `heartbeat_timeout`.
 */
export function heartbeatRound(ctx: RealtimeContext): void {
  for (const p of ctx.roster.all()) {
    if (p.missed >= ctx.limits.heartbeatMisses) {
      ctx.log('info', 'mesh: heartbeat timeout', {
        project: p.project,
        name: p.name,
        missed: p.missed,
      });
      cut(ctx, p, 'heartbeat_timeout');
      continue;
    }
    p.pinged();
    p.ws.ping();
    ctx.io.out(p.ws, pingFrame);
  }
}
