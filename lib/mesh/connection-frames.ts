/**
 * @module lib/mesh/connection-frames — what one presence does with each frame from the hub, parsed
 * strictly first (lib/mesh/server-frame.ts): the claim, presence changes, answers to sends, inbound
 * messages, delivery outcomes and errors. A malformed frame ends a connect before the claim and is
 * logged and ignored after it, as the hub does with a client's.
 */

import type { ClaimedFrame, MeshConnection } from './connection-context.ts';
import type { ConnectionState } from './connection-state.ts';
import { clientCode, ok, type ClientCode, type MeshError } from './errors.ts';
import { PROTOCOL_VERSION } from './limits.ts';
import { parseServerFrame } from './server-frame.ts';

/** Handles one frame from the hub; `connection` is what the claim answers with. */
export function onHubFrame(c: ConnectionState, connection: MeshConnection, data: unknown): void {
  if (c.closed) return;
  // Any frame, even a malformed one, shows the hub is alive.
  c.rearmWatchdog();
  const parsed = parseServerFrame(data);
  if (!parsed.ok) return malformed(c, parsed.error, parsed.requestId);
  const f = parsed.result;
  switch (f.type) {
    case 'claimed':
      return claimed(c, connection, f);
    case 'ping':
      return;
    case 'presence_joined':
      c.joined(f.peer);
      return c.events.emit('presence', { kind: 'joined', peer: f.peer });
    case 'presence_left':
      c.left(f.peer);
      return c.events.emit('presence', { kind: 'left', peer: f.peer, reason: f.reason });
    case 'accepted':
      c.answer(
        f.requestId,
        ok({ message: f.message, recipients: f.recipients, replayed: f.replayed === true }),
      );
      return;
    case 'message':
      return c.deliver(f.message);
    case 'delivery':
      return c.events.emit('delivery', f);
    case 'error': {
      const err = { code: clientCode(f.code), message: `${f.code}: ${f.message}` };
      c.refuseClaim(err);
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
function malformed(c: ConnectionState, error: MeshError<ClientCode>, requestId?: string): void {
  c.o.log?.('warn', 'mesh connection: malformed frame from the hub', {
    project: c.o.project,
    name: c.o.name,
    reason: error.message,
  });
  if (!c.self) {
    c.refuseClaim(error);
    return c.close(1002, 'invalid_frame');
  }
  failRequest(c, requestId, error);
}

/** Fails the send `requestId` names, or reports the error on the connection when it names none. */
function failRequest(
  c: ConnectionState,
  requestId: string | undefined,
  error: MeshError<ClientCode>,
): void {
  if (!c.answer(requestId, { ok: false, error })) c.events.emit('error', error);
}

/** The claim: this presence and the roster, the watchdog armed from the hub's heartbeat. */
function claimed(c: ConnectionState, connection: MeshConnection, f: ClaimedFrame): void {
  if (f.protocolVersion !== PROTOCOL_VERSION) {
    c.refuseClaim({
      code: 'A2A_PROTOCOL_MISMATCH',
      message: `hub claimed with protocol ${f.protocolVersion}`,
    });
    return c.close(1002, 'protocol_mismatch');
  }
  let silentAfterMs = 0;
  if (typeof f.heartbeatMs === 'number' && f.heartbeatMs > 0) {
    const misses =
      typeof f.heartbeatMisses === 'number' && f.heartbeatMisses > 0 ? f.heartbeatMisses : 2;
    silentAfterMs = f.heartbeatMs * (misses + 1);
  }
  c.claim(f.self, f.peers, silentAfterMs);
  c.o.onClaimed?.(f);
  c.settle(ok(connection));
}
