/**
 * @module hub/mesh/realtime — the `/v1/connect` protocol on the hub: hello and claim (with resume
 * and recovery of missed messages), presence frames, direct and broadcast sends through the store,
 * delivery outcomes, heartbeat and limits. Names, presences and deliveries may span several hubs
 * on one database (`cluster`); with one hub the cluster is just this hub.
 */

import type { ServerWebSocket } from 'bun';
import type { Log } from '../../lib/log.ts';
import type { MeshError, WireCode } from '../../lib/mesh/errors.ts';
import { PROTOCOL_VERSION, type MeshLimits } from '../../lib/mesh/limits.ts';
import { isProjectName, isRosterName } from '../../lib/mesh/names.ts';
import type { AppendCode, MeshStore, StreamHead } from '../../lib/mesh/store.ts';
import {
  parseClientFrame,
  type ClientFrame,
  type DeliveryFrame,
  type LeaveReason,
  type MeshMessage,
  type Peer,
  type Recovery,
  type ServerFrame,
  type StreamPosition,
  type Target,
} from '../../lib/mesh/wire.ts';
import { singleHub, type ClusterEvent, type MeshCluster } from './cluster.ts';
import {
  createRoster,
  newResumeSecret,
  peerOf,
  resumeSecretMatches,
  type MeshSocketData,
  type Presence,
} from './roster.ts';
import { createDeliveryStream, type StreamEntry } from './stream.ts';
import { tokenAccepted } from './trust.ts';

type WS = ServerWebSocket<MeshSocketData>;

export interface Timers {
  setTimeout: (fn: () => void, ms: number) => ReturnType<typeof setTimeout>;
  clearTimeout: (t: ReturnType<typeof setTimeout>) => void;
  setInterval: (fn: () => void, ms: number) => ReturnType<typeof setInterval>;
  clearInterval: (t: ReturnType<typeof setInterval>) => void;
}

export const REAL_TIMERS: Timers = Object.freeze({
  setTimeout: (fn: () => void, ms: number) => setTimeout(fn, ms),
  clearTimeout: (t: ReturnType<typeof setTimeout>) => clearTimeout(t),
  setInterval: (fn: () => void, ms: number) => setInterval(fn, ms),
  clearInterval: (t: ReturnType<typeof setInterval>) => clearInterval(t),
});

export interface RealtimeOptions {
  store: MeshStore;
  log: Log;
  now: () => number;
  token?: string;
  /**
   * Whether a `hello` may claim, given its socket and the token it carries; replaces the join-token
   * check when the hub's access policy runs the mesh (hub/http/access.ts).
   */
  admit?: (ws: WS, token: unknown) => boolean;
  limits: MeshLimits;
  timers: Timers;
  /** The other hubs on the same database; defaults to this hub alone. */
  cluster?: MeshCluster;
}

/** What this hub knew of a message it sent: the local recipients it chose (for `disconnected` outcomes). */
interface LocalSend {
  frozen: Presence[];
}

/** Frames that may arrive while a hello is answered, and deliveries that may wait for a claim, are bounded. */
const MAX_EARLY_FRAMES = 64;
const MAX_BACKLOG = 10_000;

export type Realtime = ReturnType<typeof createRealtime>;

/** What a watcher of a project (the console) hears: the roster after each change, and each new message. */
export type ProjectEvent =
  | { type: 'roster'; peers: { name: string; presenceId: string; joinedAt: number }[] }
  | { type: 'message'; message: MeshMessage };

export function createRealtime(opts: RealtimeOptions) {
  const { store, log, now, limits, timers } = opts;
  const cluster = opts.cluster ?? singleHub();
  const roster = createRoster();
  const watchers = new Map<string, Set<(e: ProjectEvent) => void>>();
  const rosterOf = (project: string): ProjectEvent => ({ type: 'roster', peers: peersOf(project) });
  const tellWatchers = (project: string, event: () => ProjectEvent) => {
    const set = watchers.get(project);
    if (!set?.size) return;
    const e = event();
    for (const fn of [...set]) fn(e);
  };
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
  /**
   * The end of a socket closed behind what it still has to take: cut for good when its reader takes
   * none of it (or, all taken, sends no close reply) for as long as the heartbeat takes to declare a
   * presence dead (`heartbeatMs` x `heartbeatMisses`). A reader still working through its backlog
   * gets another period, however slow the machine: cutting it mid-backlog would lose the close frame
   * it is about to read. The bytes it holds meanwhile stay under `maxSocketBufferedBytes`.
   */
  const endWhenIdle = (ws: WS, buffered: number) =>
    timers.setTimeout(() => {
      if (ws.readyState === 3) return;
      const now = ws.getBufferedAmount();
      if (now > 0 && now < buffered) endWhenIdle(ws, now);
      else ws.terminate();
    }, limits.heartbeatMs * limits.heartbeatMisses);
  /**
   * A socket whose reader fell more than `maxSocketBufferedBytes` behind: its presence leaves with
   * `slow_consumer`, the socket gets close 1008 `slow_consumer` behind what it has (nothing more is
   * written to it), and is cut for good if its reader stops taking that (`endWhenIdle`).
   */
  const cutSlowConsumer = (ws: WS) => {
    ws.data.closing = true;
    const p = ws.data.presence;
    log('warn', 'mesh: slow consumer cut', {
      project: p?.project,
      name: p?.name,
      buffered: ws.getBufferedAmount(),
    });
    if (p) {
      p.leaveReason = 'slow_consumer';
      leave(p);
    }
    ws.close(1008, 'slow_consumer');
    endWhenIdle(ws, ws.getBufferedAmount());
  };
  const flushOutbox = () => {
    outboxScheduled = false;
    const all = [...outbox];
    outbox.clear();
    for (const [ws, frames] of all) writeOut(ws, frames);
  };
  const out = (ws: WS, text: string): void => {
    const q = outbox.get(ws);
    if (q) q.push(text);
    else outbox.set(ws, [text]);
    if (!outboxScheduled) {
      outboxScheduled = true;
      setImmediate(flushOutbox);
    }
  };
  /** Cuts a socket at once: what is queued for it is discarded and nothing more is handled from it. */
  const drop = (ws: WS) => {
    ws.data.closing = true;
    outbox.delete(ws);
    ws.terminate();
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

  /** A delivery outcome to its sender, on this hub or (through the cluster) on another. */
  function outcome(senderPresenceId: string, frame: DeliveryFrame): void {
    const p = roster.byId(senderPresenceId);
    if (p) {
      if (p.open) send(p.ws, frame);
    } else cluster.deliver(senderPresenceId, frame);
  }

  /** Presence frames go to presences whose `claimed` was sent; a claim in progress gets the roster in `claimed` itself. */
  function toProject(project: string, frame: ServerFrame, except?: Presence): void {
    const text = JSON.stringify(frame);
    for (const q of roster.list(project)) if (q !== except && q.ready) out(q.ws, text);
  }

  /** Everyone present in a project, on this hub and on the others, in join order. */
  function peersOf(project: string): (Peer & { joinedAt: number })[] {
    const local = roster
      .list(project)
      .map((p) => ({ name: p.name, presenceId: p.presenceId, joinedAt: p.joinedAt }));
    const remote = cluster
      .remote(project)
      .map((p) => ({ name: p.name, presenceId: p.presenceId, joinedAt: p.joinedAt }));
    // A presence that moved here from another hub joined earlier than its place in the local roster says.
    return [...local, ...remote].sort((a, b) => a.joinedAt - b.joinedAt);
  }

  /**
   * Offers a committed message to one presence: held while its claim is answered, skipped when its
   * claim or recovery covered it. `frame` encodes the `message` frame (once, for all its recipients).
   */
  function offer(q: Presence, m: MeshMessage, frame: () => string): void {
    if (!q.open) return;
    if (!q.ready) {
      if (q.backlog.length < MAX_BACKLOG) q.backlog.push(m);
      else cut(q, 'heartbeat_timeout', 'backlog overflow');
      return;
    }
    if (m.sequence <= q.liveAfter) return;
    q.inbound.set(m.messageId, m.from.presenceId);
    out(q.ws, frame());
  }
  /** The `message` frame of a message whose JSON is at hand. */
  const messageFrame = (json: string): string => `{"type":"message","message":${json}}`;
  const frameOf = (m: MeshMessage) => () => messageFrame(JSON.stringify(m));

  /**
   * Delivers one committed message on this hub (the stream calls this in sequence order): a
   * broadcast to every presence here but its sender, a direct message to its recipient's presence
   * if it is here. A recipient this hub chose at send time that has left hears `disconnected`.
   */
  function deliver(e: StreamEntry<LocalSend>): void {
    const m = e.message;
    tellWatchers(m.project, () => ({ type: 'message', message: m }));
    // Encoded only when someone here receives it; a message this hub sent is not encoded again.
    let text: string | undefined;
    const frame = () => (text ??= messageFrame(e.json ?? JSON.stringify(m)));
    if (m.target.type === 'project') {
      for (const q of roster.list(m.project))
        if (q.presenceId !== m.from.presenceId) offer(q, m, frame);
    } else if (m.target.presenceId) {
      const q = roster.byId(m.target.presenceId);
      if (q && q.project === m.project) offer(q, m, frame);
    }
    for (const q of e.local?.frozen ?? [])
      if (!q.open)
        outcome(m.from.presenceId, {
          type: 'delivery',
          messageId: m.messageId,
          to: q.name,
          status: 'disconnected',
        });
  }

  const stream = createDeliveryStream<LocalSend>({
    store,
    log,
    deliver,
    presenceIds: (project) => roster.list(project).map((p) => p.presenceId),
  });

  /** Refuses a socket before or at claim: an error frame, then close 1008 with the code as the reason. */
  function refuse(ws: WS, code: WireCode, message: string): void {
    if (ws.data.closing) return;
    error(ws, code, message);
    flushSocket(ws);
    ws.data.closing = true;
    if (ws.data.helloTimer) timers.clearTimeout(ws.data.helloTimer);
    ws.close(1008, code);
  }

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

  /** Checks a hello, then claims (waiting for the store and the cluster); frames sent meanwhile are handled after it. */
  function hello(ws: WS, f: Extract<ClientFrame, { type: 'hello' }>): void {
    if (f.protocolVersion !== PROTOCOL_VERSION)
      return refuse(
        ws,
        'protocol_mismatch',
        `hub speaks protocol ${PROTOCOL_VERSION}, client sent ${JSON.stringify(f.protocolVersion)}`,
      );
    const admitted = opts.admit ? opts.admit(ws, f.token) : tokenAccepted(opts.token, f.token);
    if (!admitted) return refuse(ws, 'claim_rejected', 'join token missing or wrong');
    if (!isProjectName(f.project))
      return refuse(ws, 'claim_rejected', 'project is not a valid project name');
    if (!isRosterName(f.name))
      return refuse(ws, 'claim_rejected', 'name must match ^[a-zA-Z0-9][a-zA-Z0-9._-]{0,31}$');
    if (
      f.resume !== undefined &&
      (typeof f.resume !== 'string' || f.resume.length === 0 || f.resume.length > 128)
    )
      return refuse(
        ws,
        'claim_rejected',
        'resume must be the resume secret string from an earlier claim',
      );
    const recover = readRecover(f.recover);
    if (typeof recover === 'string') return refuse(ws, 'claim_rejected', recover);
    ws.data.early = [];
    claim(ws, f.project as string, f.name as string, f.resume as string | undefined, recover)
      .catch((e) => {
        log('error', 'mesh: a claim failed', {
          project: String(f.project),
          name: String(f.name),
          error: String(e),
        });
        const p = ws.data.presence;
        if (p) {
          ws.data.presence = undefined;
          leave(p);
        }
        refuse(ws, 'claim_rejected', 'the hub could not record the claim; try again');
      })
      .finally(() => {
        const early = ws.data.early ?? [];
        ws.data.early = undefined;
        if (ws.data.presence && !ws.data.closing) for (const raw of early) handleFrame(ws, raw);
      });
  }

  async function claim(
    ws: WS,
    project: string,
    name: string,
    resume: string | undefined,
    recover: StreamPosition | undefined,
  ): Promise<void> {
    if (!(await store.hasProject(project)))
      return refuse(ws, 'unknown_project', `project ${project} does not exist`);
    if (ws.data.closing) return;
    const taken = () =>
      refuse(ws, 'name_in_use', `name ${name} is already present in project ${project}`);
    const matches = (hash: Buffer) =>
      typeof resume === 'string' && resumeSecretMatches(hash, resume);
    let p: Presence | undefined;
    let resumeSecret: string | undefined;
    const held = roster.get(project, name);
    if (held) {
      // Only the holder of the secret given at claim may take a live name over (its old socket may be half-open).
      if (!matches(held.resumeHash)) return taken();
      p = held;
      takeOver(p, ws);
    } else {
      const secret = newResumeSecret();
      const presenceId = crypto.randomUUID();
      const joinedAt = now();
      const r = await cluster.claim({
        project,
        name,
        presenceId,
        joinedAt,
        resumeHash: secret.hash,
      });
      if (r.claimed) {
        p = ws.data.closing
          ? undefined
          : roster.claim(project, name, presenceId, ws, joinedAt, secret.hash);
        if (!p) {
          cluster.release(project, name, presenceId, 'connection_closed');
          return taken();
        }
        resumeSecret = secret.secret;
      } else {
        // The name is held on another hub (or was claimed here meanwhile): the resume secret takes it over.
        const { holder } = r;
        if (!matches(holder.resumeHash)) return taken();
        const here = roster.get(project, name);
        if (here) {
          if (here.presenceId !== holder.presenceId) return taken();
          p = here;
          takeOver(p, ws);
        } else {
          if (!(await cluster.takeOver(project, name, holder.presenceId))) return taken();
          p = ws.data.closing
            ? undefined
            : roster.claim(
                project,
                name,
                holder.presenceId,
                ws,
                holder.joinedAt,
                holder.resumeHash,
              );
          if (!p) return cluster.release(project, name, holder.presenceId, 'connection_closed');
        }
      }
    }
    if (ws.data.helloTimer) timers.clearTimeout(ws.data.helloTimer);
    ws.data.presence = p;
    const resumed = resumeSecret === undefined;
    if (!resumed) {
      toProject(project, { type: 'presence_joined', peer: peerOf(p) }, p);
      tellWatchers(project, () => rosterOf(project));
    }
    const [head] = await Promise.all([store.position(project), cluster.refresh(project)]);
    if (!head) throw new Error(`project ${project} was deleted during the claim`);
    stream.follow(project, head.sequence);
    if (!resumed) p.liveAfter = head.sequence;
    const replay = recover ? await recoverFor(p, recover, head) : undefined;
    if (ws.data.closing || p.ws !== ws) return;
    send(ws, {
      type: 'claimed',
      protocolVersion: PROTOCOL_VERSION,
      project,
      self: peerOf(p),
      peers: peersOf(project)
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
      p.inbound.set(m.messageId, m.from.presenceId);
      send(ws, { type: 'message', message: m });
    }
    p.ready = true;
    const backlog = p.backlog;
    p.backlog = [];
    for (const m of backlog) offer(p, m, frameOf(m));
    log('info', resumed ? 'mesh: presence resumed' : 'mesh: presence joined', {
      project,
      name,
      replayed: replay?.messages.length ?? 0,
    });
  }

  /** Moves a live presence onto a new socket; the old one is cut without a departure (the presence goes on). */
  function takeOver(p: Presence, ws: WS): void {
    p.ws.data.presence = undefined;
    drop(p.ws);
    p.ws = ws;
    p.missed = 0;
    // Deliveries wait until the new socket has its `claimed`.
    p.ready = false;
  }

  /**
   * What a (re)claiming presence missed since its last handled sequence, within the recovery limit.
   * A different epoch means the project was recreated: its whole new stream counts as missed and the
   * recovery is partial by definition.
   */
  async function recoverFor(
    p: Presence,
    from: StreamPosition,
    head: StreamHead,
  ): Promise<{ recovery: Recovery; messages: MeshMessage[] }> {
    const sameStream = from.epoch === head.epoch && from.since <= head.sequence;
    const since = sameStream ? from.since : 0;
    const missed = await store.missed(p.project, p.name, since, limits.recoveryMaxMessages);
    // Live deliveries up to the head are in the replay; skip them.
    p.liveAfter = head.sequence;
    return {
      recovery: {
        recovered: sameStream && missed.complete,
        since,
        replayed: missed.messages.length,
      },
      messages: missed.messages,
    };
  }

  /** Sends one message; a send that must first read the cluster's roster holds the sender's later sends behind it. */
  function sendMessage(p: Presence, f: Extract<ClientFrame, { type: 'message' }>): void {
    const run = p.sending ? p.sending.then(() => sendNow(p, f)) : sendNow(p, f);
    if (!run) return;
    p.sending = run;
    void run.then(() => {
      if (p.sending === run) p.sending = undefined;
    });
  }

  /** Resolves the target, appends, answers `accepted` and hands the commit to the stream; a promise when it must read the roster first. */
  function sendNow(
    p: Presence,
    f: Extract<ClientFrame, { type: 'message' }>,
    refreshed = false,
  ): Promise<void> | undefined {
    if (!p.open) return undefined;
    const rid = f.requestId;
    const t = f.target as Record<string, unknown> | null;
    let target: Target;
    let names: string[];
    let frozen: Presence[];
    let admit: (() => MeshError<AppendCode> | undefined) | undefined;
    if (t && typeof t === 'object' && t.type === 'agent' && typeof t.name === 'string') {
      const name = t.name;
      if (name === p.name)
        return void error(p.ws, 'message_rejected', 'cannot send to yourself', rid);
      // Resolve the recipient's current presence before appending; a later joiner of that name is another presence.
      const here = roster.get(p.project, name);
      const presenceId = here?.presenceId ?? cluster.remoteByName(p.project, name)?.presenceId;
      if (!presenceId && cluster.shared && !refreshed)
        return cluster.refresh(p.project).then(
          () => sendNow(p, f, true),
          (e) => {
            log('warn', 'mesh: reading the cluster roster failed', {
              project: p.project,
              error: String(e),
            });
            return sendNow(p, f, true);
          },
        );
      target = presenceId ? { type: 'agent', name, presenceId } : { type: 'agent', name };
      names = presenceId ? [name] : [];
      frozen = here ? [here] : [];
      admit = () =>
        presenceId
          ? undefined
          : {
              code: 'recipient_not_present',
              message: `${name} is not present in project ${p.project}`,
            };
    } else if (t && typeof t === 'object' && t.type === 'project') {
      target = { type: 'project' };
      // The broadcast's recipients are taken now: later joiners never receive it.
      frozen = roster.list(p.project).filter((q) => q !== p);
      names = [...frozen.map((q) => q.name), ...cluster.remote(p.project).map((q) => q.name)];
    } else
      return void error(
        p.ws,
        'message_rejected',
        'target must be {type:"agent", name} or {type:"project"}',
        rid,
      );
    const draft = {
      project: p.project,
      from: peerOf(p),
      messageId: f.messageId,
      target,
      payload: f.payload,
      attachments: f.attachments,
      replyTo: f.replyTo,
    };
    store.append(draft, admit).then((r) => {
      if (!r.ok) return p.open && error(p.ws, r.error.code, r.error.message, rid);
      const { message, replayed } = r.result;
      if (replayed) {
        // Nothing is redelivered on an identical retry, so nobody is named as a recipient.
        if (p.open)
          send(p.ws, { type: 'accepted', requestId: rid, message, recipients: [], replayed: true });
        return;
      }
      // The message is encoded once, for this frame and every delivery of it here.
      const json = JSON.stringify(message);
      if (p.open)
        out(
          p.ws,
          `{"type":"accepted","requestId":${JSON.stringify(rid)},"message":${json},"recipients":${JSON.stringify(names)}}`,
        );
      stream.committedHere({ message, local: { frozen }, json });
    });
    return undefined;
  }

  function acknowledge(
    p: Presence,
    f: Extract<ClientFrame, { type: 'delivered' | 'delivery_failed' }>,
  ): void {
    const sender = p.inbound.get(f.messageId);
    if (sender === undefined)
      return error(
        p.ws,
        'invalid_frame',
        `no delivery of ${f.messageId} is waiting for an acknowledgement`,
      );
    p.inbound.delete(f.messageId);
    // If the sender has gone, the outcome is dropped.
    if (f.type === 'delivered')
      outcome(sender, {
        type: 'delivery',
        messageId: f.messageId,
        to: p.name,
        status: 'delivered',
      });
    else
      outcome(sender, {
        type: 'delivery',
        messageId: f.messageId,
        to: p.name,
        status: 'failed',
        error: f.error,
      });
  }

  let heartbeat: ReturnType<typeof setInterval> | undefined = timers.setInterval(
    () => tick(),
    limits.heartbeatMs,
  );

  const pingFrame = JSON.stringify({ type: 'ping' } satisfies ServerFrame);

  /**
   * One heartbeat round. Each presence gets a WebSocket ping (answered by every client's WebSocket
   * layer) and a `ping` frame (which lets clients see the hub is alive); one that left
   * `heartbeatMisses` pings in a row unanswered is cut and leaves with `heartbeat_timeout`.
   */
  function tick(): void {
    for (const p of roster.all()) {
      if (p.missed >= limits.heartbeatMisses) {
        log('info', 'mesh: heartbeat timeout', {
          project: p.project,
          name: p.name,
          missed: p.missed,
        });
        cut(p, 'heartbeat_timeout');
        continue;
      }
      p.missed++;
      p.ws.ping();
      out(p.ws, pingFrame);
    }
  }

  /** Ends a presence from the hub's side: its socket is cut and the others see it leave with `reason`. */
  function cut(p: Presence, reason: LeaveReason, why?: string): void {
    if (why) log('warn', 'mesh: presence cut', { project: p.project, name: p.name, why });
    p.leaveReason = reason;
    drop(p.ws);
    leave(p);
  }

  /** Removes a presence (once): pending deliveries become `disconnected`, the others see `presence_left`, the name is released. */
  function leave(p: Presence): void {
    if (!p.open) return;
    roster.remove(p);
    const reason = p.leaveReason ?? 'connection_closed';
    for (const [messageId, sender] of p.inbound)
      outcome(sender, { type: 'delivery', messageId, to: p.name, status: 'disconnected' });
    p.inbound.clear();
    toProject(p.project, { type: 'presence_left', peer: peerOf(p), reason });
    tellWatchers(p.project, () => rosterOf(p.project));
    cluster.release(p.project, p.name, p.presenceId, reason);
    if (roster.count(p.project) === 0) stream.unfollow(p.project);
    log('info', 'mesh: presence left', { project: p.project, name: p.name, reason });
  }

  /** What the other hubs say: their commits, presences and delivery outcomes. */
  function onCluster(e: ClusterEvent): void {
    switch (e.type) {
      case 'committed':
        return stream.committedElsewhere(e.project, e.sequence);
      case 'joined':
        toProject(e.peer.project, {
          type: 'presence_joined',
          peer: { name: e.peer.name, presenceId: e.peer.presenceId },
        });
        return tellWatchers(e.peer.project, () => rosterOf(e.peer.project));
      case 'left':
        toProject(e.peer.project, {
          type: 'presence_left',
          peer: { name: e.peer.name, presenceId: e.peer.presenceId },
          reason: e.reason,
        });
        return tellWatchers(e.peer.project, () => rosterOf(e.peer.project));
      case 'moved': {
        // Its client resumed on another hub: the old socket here goes without a departure.
        const p = roster.byId(e.peer.presenceId);
        if (!p) return;
        roster.remove(p);
        p.inbound.clear();
        p.ws.data.presence = undefined;
        drop(p.ws);
        if (roster.count(p.project) === 0) stream.unfollow(p.project);
        return;
      }
      case 'swept': {
        const p = roster.byId(e.presenceId);
        if (p)
          cut(p, 'hub_lost', 'its name was released while this hub was cut off from the database');
        return;
      }
      case 'lease_lost':
        for (const p of roster.all()) cut(p, 'hub_lost', 'this hub lost its lease');
        return;
      case 'delivery': {
        const p = roster.byId(e.senderPresenceId);
        if (p?.open) out(p.ws, e.frame);
        return;
      }
      case 'resync':
        for (const project of stream.projects())
          store.position(project).then(
            (h) => h && stream.committedElsewhere(project, h.sequence),
            (err) =>
              log('error', 'mesh: re-reading a stream head failed', {
                project,
                error: String(err),
              }),
          );
        return;
    }
  }
  cluster.onEvent(onCluster);

  function handleFrame(ws: WS, raw: string | Buffer): void {
    if (ws.data.closing) return;
    if (ws.data.early) {
      if (ws.data.early.length >= MAX_EARLY_FRAMES)
        return refuse(ws, 'invalid_frame', 'too many frames before the claim was answered');
      ws.data.early.push(raw);
      return;
    }
    const p = ws.data.presence;
    const bad = (code: WireCode, message: string) =>
      p ? error(ws, code, message) : refuse(ws, code, message);
    if (typeof raw !== 'string')
      return bad('invalid_frame', 'binary frames are not part of the protocol; send JSON text');
    // Length in UTF-16 units is at most the byte length, so only long strings need the exact count.
    if (raw.length > limits.maxFrameBytes / 3 && Buffer.byteLength(raw) > limits.maxFrameBytes)
      return bad('payload_too_large', `frame is over ${limits.maxFrameBytes} bytes`);
    const parsed = parseClientFrame(raw, limits.maxDeliveryErrorBytes);
    if (!parsed.ok) return bad(parsed.error.code, parsed.error.message);
    const f = parsed.result;
    if (!p)
      return f.type === 'hello'
        ? hello(ws, f)
        : refuse(ws, 'invalid_frame', 'the first frame must be hello');
    if (f.type === 'hello')
      return error(ws, 'invalid_frame', 'already claimed; hello is only the first frame');
    if (f.type === 'message') return sendMessage(p, f);
    return acknowledge(p, f);
  }

  return {
    roster,
    cluster,
    tick,
    /** Everyone present in a project across the cluster, in join order. */
    peers: peersOf,
    /** Hears a project's roster (now, and after every change) and its new messages; returns the unsubscribe function. */
    watch(project: string, fn: (e: ProjectEvent) => void): () => void {
      let set = watchers.get(project);
      if (!set) watchers.set(project, (set = new Set()));
      set.add(fn);
      fn(rosterOf(project));
      return () => {
        set.delete(fn);
        if (!set.size && watchers.get(project) === set) watchers.delete(project);
      };
    },
    open(ws: WS): void {
      ws.data.helloTimer = timers.setTimeout(() => {
        if (ws.data.presence || ws.data.closing) return;
        ws.data.closing = true;
        ws.close(1008, 'hello timeout');
      }, limits.helloTimeoutMs);
    },
    message: handleFrame,
    pong(ws: WS): void {
      if (ws.data.presence) ws.data.presence.missed = 0;
    },
    close(ws: WS): void {
      ws.data.closing = true;
      if (ws.data.helloTimer) timers.clearTimeout(ws.data.helloTimer);
      if (ws.data.presence) leave(ws.data.presence);
    },
    /** Ends every presence with `hub_shutdown` and stops the heartbeat. */
    shutdown(): void {
      if (heartbeat) timers.clearInterval(heartbeat);
      heartbeat = undefined;
      const sockets = roster.all().map((p) => p.ws);
      for (const p of roster.all()) {
        p.leaveReason = 'hub_shutdown';
        p.ws.data.closing = true;
        leave(p);
      }
      // Everyone hears the hub_shutdown departures before their own socket closes.
      flushOutbox();
      for (const ws of sockets) ws.close(1001, 'hub_shutdown');
    },
  };
}
