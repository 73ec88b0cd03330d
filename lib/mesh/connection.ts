/**
 * @module lib/mesh/connection — one WebSocket presence: hello and claim (optionally resuming a live
 * presence and recovering missed messages), sends matched to their answer by `requestId`, inbound
 * messages handled one at a time in sequence order and acknowledged after the handler finishes, and
 * a watchdog that gives the hub up when its heartbeat stops. A connection never reconnects by itself
 * (the client does that).
 */

import { createEmitter } from './emitter.ts';
import { clientCode, fail, ok, type ClientCode, type MeshError, type Result } from './errors.ts';
import { MESH_LIMITS, PROTOCOL_VERSION } from './limits.ts';
import { newMessageId } from './names.ts';
import { encodeText, type Attachment } from './payload.ts';
import {
  truncateUtf8,
  type MeshMessage,
  type Peer,
  type ServerFrame,
  type StreamPosition,
} from './wire.ts';

export type SendTarget = { type: 'agent'; name: string } | { type: 'project' };

export interface SendInput {
  target: SendTarget;
  text: string;
  /** Already encoded attachments (see `encodeAttachment` / `snapshotFile`). */
  attachments?: Attachment[];
  replyTo?: string;
  /** Idempotency id; a fresh one is made when absent. Reuse it to retry safely. */
  messageId?: string;
}

export interface SendReceipt {
  message: MeshMessage;
  recipients: string[];
  replayed: boolean;
}

export type DeliveryEvent = Extract<ServerFrame, { type: 'delivery' }>;
export type ClaimedFrame = Extract<ServerFrame, { type: 'claimed' }>;

/** Close code a connection reports when it gave the hub up because its heartbeat stopped. */
export const HUB_SILENT_CODE = 4000;
/** How long `close()` waits for the hub's close frame before cutting the socket (a half-open path never answers). */
export const CLOSE_GRACE_MS = 1_000;

export interface ConnectionEvents extends Record<string, unknown> {
  presence: { kind: 'joined'; peer: Peer } | { kind: 'left'; peer: Peer; reason: string };
  delivery: DeliveryEvent;
  /** An `error` frame that answers no request (e.g. an unknown acknowledgement). */
  error: MeshError;
  close: { code: number; reason: string };
}

export interface ConnectOptions {
  /** The hub's HTTP base URL (`http://127.0.0.1:4100`); `/v1/connect` is appended. */
  hubUrl: string;
  project: string;
  name: string;
  token?: string;
  /** Handles one inbound message; the hub hears `delivered` when it resolves, `delivery_failed` when it throws. */
  onMessage?: (message: MeshMessage) => unknown;
  /** Runs on `claimed`, before any replayed message is handled. */
  onClaimed?: (claimed: ClaimedFrame) => void;
  /** The resume secret of an earlier claim of this name: takes the live presence over instead of `name_in_use`. */
  resume?: string;
  /** Where the last connection stopped: the hub replays what this name missed after it. */
  recover?: StreamPosition;
  /** Gives up on the claim after this long. */
  claimTimeoutMs?: number;
  /** Timers for the heartbeat watchdog (tests fire them by hand). */
  timers?: {
    setTimeout: (fn: () => void, ms: number) => unknown;
    clearTimeout: (t: unknown) => void;
  };
  WebSocket?: typeof WebSocket;
}

export type MeshConnection =
  Awaited<ReturnType<typeof openConnection>> extends Result<infer C, ClientCode> ? C : never;

const wsUrl = (hubUrl: string) => `${hubUrl.replace(/\/+$/, '').replace(/^http/, 'ws')}/v1/connect`;

/** Opens a socket and claims `name` in `project`; resolves once `claimed` (or the refusal) arrives. */
export function openConnection(o: ConnectOptions) {
  const Ws = o.WebSocket ?? WebSocket;
  const events = createEmitter<ConnectionEvents>();
  const pending = new Map<string, (r: Result<SendReceipt, ClientCode>) => void>();
  const roster = new Map<string, Peer>();
  let self: Peer | undefined;
  let claimError: MeshError<ClientCode> | undefined;
  let closed = false;
  let closeInfo = { code: 0, reason: '' };
  let requestSeq = 0;
  const timers = o.timers ?? {
    setTimeout: (fn: () => void, ms: number) => setTimeout(fn, ms),
    clearTimeout: (t: unknown) => clearTimeout(t as ReturnType<typeof setTimeout>),
  };
  // Armed after the claim: silence for `heartbeatMs × (heartbeatMisses + 1)` means the hub (or the path to it) is gone.
  let silentAfterMs = 0;
  let watchdog: unknown;
  const rearmWatchdog = () => {
    if (watchdog !== undefined) timers.clearTimeout(watchdog);
    watchdog =
      silentAfterMs > 0 && !closed
        ? timers.setTimeout(() => finish(HUB_SILENT_CODE, 'hub_silent'), silentAfterMs)
        : undefined;
  };
  let graceTimer: unknown;
  let finish: (code: number, reason: string) => void = () => {};
  // Inbound queue kept in sequence order; one handler call at a time.
  const inbound: MeshMessage[] = [];
  let draining = false;

  let ws: WebSocket;
  try {
    ws = new Ws(wsUrl(o.hubUrl));
  } catch (e) {
    return Promise.resolve(
      fail('A2A_CLIENT_CONNECT', `cannot open ${wsUrl(o.hubUrl)}: ${(e as Error).message}`),
    );
  }
  const sendFrame = (f: unknown) => {
    if (!closed && ws.readyState === Ws.OPEN) ws.send(JSON.stringify(f));
  };

  async function drain(): Promise<void> {
    if (draining) return;
    draining = true;
    while (inbound.length > 0 && !closed) {
      const m = inbound.shift()!;
      try {
        await o.onMessage?.(m);
        sendFrame({ type: 'delivered', messageId: m.messageId });
      } catch (e) {
        const text = e instanceof Error ? e.message : String(e);
        sendFrame({
          type: 'delivery_failed',
          messageId: m.messageId,
          error: truncateUtf8(text || 'handler failed', MESH_LIMITS.maxDeliveryErrorBytes),
        });
      }
    }
    draining = false;
  }

  const connection = {
    project: o.project,
    get self(): Peer {
      return self!;
    },
    /** The other presences, in join order. */
    peers: (): Peer[] => [...roster.values()],
    get closed(): boolean {
      return closed;
    },
    on: events.on,
    /** Sends a message; resolves with `accepted` or the hub's coded refusal. */
    send(input: SendInput): Promise<Result<SendReceipt, ClientCode>> {
      if (closed) return Promise.resolve(fail('A2A_CLIENT_CLOSED', 'the connection is closed'));
      const requestId = `r${++requestSeq}`;
      const frame = {
        type: 'message',
        requestId,
        messageId: input.messageId ?? newMessageId(),
        target: input.target,
        payload: encodeText(input.text),
        attachments: input.attachments ?? [],
        ...(input.replyTo ? { replyTo: input.replyTo } : {}),
      };
      return new Promise((resolve) => {
        pending.set(requestId, resolve);
        sendFrame(frame);
      });
    },
    /** Closes the socket (the presence ends with it); a peer that never answers the close is cut after a grace period. */
    close(code = 1000, reason = 'bye'): void {
      if (closed || !(ws.readyState === Ws.OPEN || ws.readyState === Ws.CONNECTING)) return;
      ws.close(code, reason);
      graceTimer = timers.setTimeout(() => finish(code, reason), CLOSE_GRACE_MS);
    },
    /** Resolves when the socket has closed. */
    done: new Promise<{ code: number; reason: string }>((resolve) => events.on('close', resolve)),
  };

  return new Promise<Result<typeof connection, ClientCode>>((resolveClaim) => {
    let settled = false;
    const settle = (r: Result<typeof connection, ClientCode>) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolveClaim(r);
    };
    const timer = setTimeout(() => {
      settle(fail('A2A_CLIENT_CONNECT', 'the hub did not answer hello in time'));
      connection.close(1000, 'claim timeout');
    }, o.claimTimeoutMs ?? 10_000);

    ws.onopen = () =>
      sendFrame({
        type: 'hello',
        protocolVersion: PROTOCOL_VERSION,
        project: o.project,
        name: o.name,
        ...(o.token ? { token: o.token } : {}),
        ...(o.resume ? { resume: o.resume } : {}),
        ...(o.recover ? { recover: o.recover } : {}),
      });
    ws.onmessage = (ev) => {
      if (closed) return;
      let f: ServerFrame;
      try {
        f = JSON.parse(String(ev.data)) as ServerFrame;
      } catch {
        return;
      }
      rearmWatchdog();
      switch (f.type) {
        case 'claimed':
          if (f.protocolVersion !== PROTOCOL_VERSION) {
            claimError = {
              code: 'A2A_PROTOCOL_MISMATCH',
              message: `hub claimed with protocol ${f.protocolVersion}`,
            };
            return connection.close(1002, 'protocol_mismatch');
          }
          self = f.self;
          for (const p of f.peers) roster.set(p.name, p);
          if (typeof f.heartbeatMs === 'number' && f.heartbeatMs > 0) {
            silentAfterMs =
              f.heartbeatMs *
              ((typeof f.heartbeatMisses === 'number' && f.heartbeatMisses > 0
                ? f.heartbeatMisses
                : 2) +
                1);
            rearmWatchdog();
          }
          o.onClaimed?.(f);
          return settle(ok(connection));
        case 'ping':
          return;
        case 'presence_joined':
          roster.set(f.peer.name, f.peer);
          return events.emit('presence', { kind: 'joined', peer: f.peer });
        case 'presence_left':
          if (roster.get(f.peer.name)?.presenceId === f.peer.presenceId) roster.delete(f.peer.name);
          return events.emit('presence', { kind: 'left', peer: f.peer, reason: f.reason });
        case 'accepted': {
          const done = pending.get(f.requestId);
          pending.delete(f.requestId);
          return done?.(
            ok({ message: f.message, recipients: f.recipients, replayed: f.replayed === true }),
          );
        }
        case 'message': {
          const m = f.message;
          let i = inbound.length;
          while (i > 0 && inbound[i - 1]!.sequence > m.sequence) i--;
          inbound.splice(i, 0, m);
          return void drain();
        }
        case 'delivery':
          return events.emit('delivery', f);
        case 'error': {
          const err = { code: clientCode(f.code), message: `${f.code}: ${f.message}` };
          if (!self) claimError = err;
          const done = f.requestId !== undefined ? pending.get(f.requestId) : undefined;
          if (done) {
            pending.delete(f.requestId!);
            return done({ ok: false, error: err });
          }
          return events.emit('error', err);
        }
      }
    };
    ws.onerror = () => {
      // The close event follows and carries what is known.
    };
    // Ends the connection once, whether the socket closed or the watchdog gave a silent hub up.
    finish = (code, reason) => {
      if (closed) return;
      closed = true;
      if (watchdog !== undefined) timers.clearTimeout(watchdog);
      if (graceTimer !== undefined) timers.clearTimeout(graceTimer);
      watchdog = graceTimer = undefined;
      // A half-open socket never completes a close handshake: cut it locally.
      if (ws.readyState === Ws.OPEN || ws.readyState === Ws.CONNECTING)
        (ws as WebSocket & { terminate?: () => void }).terminate?.();
      closeInfo = { code, reason };
      for (const done of pending.values())
        done(fail('A2A_CLIENT_CLOSED', `connection closed (${code} ${reason})`));
      pending.clear();
      inbound.length = 0;
      settle({
        ok: false,
        error: claimError ?? {
          code: 'A2A_CLIENT_CONNECT',
          message: `connection closed before the claim (${code} ${reason})`,
        },
      });
      events.emit('close', closeInfo);
    };
    ws.onclose = (ev) => finish(ev.code, ev.reason);
  });
}
