/**
 * @module hub/mesh/claim — a socket's `hello` and the claim of its name: the hello is checked
 * (protocol, token, names, resume secret, recovery position), the name is taken here or over from
 * another hub with its resume secret, the others hear `presence_joined`, and the socket gets
 * `claimed` with what it missed since its last position, then the deliveries held meanwhile.
 */

import { PROTOCOL_VERSION } from '../../lib/mesh/limits.ts';
import { isProjectName, isRosterName } from '../../lib/mesh/names.ts';
import type { StreamHead } from '../../lib/mesh/store.ts';
import type { ClientFrame, MeshMessage, Recovery, StreamPosition } from '../../lib/mesh/wire.ts';
import { frameOf, offer } from './deliver.ts';
import { leave, takeOver } from './departures.ts';
import { peersOf, tellRoster, toProject } from './project-view.ts';
import type { RealtimeContext } from './realtime-context.ts';
import { newResumeSecret, peerOf, resumeSecretMatches, type Presence } from './roster.ts';
import type { WS } from './socket-out.ts';

/** Reads the optional `recover` of a hello; undefined when absent, a string when malformed. */
function readRecover(v: unknown): StreamPosition | undefined | string {
  if (v === undefined || v === null) return undefined;
  const r = v as Record<string, unknown>;
  if (
    typeof v !== 'object' ||
    typeof r.epoch !== 'string' ||
    r.epoch.length > 64 ||
    !Number.isSafeInteger(r.since) ||
    (r.since as number) < 0
  )
    return 'recover must be {epoch: string, since: integer >= 0}';
  return { epoch: r.epoch, since: r.since as number };
}

/** Why a hello cannot claim, or undefined when it may try. */
function helloRefusal(
  ctx: RealtimeContext,
  ws: WS,
  f: Extract<ClientFrame, { type: 'hello' }>,
): { code: 'protocol_mismatch' | 'claim_rejected'; message: string } | undefined {
  if (f.protocolVersion !== PROTOCOL_VERSION)
    return {
      code: 'protocol_mismatch',
      message: `hub speaks protocol ${PROTOCOL_VERSION}, client sent ${JSON.stringify(f.protocolVersion)}`,
    };
  const rejected = (message: string) => ({ code: 'claim_rejected' as const, message });
  if (!ctx.admit(ws, f.token)) return rejected('join token missing or wrong');
  if (!isProjectName(f.project)) return rejected('project is not a valid project name');
  if (!isRosterName(f.name)) return rejected('name must match ^[a-zA-Z0-9][a-zA-Z0-9._-]{0,31}$');
  if (
    f.resume !== undefined &&
    (typeof f.resume !== 'string' || f.resume.length === 0 || f.resume.length > 128)
  )
    return rejected('resume must be the resume secret string from an earlier claim');
  return undefined;
}

/**
 * Checks a hello, then claims (waiting for the store and the cluster); frames sent meanwhile are
 * handed to `handle` after it.
 */
export function hello(
  ctx: RealtimeContext,
  ws: WS,
  f: Extract<ClientFrame, { type: 'hello' }>,
  handle: (ws: WS, raw: string | Buffer) => void,
): void {
  const refused = helloRefusal(ctx, ws, f);
  if (refused) return ctx.io.refuse(ws, refused.code, refused.message);
  // A presence that speaks for nobody (an agent's): its messages carry no principal.
  if (f.anonymous === true) ws.data.principal = undefined;
  const recover = readRecover(f.recover);
  if (typeof recover === 'string') return ctx.io.refuse(ws, 'claim_rejected', recover);
  ws.data.early = [];
  claim(ctx, ws, f.project as string, f.name as string, f.resume as string | undefined, recover)
    .catch((e) => {
      ctx.log('error', 'mesh: a claim failed', {
        project: String(f.project),
        name: String(f.name),
        error: String(e),
      });
      const p = ws.data.presence;
      if (p) {
        ws.data.presence = undefined;
        leave(ctx, p);
      }
      ctx.io.refuse(ws, 'claim_rejected', 'the hub could not record the claim; try again');
    })
    .finally(() => {
      const early = ws.data.early ?? [];
      ws.data.early = undefined;
      if (ws.data.presence && !ws.data.closing) for (const raw of early) handle(ws, raw);
    });
}

/**
 * Takes the name for this socket: a new presence when nobody holds it, the live one (here or on
 * another hub) when the resume secret matches. Undefined when refused (the socket is told) or
 * when the socket closed meanwhile. `resumeSecret` is set for a new presence only.
 */
async function takeName(
  ctx: RealtimeContext,
  ws: WS,
  project: string,
  name: string,
  resume: string | undefined,
): Promise<{ p: Presence; resumeSecret?: string } | undefined> {
  const { roster, cluster } = ctx;
  const taken = () => {
    ctx.io.refuse(ws, 'name_in_use', `name ${name} is already present in project ${project}`);
    return undefined;
  };
  const matches = (hash: Buffer) => typeof resume === 'string' && resumeSecretMatches(hash, resume);
  const held = roster.get(project, name);
  if (held) {
    // Only the holder of the secret given at claim may take a live name over (its old socket may be half-open).
    if (!matches(held.resumeHash)) return taken();
    takeOver(ctx, held, ws);
    return { p: held };
  }
  const secret = newResumeSecret();
  const presenceId = crypto.randomUUID();
  const joinedAt = ctx.now();
  const r = await cluster.claim({ project, name, presenceId, joinedAt, resumeHash: secret.hash });
  if (r.claimed) {
    const p = ws.data.closing
      ? undefined
      : roster.claim(project, name, presenceId, ws, joinedAt, secret.hash);
    if (!p) {
      cluster.release(project, name, presenceId, 'connection_closed');
      return taken();
    }
    return { p, resumeSecret: secret.secret };
  }
  // The name is held on another hub (or was claimed here meanwhile): the resume secret takes it over.
  const { holder } = r;
  if (!matches(holder.resumeHash)) return taken();
  const here = roster.get(project, name);
  if (here) {
    if (here.presenceId !== holder.presenceId) return taken();
    takeOver(ctx, here, ws);
    return { p: here };
  }
  if (!(await cluster.takeOver(project, name, holder.presenceId))) return taken();
  const p = ws.data.closing
    ? undefined
    : roster.claim(project, name, holder.presenceId, ws, holder.joinedAt, holder.resumeHash);
  if (!p) cluster.release(project, name, holder.presenceId, 'connection_closed');
  return p && { p };
}

async function claim(
  ctx: RealtimeContext,
  ws: WS,
  project: string,
  name: string,
  resume: string | undefined,
  recover: StreamPosition | undefined,
): Promise<void> {
  const { store, cluster, limits } = ctx;
  if (!(await store.hasProject(project)))
    return ctx.io.refuse(ws, 'unknown_project', `project ${project} does not exist`);
  if (ws.data.closing) return;
  const took = await takeName(ctx, ws, project, name, resume);
  if (!took) return;
  const { p, resumeSecret } = took;
  if (ws.data.helloTimer) ctx.timers.clearTimeout(ws.data.helloTimer);
  ws.data.presence = p;
  const resumed = resumeSecret === undefined;
  if (!resumed) {
    toProject(ctx, project, { type: 'presence_joined', peer: peerOf(p) }, p);
    tellRoster(ctx, project);
  }
  const [head] = await Promise.all([store.position(project), cluster.refresh(project)]);
  if (!head) throw new Error(`project ${project} was deleted during the claim`);
  ctx.stream.follow(project, head.sequence);
  if (!resumed) p.liveAfter(head.sequence);
  const replay = recover ? await recoverFor(ctx, p, recover, head) : undefined;
  if (ws.data.closing || p.ws !== ws) return;
  ctx.io.send(ws, {
    type: 'claimed',
    protocolVersion: PROTOCOL_VERSION,
    project,
    self: peerOf(p),
    peers: peersOf(ctx, project)
      .filter((q) => q.presenceId !== p.presenceId)
      .map((q) => ({ name: q.name, presenceId: q.presenceId })),
    epoch: head.epoch,
    sequence: head.sequence,
    heartbeatMs: limits.heartbeatMs,
    heartbeatMisses: limits.heartbeatMisses,
    resumed,
    ...(resumeSecret ? { resumeSecret } : {}),
    ...(replay ? { recovery: replay.recovery } : {}),
  });
  for (const m of replay?.messages ?? []) {
    // Acknowledgements of replayed messages reach their sender like live ones.
    p.awaitAck(m);
    ctx.io.send(ws, { type: 'message', message: m });
  }
  for (const m of p.markReady()) offer(ctx, p, m, frameOf(m));
  ctx.log('info', resumed ? 'mesh: presence resumed' : 'mesh: presence joined', {
    project,
    name,
    replayed: replay?.messages.length ?? 0,
  });
}

/**
 * What a (re)claiming presence missed since its last handled sequence, within the recovery limit.
 * A different epoch means the project was recreated: its whole new stream counts as missed and the
 * recovery is partial by definition.
 */
async function recoverFor(
  ctx: RealtimeContext,
  p: Presence,
  from: StreamPosition,
  head: StreamHead,
): Promise<{ recovery: Recovery; messages: MeshMessage[] }> {
  const sameStream = from.epoch === head.epoch && from.since <= head.sequence;
  const since = sameStream ? from.since : 0;
  const missed = await ctx.store.missed(p.project, p.name, since, ctx.limits.recoveryMaxMessages);
  // Live deliveries up to the head are in the replay; skip them.
  p.liveAfter(head.sequence);
  return {
    recovery: {
      recovered: sameStream && missed.complete,
      since,
      replayed: missed.messages.length,
    },
    messages: missed.messages,
  };
}
