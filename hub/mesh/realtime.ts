/**
 * @module hub/mesh/realtime — the `/v1/connect` protocol on the hub: hello and claim (with resume
 * and recovery of missed messages), presence frames, direct and broadcast sends through the store,
 * delivery outcomes, heartbeat and limits.
 */

import type { ServerWebSocket } from 'bun';
import type { Log } from '../../lib/log.ts';
import type { MeshError, WireCode } from '../../lib/mesh/errors.ts';
import { PROTOCOL_VERSION, type MeshLimits } from '../../lib/mesh/limits.ts';
import { isProjectName, isRosterName } from '../../lib/mesh/names.ts';
import type { AppendCode, MeshStore } from '../../lib/mesh/store.ts';
import { parseClientFrame, type ClientFrame, type MeshMessage, type Recovery, type ServerFrame, type StreamPosition, type Target } from '../../lib/mesh/wire.ts';
import { createRoster, newResumeSecret, peerOf, resumeSecretMatches, type MeshSocketData, type Presence } from './roster.ts';
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
  limits: MeshLimits;
  timers: Timers;
}

export type Realtime = ReturnType<typeof createRealtime>;

/** What a watcher of a project (the console) hears: the roster after each change, and each new message. */
export type ProjectEvent =
  | { type: 'roster'; peers: { name: string; presenceId: string; joinedAt: number }[] }
  | { type: 'message'; message: MeshMessage };

export function createRealtime(opts: RealtimeOptions) {
  const { store, log, now, limits, timers } = opts;
  const roster = createRoster();
  const watchers = new Map<string, Set<(e: ProjectEvent) => void>>();
  const rosterOf = (project: string): ProjectEvent => ({ type: 'roster', peers: roster.list(project).map((p) => ({ name: p.name, presenceId: p.presenceId, joinedAt: p.joinedAt })) });
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
   * A socket whose reader fell more than `maxSocketBufferedBytes` behind: its presence leaves with
   * `slow_consumer`, the socket gets close 1008 `slow_consumer` behind what it has, and is cut for
   * good if it does not take even that within the hello timeout.
   */
  const cutSlowConsumer = (ws: WS) => {
    ws.data.closing = true;
    const p = ws.data.presence;
    log('warn', 'mesh: slow consumer cut', { project: p?.project, name: p?.name, buffered: ws.getBufferedAmount() });
    if (p) {
      p.leaveReason = 'slow_consumer';
      leave(p);
    }
    ws.close(1008, 'slow_consumer');
    timers.setTimeout(() => ws.readyState !== 3 && ws.terminate(), limits.helloTimeoutMs);
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
  /** Writes what is queued for one socket now (before closing it). */
  const flushSocket = (ws: WS) => {
    const q = outbox.get(ws);
    outbox.delete(ws);
    if (q) writeOut(ws, q);
  };
  const send = (ws: WS, frame: ServerFrame): void => out(ws, JSON.stringify(frame));
  const sendTo = (presenceId: string, frame: ServerFrame): void => {
    const p = roster.byId(presenceId);
    if (p?.open) send(p.ws, frame);
  };
  const error = (ws: WS, code: WireCode, message: string, requestId?: string): void =>
    send(ws, requestId === undefined ? { type: 'error', code, message } : { type: 'error', code, message, requestId });

  /** Refuses a socket before or at claim: an error frame, then close 1008 with the code as the reason. */
  function refuse(ws: WS, code: WireCode, message: string): void {
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
    if (typeof v !== 'object' || typeof r.epoch !== 'string' || r.epoch.length > 64 || !Number.isSafeInteger(r.since) || (r.since as number) < 0)
      return 'recover must be {epoch: string, since: integer >= 0}';
    return { epoch: r.epoch, since: r.since as number };
  }

  function hello(ws: WS, f: Extract<ClientFrame, { type: 'hello' }>): void {
    if (f.protocolVersion !== PROTOCOL_VERSION)
      return refuse(ws, 'protocol_mismatch', `hub speaks protocol ${PROTOCOL_VERSION}, client sent ${JSON.stringify(f.protocolVersion)}`);
    if (!tokenAccepted(opts.token, f.token)) return refuse(ws, 'claim_rejected', 'join token missing or wrong');
    if (!isProjectName(f.project)) return refuse(ws, 'claim_rejected', 'project is not a valid project name');
    if (!isRosterName(f.name)) return refuse(ws, 'claim_rejected', 'name must match ^[a-zA-Z0-9][a-zA-Z0-9._-]{0,31}$');
    if (f.resume !== undefined && (typeof f.resume !== 'string' || f.resume.length === 0 || f.resume.length > 128))
      return refuse(ws, 'claim_rejected', 'resume must be the resume secret string from an earlier claim');
    const recover = readRecover(f.recover);
    if (typeof recover === 'string') return refuse(ws, 'claim_rejected', recover);
    if (!store.hasProject(f.project)) return refuse(ws, 'unknown_project', `project ${f.project} does not exist`);
    const held = roster.get(f.project, f.name);
    let p: Presence;
    let resumeSecret: string | undefined;
    if (held) {
      // Only the holder of the secret given at claim may take a live name over (its old socket may be half-open).
      if (typeof f.resume !== 'string' || !resumeSecretMatches(held.resumeHash, f.resume))
        return refuse(ws, 'name_in_use', `name ${f.name} is already present in project ${f.project}`);
      p = held;
      takeOver(p, ws);
    } else {
      const secret = newResumeSecret();
      p = roster.claim(f.project, f.name, ws, now(), secret.hash)!;
      resumeSecret = secret.secret;
    }
    if (ws.data.helloTimer) timers.clearTimeout(ws.data.helloTimer);
    ws.data.presence = p;
    const resumed = resumeSecret === undefined;
    const position = store.position(p.project)!;
    const peers = roster.list(p.project).filter((q) => q !== p).map(peerOf);
    const replay = recover ? recoverFor(p, recover, position) : undefined;
    send(ws, {
      type: 'claimed',
      protocolVersion: PROTOCOL_VERSION,
      project: p.project,
      self: peerOf(p),
      peers,
      epoch: position.epoch,
      sequence: position.sequence,
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
    if (resumed) {
      log('info', 'mesh: presence resumed', { project: p.project, name: p.name, replayed: replay?.messages.length ?? 0 });
      return;
    }
    tellWatchers(p.project, () => rosterOf(p.project));
    const joined = JSON.stringify({ type: 'presence_joined', peer: peerOf(p) } satisfies ServerFrame);
    for (const other of roster.list(p.project)) if (other !== p) out(other.ws, joined);
    log('info', 'mesh: presence joined', { project: p.project, name: p.name, replayed: replay?.messages.length ?? 0 });
  }

  /** Moves a live presence onto a new socket; the old one is cut without a departure (the presence goes on). */
  function takeOver(p: Presence, ws: WS): void {
    const old = p.ws;
    old.data.presence = undefined;
    old.data.closing = true;
    outbox.delete(old);
    old.terminate();
    p.ws = ws;
    p.missed = 0;
  }

  /**
   * What a (re)claiming presence missed since its last handled sequence, within the recovery limit.
   * A different epoch means the project was recreated: its whole new stream counts as missed and the
   * recovery is partial by definition.
   */
  function recoverFor(p: Presence, from: StreamPosition, head: { epoch: string; sequence: number }): { recovery: Recovery; messages: MeshMessage[] } {
    const sameStream = from.epoch === head.epoch && from.since <= head.sequence;
    const since = sameStream ? from.since : 0;
    const missed = store.missed(p.project, p.name, since, limits.recoveryMaxMessages);
    // Live deliveries still in flight to this presence were committed above and are replayed; skip them.
    p.replayedThrough = head.sequence;
    return { recovery: { recovered: sameStream && missed.complete, since, replayed: missed.messages.length }, messages: missed.messages };
  }

  function sendMessage(p: Presence, f: Extract<ClientFrame, { type: 'message' }>): void {
    const rid = f.requestId;
    const t = f.target as Record<string, unknown> | null;
    let target: Target;
    let recipients: Presence[];
    let admit: (() => MeshError<AppendCode> | undefined) | undefined;
    if (t && typeof t === 'object' && t.type === 'agent' && typeof t.name === 'string') {
      const name = t.name;
      if (name === p.name) return error(p.ws, 'message_rejected', 'cannot send to yourself', rid);
      // Resolve the recipient's current presence before appending; a later joiner of that name is another presence.
      const r = roster.get(p.project, name);
      target = r ? { type: 'agent', name, presenceId: r.presenceId } : { type: 'agent', name };
      recipients = r ? [r] : [];
      admit = () => (r ? undefined : { code: 'recipient_not_present', message: `${name} is not present in project ${p.project}` });
    } else if (t && typeof t === 'object' && t.type === 'project') {
      target = { type: 'project' };
      // The broadcast's recipients are frozen now: later joiners never receive it.
      recipients = roster.list(p.project).filter((q) => q !== p);
    } else return error(p.ws, 'message_rejected', 'target must be {type:"agent", name} or {type:"project"}', rid);
    const draft = { project: p.project, from: peerOf(p), messageId: f.messageId, target, payload: f.payload, attachments: f.attachments, replyTo: f.replyTo };
    store.append(draft, admit).then((r) => {
      if (!r.ok) return p.open && error(p.ws, r.error.code, r.error.message, rid);
      const { message, replayed } = r.result;
      if (replayed) {
        // Nothing is redelivered on an identical retry, so nobody is named as a recipient.
        if (p.open) send(p.ws, { type: 'accepted', requestId: rid, message, recipients: [], replayed: true });
        return;
      }
      if (p.open) send(p.ws, { type: 'accepted', requestId: rid, message, recipients: recipients.map((q) => q.name) });
      tellWatchers(message.project, () => ({ type: 'message', message }));
      const text = JSON.stringify({ type: 'message', message } satisfies ServerFrame);
      for (const q of recipients) {
        if (q.open && message.sequence <= q.replayedThrough) continue;
        if (q.open) {
          q.inbound.set(message.messageId, p.presenceId);
          out(q.ws, text);
        } else sendTo(p.presenceId, { type: 'delivery', messageId: message.messageId, to: q.name, status: 'disconnected' });
      }
    });
  }

  function acknowledge(p: Presence, f: Extract<ClientFrame, { type: 'delivered' | 'delivery_failed' }>): void {
    const sender = p.inbound.get(f.messageId);
    if (sender === undefined) return error(p.ws, 'invalid_frame', `no delivery of ${f.messageId} is waiting for an acknowledgement`);
    p.inbound.delete(f.messageId);
    // If the sender has gone, the outcome is dropped.
    if (f.type === 'delivered') sendTo(sender, { type: 'delivery', messageId: f.messageId, to: p.name, status: 'delivered' });
    else sendTo(sender, { type: 'delivery', messageId: f.messageId, to: p.name, status: 'failed', error: f.error });
  }

  let heartbeat: ReturnType<typeof setInterval> | undefined = timers.setInterval(() => tick(), limits.heartbeatMs);

  const pingFrame = JSON.stringify({ type: 'ping' } satisfies ServerFrame);

  /**
   * One heartbeat round. Each presence gets a WebSocket ping (answered by every client's WebSocket
   * layer) and a `ping` frame (which lets clients see the hub is alive); one that left
   * `heartbeatMisses` pings in a row unanswered is cut and leaves with `heartbeat_timeout`.
   */
  function tick(): void {
    for (const p of roster.all()) {
      if (p.missed >= limits.heartbeatMisses) {
        p.leaveReason = 'heartbeat_timeout';
        log('info', 'mesh: heartbeat timeout', { project: p.project, name: p.name, missed: p.missed });
        p.ws.data.closing = true;
        outbox.delete(p.ws);
        p.ws.terminate();
        leave(p);
        continue;
      }
      p.missed++;
      p.ws.ping();
      out(p.ws, pingFrame);
    }
  }

  /** Removes a presence (once): pending deliveries become `disconnected`, the others see `presence_left`. */
  function leave(p: Presence): void {
    if (!p.open) return;
    roster.remove(p);
    for (const [messageId, sender] of p.inbound) sendTo(sender, { type: 'delivery', messageId, to: p.name, status: 'disconnected' });
    p.inbound.clear();
    const left = JSON.stringify({ type: 'presence_left', peer: peerOf(p), reason: p.leaveReason ?? 'connection_closed' } satisfies ServerFrame);
    for (const other of roster.list(p.project)) out(other.ws, left);
    tellWatchers(p.project, () => rosterOf(p.project));
    log('info', 'mesh: presence left', { project: p.project, name: p.name, reason: p.leaveReason ?? 'connection_closed' });
  }

  return {
    roster,
    tick,
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
    message(ws: WS, raw: string | Buffer): void {
      if (ws.data.closing) return;
      const p = ws.data.presence;
      const bad = (code: WireCode, message: string) => (p ? error(ws, code, message) : refuse(ws, code, message));
      if (typeof raw !== 'string') return bad('invalid_frame', 'binary frames are not part of the protocol; send JSON text');
      // Length in UTF-16 units is at most the byte length, so only long strings need the exact count.
      if (raw.length > limits.maxFrameBytes / 3 && Buffer.byteLength(raw) > limits.maxFrameBytes)
        return bad('payload_too_large', `frame is over ${limits.maxFrameBytes} bytes`);
      const parsed = parseClientFrame(raw, limits.maxDeliveryErrorBytes);
      if (!parsed.ok) return bad(parsed.error.code, parsed.error.message);
      const f = parsed.result;
      if (!p) return f.type === 'hello' ? hello(ws, f) : refuse(ws, 'invalid_frame', 'the first frame must be hello');
      if (f.type === 'hello') return error(ws, 'invalid_frame', 'already claimed; hello is only the first frame');
      if (f.type === 'message') return sendMessage(p, f);
      return acknowledge(p, f);
    },
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
