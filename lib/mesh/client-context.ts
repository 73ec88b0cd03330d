/**
 * @module lib/mesh/client-context — the shapes of the mesh client (options, events, statuses,
 * inbound messages and send requests) and what its parts share: the hub addresses and their HTTP
 * clients, the backoff, the events and one membership per agent (made in lib/mesh/client.ts).
 */

import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Log } from '../log.ts';
import type { Activity, createActivity } from './activity.ts';
import type { DeliveryEvent, MeshConnection, SendTarget } from './connection.ts';
import { createEmitter } from './emitter.ts';
import type { ClientCode, MeshError } from './errors.ts';
import type { SavedAttachment } from './files.ts';
import { createHubClient, type HubClient } from './http-client.ts';
import type { ConnectionMemory } from './memory.ts';
import type { Attachment } from './payload.ts';
import type { MeshMessage, Peer, Recovery, StreamPosition } from './wire.ts';

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
  log: Log;
  now?: () => number;
  timers?: ClientTimers;
  reconnectMs?: number;
  maxReconnectMs?: number;
  /** Remembered connections; without it nothing is remembered. */
  memory?: ConnectionMemory;
  /** Where inbound attachments are written; defaults to `<tmpdir>/lume-a2a`. */
  attachmentsDir?: string;
  /** The agent's handler; the hub hears `delivered` when it resolves and `delivery_failed` when it throws. */
  onInbound?: (m: InboundMessage) => unknown;
  WebSocket?: typeof WebSocket;
}

/** One agent's presence as the client keeps it, across reconnects. */
export interface Membership {
  agentId: string;
  project: string;
  name: string;
  state: MembershipState;
  desired: boolean;
  conn?: MeshConnection;
  delay: number;
  timer?: unknown;
  retryInMs?: number;
  lastError?: MeshError<ClientCode>;
  activity: ReturnType<typeof createActivity>;
  /** Given by the hub at a fresh claim; held in memory (and in the 0600 memory file), never logged. */
  resumeSecret?: string;
  /** The project's stream epoch and the highest sequence handled: where recovery starts. */
  position?: StreamPosition;
  /** Index into the hub addresses of the one to try next. */
  hub: number;
  /** Set by an explicit connect until its first save: that save replaces a disconnect's tombstone. */
  revive: boolean;
}

export interface ClientContext {
  o: MeshClientOptions;
  now: () => number;
  timers: ClientTimers;
  /** The first reconnect delay, and the cap it doubles up to. */
  base: number;
  cap: number;
  /** Where inbound attachments are written. */
  dir: string;
  /** The hub addresses, first tried first. */
  urls: string[];
  /** The HTTP client of one hub address (history is read from the hub the agent is on). */
  httpOf: (url: string) => HubClient;
  events: ReturnType<typeof createEmitter<ClientEvents>>;
  members: Map<string, Membership>;
}

/** The client's shared state from its options (defaults: 500 ms to 10 s backoff, `<tmpdir>/lume-a2a`). */
export function createClientContext(o: MeshClientOptions): ClientContext {
  const hubClients = new Map<string, HubClient>();
  return {
    o,
    now: o.now ?? Date.now,
    timers: o.timers ?? {
      setTimeout: (fn, ms) => setTimeout(fn, ms),
      clearTimeout: (t) => clearTimeout(t as ReturnType<typeof setTimeout>),
    },
    base: o.reconnectMs ?? 500,
    cap: o.maxReconnectMs ?? 10_000,
    dir: o.attachmentsDir ?? join(tmpdir(), 'lume-a2a'),
    urls: [...new Set([o.hubUrl, ...(o.hubUrls ?? [])])],
    httpOf: (url) => {
      let c = hubClients.get(url);
      if (!c) hubClients.set(url, (c = createHubClient({ baseUrl: url, token: o.token })));
      return c;
    },
    events: createEmitter<ClientEvents>((e) =>
      o.log('warn', 'mesh client: listener threw', { error: String(e) }),
    ),
    members: new Map(),
  };
}
