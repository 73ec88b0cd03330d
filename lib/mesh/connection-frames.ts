/**
 * @module lib/mesh/connection-frames — what one presence does with each frame from the hub, parsed
 * strictly first (lib/mesh/server-frame.ts): the claim, presence changes, answers to sends, inbound
 * messages, delivery outcomes and errors. A malformed frame ends a connect before the claim and is
 * logged and ignored after it, as the hub does with a client's.
 */

import type { ConnectionContext } from './connection-context.ts';
import { enqueue } from './connection-inbound.ts';
import { closeSocket, rearmWatchdog } from './connection-socket.ts';
import { clientCode, ok, type ClientCode, type MeshError } from './errors.ts';
import { PROTOCOL_VERSION } from './limits.ts';
import { parseServerFrame } from './server-frame.ts';
import type { ClaimedFrame } from './connection-context.ts';

/** Handles one frame from the hub. */
export function onHubFrame(c: ConnectionContext, data: unknown): void {
  if (c.closed) return;
  // Any frame, even a malformed one, shows the hub is alive.
  rearmWatchdog(c);
  const parsed = parseServerFrame(data);
  if (!parsed.ok) return malformed(c, parsed.error, parsed.requestId);
  const f = parsed.result;
  switch (f.type) {
    case 'claimed':
      return claimed(c, f);
    case 'ping':
      return;
    case 'presence_joined':
      c.roster.set(f.peer.name, f.peer);
      return c.events.emit('presence', { kind: 'joined', peer: f.peer });
    case 'presence_left':
      if (c.roster.get(f.peer.name)?.presenceId === f.peer.presenceId) c.roster.delete(f.peer.name);
      return c.events.emit('presence', { kind: 'left', peer: f.peer, reason: f.reason });
    case 'accepted': {
      const done = c.pending.get(f.requestId);
      c.pending.delete(f.requestId);
      return done?.(
        ok({ message: f.message, recipients: f.recipients, replayed: f.replayed === true }),
      );
    }
    case 'message':
      return enqueue(c, f.message);
    case 'delivery':
      return c.events.emit('delivery', f);
    case 'error': {
      const err = { code: clientCode(f.code), message: `${f.code}: ${f.message}` };
      if (!c.self) c.claimError = err;
      return failRequest(c, f.requestId, err);
    }
    default: {
      // A frame type added to ServerFrame without a case here is a compile error.
      const _exhaustive: never = f;
      return _exhaustive;
    }
  }
}

/** As the hub does with a client: refused before the claim (close), ignored after it (log and go on). */
function malformed(c: ConnectionContext, error: MeshError<ClientCode>, requestId?: string): void {
  c.o.log?.('warn', 'mesh connection: malformed frame from the hub', {
    project: c.o.project,
    name: c.o.name,
    reason: error.message,
  });
  if (!c.self) {
    c.claimError = error;
    return closeSocket(c, 1002, 'invalid_frame');
  }
  failRequest(c, requestId, error);
}

/** Fails the send `requestId` names, or reports the error on the connection when it names none. */
function failRequest(
  c: ConnectionContext,
  requestId: string | undefined,
  error: MeshError<ClientCode>,
): void {
  const done = requestId !== undefined ? c.pending.get(requestId) : undefined;
  if (done) {
    c.pending.delete(requestId!);
    return done({ ok: false, error });
  }
  c.events.emit('error', error);
}

/** The claim: this presence and the roster, the watchdog armed from the hub's heartbeat. */
function claimed(c: ConnectionContext, f: ClaimedFrame): void {
  if (f.protocolVersion !== PROTOCOL_VERSION) {
    c.claimError = {
      code: 'A2A_PROTOCOL_MISMATCH',
      message: `hub claimed with protocol ${f.protocolVersion}`,
    };
    return closeSocket(c, 1002, 'protocol_mismatch');
  }
  c.self = f.self;
  for (const p of f.peers) c.roster.set(p.name, p);
  if (typeof f.heartbeatMs === 'number' && f.heartbeatMs > 0) {
    const misses =
      typeof f.heartbeatMisses === 'number' && f.heartbeatMisses > 0 ? f.heartbeatMisses : 2;
    c.silentAfterMs = f.heartbeatMs * (misses + 1);
    rearmWatchdog(c);
  }
  c.o.onClaimed?.(f);
  c.settle(ok(c.connection));
}
