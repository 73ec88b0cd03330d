/**
 * @module lib/mesh/client-types — the shapes of the mesh client: options, events, statuses,
 * inbound messages and send requests (re-exported by lib/mesh/client.ts).
 */

import type { Log } from '../log.ts';
import type { Activity } from './activity.ts';
import type { DeliveryEvent, SendTarget } from './connection.ts';
import type { ClientCode, MeshError } from './errors.ts';
import type { SavedAttachment } from './files.ts';
import type { ConnectionMemory } from './memory.ts';
import type { Attachment } from './payload.ts';
import type { MeshMessage, Peer, Recovery } from './wire.ts';

export type MembershipState = 'connecting' | 'connected' | 'reconnecting' | 'stopped';

export interface MembershipStatus {
  agentId: string;
  project: string;
  name: string;
  state: MembershipState;
  /** The hub this presence is on, while connected. */
  hubUrl?: string;
  self?: Peer;
  peers: (Peer & { activity: Activity })[];
  activity: Activity;
  /** The last refusal or transport failure, with its code. */
  lastError?: MeshError<ClientCode>;
  /** Delay of the next reconnect attempt, when one is scheduled. */
  retryInMs?: number;
}

export interface InboundMessage {
  agentId: string;
  message: MeshMessage;
  text: string;
  attachments: SavedAttachment[];
  /** One-line envelope header: `[a2a message] ref=… from=… project=… at=<ISO> replyTo=…`. */
  header: string;
}

export interface SendRequest {
  target: SendTarget;
  text: string;
  /** Absolute paths of local files. */
  attachments?: string[];
  /** Attachments already encoded (a model's inline ones), sent after the files. */
  inline?: Attachment[];
  replyTo?: string;
  messageId?: string;
}

export interface ClientEvents extends Record<string, unknown> {
  'presence-changed': {
    agentId: string;
    state: MembershipState;
    project: string;
    name: string;
    error?: MeshError<ClientCode>;
  };
  /** The roster or the activity view changed (scope: one agent). */
  change: { agentId: string };
  delivery: DeliveryEvent & { agentId: string };
  /**
   * A reconnect asked the hub for what was missed. `recovered: false` means messages after `since`
   * were left out (over the recovery limit, or the project was recreated): page them with `history`.
   */
  recovery: Recovery & { agentId: string; resumed: boolean };
}

export interface ClientTimers {
  setTimeout: (fn: () => void, ms: number) => unknown;
  clearTimeout: (t: unknown) => void;
}

export interface MeshClientOptions {
  hubUrl: string;
  /**
   * Other hubs on the same database (several hubs on PostgreSQL). After a failed attempt or a drop
   * the client tries the next address in turn, resumes its presence there and recovers what it missed.
   */
  hubUrls?: string[];
  token?: string;
  /**
   * Claims without a principal even when the token proves one, so the messages carry none (an
   * agent's presence: what it posts is its model's words, never a principal's request).
   */
  anonymous?: boolean;
  log: Log;
  now?: () => number;
  timers?: ClientTimers;
  reconnectMs?: number;
  maxReconnectMs?: number;
  /** Remembered connections; without it nothing is remembered. */
  memory?: ConnectionMemory;
  /**
   * Saves the stream position to `memory` after each inbound message's handler has resolved, not
   * only when the connection drops: a process killed mid-stream replays only what its handler
   * never finished (the CLI's `connect`, whose handler prints).
   */
  savePositionEachMessage?: boolean;
  /** Where inbound attachments are written; defaults to `<tmpdir>/lume-a2a`. */
  attachmentsDir?: string;
  /** The agent's handler; the hub hears `delivered` when it resolves and `delivery_failed` when it throws. */
  onInbound?: (m: InboundMessage) => unknown;
  WebSocket?: typeof WebSocket;
}
