/**
 * @module lib/mesh/connection-context — the shapes of one WebSocket presence: its options, events,
 * sends and the connection itself (its state is owned by lib/mesh/connection-state.ts).
 */

import type { Log } from '../log.ts';
import type { createEmitter } from './emitter.ts';
import type { ClientCode, MeshError, Result } from './errors.ts';
import type { Attachment } from './payload.ts';
import type { MeshMessage, Peer, ServerFrame, StreamPosition } from './wire.ts';

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

export interface ConnectionEvents extends Record<string, unknown> {
  presence: { kind: 'joined'; peer: Peer } | { kind: 'left'; peer: Peer; reason: string };
  delivery: DeliveryEvent;
  /** An `error` frame that answers no request (e.g. an unknown acknowledgement), or a malformed frame from the hub (`A2A_INVALID_FRAME`). */
  error: MeshError;
  close: { code: number; reason: string };
}

export interface ConnectionTimers {
  setTimeout: (fn: () => void, ms: number) => unknown;
  clearTimeout: (t: unknown) => void;
}

export interface ConnectOptions {
  /** The hub's HTTP base URL (`http://127.0.0.1:4100`); `/v1/connect` is appended. */
  hubUrl: string;
  project: string;
  name: string;
  token?: string;
  /** Claims without a principal (`hello.anonymous`): the hub stamps none on this presence's messages. */
  anonymous?: boolean;
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
  timers?: ConnectionTimers;
  WebSocket?: typeof WebSocket;
  /** Hears one line per malformed frame from the hub (the frame itself is never logged). */
  log?: Log;
}

type Emitter = ReturnType<typeof createEmitter<ConnectionEvents>>;

/** One claimed presence on a hub. */
export interface MeshConnection {
  readonly project: string;
  /** This presence as the hub named it. */
  readonly self: Peer;
  /** The other presences, in join order. */
  peers(): Peer[];
  readonly closed: boolean;
  on: Emitter['on'];
  /** Sends a message; resolves with `accepted` or the hub's coded refusal. */
  send(input: SendInput): Promise<Result<SendReceipt, ClientCode>>;
  /** Closes the socket (the presence ends with it); a peer that never answers the close is cut after a grace period. */
  close(code?: number, reason?: string): void;
  /** Resolves when the socket has closed. */
  done: Promise<{ code: number; reason: string }>;
}

export type Answer = (r: Result<SendReceipt, ClientCode>) => void;
