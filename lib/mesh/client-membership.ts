/**
 * @module lib/mesh/client-membership — one agent's presence across reconnects: join, the attempt
 * (to the next hub in turn after a failure), backoff from the base delay doubling to the cap and
 * reset after a claim, the stop codes, remembered connections, status and stop.
 */

import { createActivity } from './activity.ts';
import type {
  ClientContext,
  Membership,
  MembershipState,
  MembershipStatus,
} from './client-context.ts';
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
  const m: Membership = {
    agentId,
    project,
    name,
    state: 'connecting',
    desired: true,
    delay: ctx.base,
    activity: createActivity(ctx.now),
    hub: 0,
    revive: true,
  };
  if (saved && saved.project === project && saved.name === name) {
    if (saved.resumeSecret) m.resumeSecret = saved.resumeSecret;
    if (saved.epoch !== undefined && saved.since !== undefined)
      m.position = { epoch: saved.epoch, since: saved.since };
  }
  ctx.members.set(agentId, m);
  setState(ctx, m, 'connecting');
  await attempt(ctx, m);
  return m;
}

export function setState(ctx: ClientContext, m: Membership, state: MembershipState): void {
  m.state = state;
  ctx.events.emit('presence-changed', {
    agentId: m.agentId,
    state,
    project: m.project,
    name: m.name,
    ...(m.lastError ? { error: m.lastError } : {}),
  });
}

/** What is remembered for an agent: never the secret in a log, only in the memory store. */
export const remembered = (m: Membership): RememberedConnection => ({
  project: m.project,
  name: m.name,
  ...(m.resumeSecret ? { resumeSecret: m.resumeSecret } : {}),
  ...(m.position ? { epoch: m.position.epoch, since: m.position.since } : {}),
});

function schedule(ctx: ClientContext, m: Membership): void {
  if (!m.desired) return;
  // With several hubs, the next attempt goes to the next one: the last one just failed or dropped.
  m.hub = (m.hub + 1) % ctx.urls.length;
  m.retryInMs = m.delay;
  setState(ctx, m, 'reconnecting');
  m.timer = ctx.timers.setTimeout(() => {
    m.timer = undefined;
    void attempt(ctx, m);
  }, m.delay);
  m.delay = Math.min(m.delay * 2, ctx.cap);
}

async function attempt(ctx: ClientContext, m: Membership): Promise<void> {
  const { o } = ctx;
  if (!m.desired) return;
  // A connection ended by an explicit disconnect elsewhere (`bun run mesh disconnect`) is not rejoined.
  if (!m.revive && o.memory && (await o.memory.ended(m.agentId))) {
    m.desired = false;
    m.retryInMs = undefined;
    m.lastError = {
      code: 'A2A_CLIENT_CLOSED',
      message: `the connection of ${m.agentId} was ended by a disconnect`,
    };
    ctx.members.delete(m.agentId);
    return setState(ctx, m, 'stopped');
  }
  const r = await openConnection({
    hubUrl: ctx.urls[m.hub]!,
    project: m.project,
    name: m.name,
    token: o.token,
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
    m.lastError = r.error;
    o.log('warn', 'mesh client: connect failed', {
      agent: m.agentId,
      project: m.project,
      code: r.error.code,
    });
    if (STOP_CODES.has(r.error.code)) {
      m.desired = false;
      m.retryInMs = undefined;
      return setState(ctx, m, 'stopped');
    }
    return schedule(ctx, m);
  }
  await connected(ctx, m, r.result);
}

/** A claim succeeded: the backoff resets, the connection's events are heard, the connection is remembered. */
async function connected(ctx: ClientContext, m: Membership, conn: MeshConnection): Promise<void> {
  const { events, o } = ctx;
  m.conn = conn;
  m.delay = ctx.base;
  m.retryInMs = undefined;
  m.lastError = undefined;
  conn.on('presence', () => events.emit('change', { agentId: m.agentId }));
  conn.on('delivery', (d) => {
    if (d.status === 'delivered') m.activity.delivered(d.to);
    events.emit('delivery', { ...d, agentId: m.agentId });
    events.emit('change', { agentId: m.agentId });
  });
  conn.on('close', ({ code, reason }) => {
    if (m.conn === conn) m.conn = undefined;
    if (!m.desired) return;
    m.lastError = {
      code: 'A2A_CLIENT_TRANSPORT',
      message: `connection closed (${code} ${reason})`,
    };
    void o.memory?.save(m.agentId, remembered(m));
    schedule(ctx, m);
  });
  setState(ctx, m, 'connected');
  await o.memory?.save(m.agentId, remembered(m), { revive: m.revive });
  m.revive = false;
}

export function status(ctx: ClientContext, m: Membership): MembershipStatus {
  const s: MembershipStatus = {
    agentId: m.agentId,
    project: m.project,
    name: m.name,
    state: m.state,
    peers: (m.conn?.peers() ?? []).map((p) => ({ ...p, activity: m.activity.peer(p.name) })),
    activity: m.activity.self(),
  };
  if (m.conn) {
    s.self = m.conn.self;
    s.hubUrl = ctx.urls[m.hub]!;
  }
  if (m.lastError) s.lastError = m.lastError;
  if (m.retryInMs !== undefined) s.retryInMs = m.retryInMs;
  return s;
}

/** Ends a membership: no more attempts, and its connection closed (resolves once it has). */
export async function stop(ctx: ClientContext, m: Membership): Promise<void> {
  m.desired = false;
  if (m.timer !== undefined) ctx.timers.clearTimeout(m.timer);
  m.timer = undefined;
  ctx.members.delete(m.agentId);
  const conn = m.conn;
  m.conn = undefined;
  if (conn && !conn.closed) {
    conn.close(1000, 'disconnect');
    await conn.done;
  }
}
