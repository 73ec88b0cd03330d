/**
 * @module lib/mesh/client-membership — one agent's presence across reconnects: join, the attempt
 * (to the next hub in turn after a failure), backoff from the base delay doubling to the cap and
 * reset after a claim, the stop codes, remembered connections, status and stop.
 */

import { Membership, type ClientContext } from './client-context.ts';
import { handleInbound, takeClaim } from './client-messages.ts';
import { openConnection, type MeshConnection } from './connection.ts';
import type { ClientCode } from './errors.ts';
import type { RememberedConnection } from './memory.ts';

/**
 * Claim refusals after which retrying cannot help. A taken name (`A2A_NAME_IN_USE`) is not one: a
 * squatter that leaves must not keep the rightful agent out for good, so it is retried at the capped
 * backoff; callers that want to give up at once (the CLI) close when the first attempt fails.
 */
const STOP_CODES: ReadonlySet<ClientCode> = new Set([
  'A2A_UNKNOWN_PROJECT',
  'A2A_PROTOCOL_MISMATCH',
]);

/**
 * Starts a membership for `agentId` and makes its first attempt. A remembered connection of the
 * same project and name brings its resume secret and stream position.
 */
export async function join(
  ctx: ClientContext,
  agentId: string,
  project: string,
  name: string,
  saved?: RememberedConnection,
): Promise<Membership> {
  const m = new Membership(ctx, agentId, project, name, saved);
  ctx.members.set(agentId, m);
  m.enter('connecting');
  await attempt(ctx, m);
  return m;
}

async function attempt(ctx: ClientContext, m: Membership): Promise<void> {
  const { o } = ctx;
  if (!m.desired) return;
  // A connection ended by an explicit disconnect elsewhere (`bun run mesh disconnect`) is not rejoined.
  if (!m.revive && o.memory && (await o.memory.ended(m.agentId))) {
    ctx.members.delete(m.agentId);
    const message = `the connection of ${m.agentId} was ended by a disconnect`;
    return m.failed({ code: 'A2A_CLIENT_CLOSED', message }, true);
  }
  const r = await openConnection({
    hubUrl: m.hubUrl,
    project: m.project,
    name: m.name,
    token: o.token,
    ...(o.anonymous ? { anonymous: true } : {}),
    WebSocket: o.WebSocket,
    log: o.log,
    timers: ctx.timers,
    resume: m.resumeSecret,
    recover: m.position,
    onClaimed: (c) => takeClaim(ctx, m, c),
    onMessage: (message) => handleInbound(ctx, m, message),
  });
  if (!m.desired) {
    if (r.ok) r.result.close(1000, 'disconnect');
    return;
  }
  if (!r.ok) {
    o.log('warn', 'mesh client: connect failed', {
      agent: m.agentId,
      project: m.project,
      code: r.error.code,
    });
    m.failed(r.error, STOP_CODES.has(r.error.code));
    return m.retry(() => void attempt(ctx, m));
  }
  await connected(ctx, m, r.result);
}

/** A claim succeeded: the backoff resets, the connection's events are heard, the connection is remembered. */
async function connected(ctx: ClientContext, m: Membership, conn: MeshConnection): Promise<void> {
  const { events, o } = ctx;
  m.connected(conn);
  conn.on('presence', () => events.emit('change', { agentId: m.agentId }));
  conn.on('delivery', (d) => {
    if (d.status === 'delivered') m.activity.delivered(d.to);
    events.emit('delivery', { ...d, agentId: m.agentId });
    events.emit('change', { agentId: m.agentId });
  });
  conn.on('close', ({ code, reason }) => {
    const error = {
      code: 'A2A_CLIENT_TRANSPORT' as const,
      message: `connection closed (${code} ${reason})`,
    };
    if (!m.dropped(conn, error)) return;
    void o.memory?.save(m.agentId, m.remembered());
    m.retry(() => void attempt(ctx, m));
  });
  m.enter('connected');
  await o.memory?.save(m.agentId, m.remembered(), { revive: m.revive });
  m.revived();
}

/** Ends a membership: no more attempts, and its connection closed (resolves once it has). */
export async function stop(ctx: ClientContext, m: Membership): Promise<void> {
  const conn = m.end();
  ctx.members.delete(m.agentId);
  if (conn && !conn.closed) {
    conn.close(1000, 'disconnect');
    await conn.done;
  }
}
