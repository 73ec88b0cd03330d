/**
 * @module lib/mesh/connection-state — what one presence owns, behind a few operations: the socket
 * (writing frames, a close that cuts a peer which never answers it), the sends waiting for their
 * answer, the roster, the claim, the heartbeat watchdog, and ending the connection once (whether
 * the socket closed or the watchdog gave a silent hub up). The frame handlers
 * (lib/mesh/connection-frames.ts) and the inbound queue (connection-inbound.ts) go through it.
 */

import type {
  Answer,
  ConnectionEvents,
  ConnectionTimers,
  ConnectOptions,
  MeshConnection,
} from './connection-context.ts';
import { InboundQueue } from './connection-inbound.ts';
import { createEmitter } from './emitter.ts';
import { fail, type ClientCode, type MeshError, type Result } from './errors.ts';
import type { MeshMessage, Peer } from './wire.ts';

/** Close code a connection reports when it gave the hub up because its heartbeat stopped. */
const HUB_SILENT_CODE = 4000;
/** How long `close()` waits for the hub's close frame before cutting the socket (a half-open path never answers). */
export const CLOSE_GRACE_MS = 1_000;

const realTimers: ConnectionTimers = {
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (t) => clearTimeout(t as ReturnType<typeof setTimeout>),
};

/** One presence's state; `settle` answers `openConnection` (the first call wins). */
export class ConnectionState {
  readonly events = createEmitter<ConnectionEvents>();
  readonly #ws: WebSocket;
  readonly #Ws: typeof WebSocket;
  readonly #timers: ConnectionTimers;
  readonly #settle: (r: Result<MeshConnection, ClientCode>) => void;
  readonly #inbound: InboundQueue;
  /** Sends waiting for their answer, by `requestId`. */
  readonly #pending = new Map<string, Answer>();
  readonly #roster = new Map<string, Peer>();
  #self: Peer | undefined;
  /** Why the claim failed, once known (the close that follows reports it). */
  #claimError: MeshError<ClientCode> | undefined;
  #closed = false;
  #requestSeq = 0;
  // Armed after the claim: silence for `heartbeatMs × (heartbeatMisses + 1)` means the hub (or the path to it) is gone.
  #silentAfterMs = 0;
  #watchdog: unknown;
  #graceTimer: unknown;

  constructor(
    readonly o: ConnectOptions,
    ws: WebSocket,
    Ws: typeof WebSocket,
    settle: (r: Result<MeshConnection, ClientCode>) => void,
  ) {
    this.#ws = ws;
    this.#Ws = Ws;
    this.#timers = o.timers ?? realTimers;
    this.#settle = settle;
    this.#inbound = new InboundQueue(
      (m) => o.onMessage?.(m),
      (f) => this.send(f),
    );
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** This presence, once claimed. */
  get self(): Peer | undefined {
    return this.#self;
  }

  /** The other presences, in join order. */
  peers(): Peer[] {
    return [...this.#roster.values()];
  }

  /** The claim: this presence and the roster, the watchdog armed when the hub sends a heartbeat. */
  claim(self: Peer, peers: readonly Peer[], silentAfterMs: number): void {
    this.#self = self;
    for (const p of peers) this.#roster.set(p.name, p);
    this.#silentAfterMs = silentAfterMs;
    if (silentAfterMs > 0) this.rearmWatchdog();
  }

  /** Answers `openConnection`; later calls are ignored. */
  settle(r: Result<MeshConnection, ClientCode>): void {
    this.#settle(r);
  }

  /** Records why the claim failed; only before the claim (after it an error answers a send). */
  refuseClaim(error: MeshError<ClientCode>): void {
    if (!this.#self) this.#claimError = error;
  }

  joined(peer: Peer): void {
    this.#roster.set(peer.name, peer);
  }

  /** Drops `peer` unless the name was claimed again meanwhile (another presence id). */
  left(peer: Peer): void {
    if (this.#roster.get(peer.name)?.presenceId === peer.presenceId) this.#roster.delete(peer.name);
  }

  /** Sends a frame made for a fresh `requestId`; resolves with its answer (or the close). */
  request(frame: (requestId: string) => object): Promise<Parameters<Answer>[0]> {
    if (this.#closed) return Promise.resolve(fail('A2A_CLIENT_CLOSED', 'the connection is closed'));
    const requestId = `r${++this.#requestSeq}`;
    return new Promise((resolve) => {
      this.#pending.set(requestId, resolve);
      this.send(frame(requestId));
    });
  }

  /** Answers the send `requestId` names; false when none waits for it. */
  answer(requestId: string | undefined, r: Parameters<Answer>[0]): boolean {
    const done = requestId !== undefined ? this.#pending.get(requestId) : undefined;
    if (!done) return false;
    this.#pending.delete(requestId!);
    done(r);
    return true;
  }

  /** Queues an inbound message for the handler. */
  deliver(m: MeshMessage): void {
    if (!this.#closed) this.#inbound.push(m);
  }

  /** Writes one frame while the socket is open. */
  send(f: unknown): void {
    if (!this.#closed && this.#ws.readyState === this.#Ws.OPEN) this.#ws.send(JSON.stringify(f));
  }

  /** Restarts the watchdog: any frame, even a malformed one, shows the hub is alive. */
  rearmWatchdog(): void {
    if (this.#watchdog !== undefined) this.#timers.clearTimeout(this.#watchdog);
    this.#watchdog =
      this.#silentAfterMs > 0 && !this.#closed
        ? this.#timers.setTimeout(
            () => this.finish(HUB_SILENT_CODE, 'hub_silent'),
            this.#silentAfterMs,
          )
        : undefined;
  }

  #socketLive(): boolean {
    const state = this.#ws.readyState;
    return state === this.#Ws.OPEN || state === this.#Ws.CONNECTING;
  }

  /** Closes the socket; a peer that never answers the close is cut after a grace period. */
  close(code: number, reason: string): void {
    if (this.#closed || !this.#socketLive()) return;
    this.#ws.close(code, reason);
    this.#graceTimer = this.#timers.setTimeout(() => this.finish(code, reason), CLOSE_GRACE_MS);
  }

  /** Ends the connection once: pending sends fail, the queue is dropped, an unanswered claim fails. */
  finish(code: number, reason: string): void {
    if (this.#closed) return;
    this.#closed = true;
    if (this.#watchdog !== undefined) this.#timers.clearTimeout(this.#watchdog);
    if (this.#graceTimer !== undefined) this.#timers.clearTimeout(this.#graceTimer);
    this.#watchdog = this.#graceTimer = undefined;
    // A half-open socket never completes a close handshake: cut it locally.
    if (this.#socketLive()) (this.#ws as WebSocket & { terminate?: () => void }).terminate?.();
    for (const done of this.#pending.values())
      done(fail('A2A_CLIENT_CLOSED', `connection closed (${code} ${reason})`));
    this.#pending.clear();
    this.#inbound.clear();
    this.settle({
      ok: false,
      error: this.#claimError ?? {
        code: 'A2A_CLIENT_CONNECT',
        message: `connection closed before the claim (${code} ${reason})`,
      },
    });
    this.events.emit('close', { code, reason });
  }
}
