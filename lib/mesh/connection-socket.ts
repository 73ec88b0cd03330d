/**
 * @module lib/mesh/connection-socket — the socket side of one presence: writing frames, the
 * heartbeat watchdog, a close that cuts a peer which never answers it, and ending the connection
 * once (whether the socket closed or the watchdog gave a silent hub up).
 */

import { fail } from './errors.ts';
import type { ConnectionContext } from './connection-context.ts';

/** Close code a connection reports when it gave the hub up because its heartbeat stopped. */
export const HUB_SILENT_CODE = 4000;
/** How long `close()` waits for the hub's close frame before cutting the socket (a half-open path never answers). */
export const CLOSE_GRACE_MS = 1_000;

/** Writes one frame while the socket is open. */
export function sendFrame(c: ConnectionContext, f: unknown): void {
  if (!c.closed && c.ws.readyState === c.Ws.OPEN) c.ws.send(JSON.stringify(f));
}

/** Restarts the watchdog: any frame, even a malformed one, shows the hub is alive. */
export function rearmWatchdog(c: ConnectionContext): void {
  if (c.watchdog !== undefined) c.timers.clearTimeout(c.watchdog);
  c.watchdog =
    c.silentAfterMs > 0 && !c.closed
      ? c.timers.setTimeout(() => finish(c, HUB_SILENT_CODE, 'hub_silent'), c.silentAfterMs)
      : undefined;
}

/** Closes the socket; a peer that never answers the close is cut after a grace period. */
export function closeSocket(c: ConnectionContext, code: number, reason: string): void {
  const { ws, Ws } = c;
  if (c.closed || !(ws.readyState === Ws.OPEN || ws.readyState === Ws.CONNECTING)) return;
  ws.close(code, reason);
  c.graceTimer = c.timers.setTimeout(() => finish(c, code, reason), CLOSE_GRACE_MS);
}

/** Ends the connection once: pending sends fail, the queue is dropped, an unanswered claim fails. */
export function finish(c: ConnectionContext, code: number, reason: string): void {
  if (c.closed) return;
  c.closed = true;
  if (c.watchdog !== undefined) c.timers.clearTimeout(c.watchdog);
  if (c.graceTimer !== undefined) c.timers.clearTimeout(c.graceTimer);
  c.watchdog = c.graceTimer = undefined;
  // A half-open socket never completes a close handshake: cut it locally.
  if (c.ws.readyState === c.Ws.OPEN || c.ws.readyState === c.Ws.CONNECTING)
    (c.ws as WebSocket & { terminate?: () => void }).terminate?.();
  for (const done of c.pending.values())
    done(fail('A2A_CLIENT_CLOSED', `connection closed (${code} ${reason})`));
  c.pending.clear();
  c.inbound.length = 0;
  c.settle({
    ok: false,
    error: c.claimError ?? {
      code: 'A2A_CLIENT_CONNECT',
      message: `connection closed before the claim (${code} ${reason})`,
    },
  });
  c.events.emit('close', { code, reason });
}
