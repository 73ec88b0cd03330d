/**
 * @module hub/mesh/realtime — the `/v1/connect` protocol on the hub: hello and claim (with resume
 * and recovery of missed messages), presence frames, direct and broadcast sends through the store,
 * delivery outcomes, heartbeat and limits. Names, presences and deliveries may span several hubs
 * on one database (`cluster`); with one hub the cluster is just this hub. This file wires the
 * parts (hub/mesh/claim.ts, send.ts, deliver.ts, departures.ts, cluster-events.ts) and reads
 * each socket's frames.
 */

import type { Log } from '../../lib/log.ts';
import type { WireCode } from '../../lib/mesh/errors.ts';
import type { MeshLimits } from '../../lib/mesh/limits.ts';
import type { MeshStore } from '../../lib/mesh/store.ts';
import { parseClientFrame } from '../../lib/mesh/wire.ts';
import { hello } from './claim.ts';
import { singleHub, type MeshCluster } from './cluster.ts';
import { onClusterEvent } from './cluster-events.ts';
import { deliver } from './deliver.ts';
import { heartbeatRound, leave } from './departures.ts';
import { peersOf, watchProject } from './project-view.ts';
import type { LocalSend, ProjectEvent, RealtimeContext } from './realtime-context.ts';
import { createRoster } from './roster.ts';
import { acknowledge, sendMessage } from './send.ts';
import { createSocketOut, type WS } from './socket-out.ts';
import { createDeliveryStream } from './stream.ts';
import type { Timers } from './timers.ts';
import { tokenAccepted } from './trust.ts';

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

/** Frames that may arrive while a hello is answered are bounded. */
const MAX_EARLY_FRAMES = 64;

export type Realtime = ReturnType<typeof createRealtime>;

/** A socket that has not claimed a name within `helloTimeoutMs` is closed. */
function armHelloTimeout(ctx: RealtimeContext, ws: WS): void {
  ws.data.helloTimer = ctx.timers.setTimeout(() => {
    if (ws.data.presence || ws.data.closing) return;
    ws.data.closing = true;
    ws.close(1008, 'hello timeout');
  }, ctx.limits.helloTimeoutMs);
}

/** The mesh's own join token (no hub policy): it is the token `mesh` (docs/security.md). */
function joinTokenAdmits(expected: string | undefined, ws: WS, token: unknown): boolean {
  if (!tokenAccepted(expected, token)) return false;
  if (expected) ws.data.principal = 'user:mesh';
  return true;
}

export function createRealtime(opts: RealtimeOptions) {
  const { store, log, limits, timers } = opts;
  const roster = createRoster();
  const stream = createDeliveryStream<LocalSend>({
    store,
    log,
    deliver: (e) => deliver(ctx, e),
    presenceIds: (project) => roster.list(project).map((p) => p.presenceId),
  });
  const ctx: RealtimeContext = {
    store,
    log,
    now: opts.now,
    limits,
    timers,
    cluster: opts.cluster ?? singleHub(),
    roster,
    io: createSocketOut({ log, limits, timers, leave: (p) => leave(ctx, p) }),
    stream,
    watchers: new Map<string, Set<(e: ProjectEvent) => void>>(),
    admit: opts.admit ?? ((ws, token) => joinTokenAdmits(opts.token, ws, token)),
  };
  const { cluster, io } = ctx;
  const tick = () => heartbeatRound(ctx);
  let heartbeat: ReturnType<typeof setInterval> | undefined = timers.setInterval(
    tick,
    limits.heartbeatMs,
  );
  cluster.onEvent((e) => onClusterEvent(ctx, e));

  function handleFrame(ws: WS, raw: string | Buffer): void {
    if (ws.data.closing) return;
    if (ws.data.early) {
      if (ws.data.early.length >= MAX_EARLY_FRAMES)
        return io.refuse(ws, 'invalid_frame', 'too many frames before the claim was answered');
      ws.data.early.push(raw);
      return;
    }
    const p = ws.data.presence;
    const bad = (code: WireCode, message: string) =>
      p ? io.error(ws, code, message) : io.refuse(ws, code, message);
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
        ? hello(ctx, ws, f, handleFrame)
        : io.refuse(ws, 'invalid_frame', 'the first frame must be hello');
    if (f.type === 'hello')
      return io.error(ws, 'invalid_frame', 'already claimed; hello is only the first frame');
    if (f.type === 'message') return sendMessage(ctx, p, f);
    return acknowledge(ctx, p, f);
  }

  return {
    roster,
    cluster,
    tick,
    /** Everyone present in a project across the cluster, in join order. */
    peers: (project: string) => peersOf(ctx, project),
    /** Hears a project's roster (now, and after every change) and its new messages; returns the unsubscribe function. */
    watch: (project: string, fn: (e: ProjectEvent) => void): (() => void) =>
      watchProject(ctx, project, fn),
    open: (ws: WS): void => armHelloTimeout(ctx, ws),
    message: handleFrame,
    drain: (ws: WS): void => io.drained(ws),
    pong(ws: WS): void {
      ws.data.presence?.ponged();
    },
    close(ws: WS): void {
      ws.data.closing = true;
      if (ws.data.helloTimer) timers.clearTimeout(ws.data.helloTimer);
      if (ws.data.presence) leave(ctx, ws.data.presence);
    },
    /** Ends every presence with `hub_shutdown` and stops the heartbeat. */
    shutdown(): void {
      if (heartbeat) timers.clearInterval(heartbeat);
      heartbeat = undefined;
      const sockets = roster.all().map((p) => p.ws);
      for (const p of roster.all()) {
        p.leavingWith('hub_shutdown');
        p.ws.data.closing = true;
        leave(ctx, p);
      }
      // Everyone hears the hub_shutdown departures before their own socket closes.
      io.flushAll();
      for (const ws of sockets) ws.close(1001, 'hub_shutdown');
    },
  };
}
