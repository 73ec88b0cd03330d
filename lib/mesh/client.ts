/**
 * @module lib/mesh/client — the mesh client: one presence per local agent, reconnect with backoff
 * (500 ms doubling to 10 s, reset after a claim, stopped by unknown_project / protocol_mismatch; a
 * taken name is retried, since whoever holds it may leave; with several hub addresses, to the next
 * hub in turn) that resumes its own
 * presence and recovers missed messages, serial inbound
 * handling with attachments written to disk, delivery and presence events, remembered connections
 * and the local activity view.
 */

import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Log } from '../log.ts';
import { createActivity, type Activity } from './activity.ts';
import { createEmitter } from './emitter.ts';
import { fail, type ClientCode, type MeshError, type Result } from './errors.ts';
import { materialize, snapshotFile, type SavedAttachment } from './files.ts';
import { createHubClient, type HistoryOptions } from './http-client.ts';
import type { ConnectionMemory, RememberedConnection } from './memory.ts';
import {
  openConnection,
  type ClaimedFrame,
  type DeliveryEvent,
  type MeshConnection,
  type SendReceipt,
  type SendTarget,
} from './connection.ts';
import type { Attachment } from './payload.ts';
import { decodeText } from './payload.ts';
import type { MeshMessage, Peer, Recovery, StreamPosition } from './wire.ts';

/**
 * Claim refusals after which retrying cannot help. A taken name (`A2A_NAME_IN_USE`) is not one: a
 * squatter that leaves must not keep the rightful agent out for good, so it is retried at the capped
 * backoff; callers that want to give up at once (the CLI) close when the first attempt fails.
 */
const STOP_CODES: ReadonlySet<ClientCode> = new Set([
  'A2A_UNKNOWN_PROJECT',
  'A2A_PROTOCOL_MISMATCH',
]);

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

/** The envelope header an agent sees above an inbound message. */
function inboundHeader(m: MeshMessage): string {
  return `[a2a message] ref=${m.messageRef} from=${m.from.name} project=${m.project} at=${new Date(m.createdAt).toISOString()}${m.replyTo ? ` replyTo=${m.replyTo}` : ''}`;
}

export type MeshClient = ReturnType<typeof createMeshClient>;

interface Membership {
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

export function createMeshClient(o: MeshClientOptions) {
  const now = o.now ?? Date.now;
  const timers: ClientTimers = o.timers ?? {
    setTimeout: (fn, ms) => setTimeout(fn, ms),
    clearTimeout: (t) => clearTimeout(t as ReturnType<typeof setTimeout>),
  };
  const base = o.reconnectMs ?? 500;
  const cap = o.maxReconnectMs ?? 10_000;
  const dir = o.attachmentsDir ?? join(tmpdir(), 'lume-a2a');
  const urls = [...new Set([o.hubUrl, ...(o.hubUrls ?? [])])];
  const http = createHubClient({ baseUrl: o.hubUrl, token: o.token });
  const hubClients = new Map([[o.hubUrl, http]]);
  /** The HTTP client of one hub address (history is read from the hub the agent is on). */
  const httpOf = (url: string) => {
    let c = hubClients.get(url);
    if (!c) hubClients.set(url, (c = createHubClient({ baseUrl: url, token: o.token })));
    return c;
  };
  const events = createEmitter<ClientEvents>((e) =>
    o.log('warn', 'mesh client: listener threw', { error: String(e) }),
  );
  const members = new Map<string, Membership>();

  const setState = (m: Membership, state: MembershipState) => {
    m.state = state;
    events.emit('presence-changed', {
      agentId: m.agentId,
      state,
      project: m.project,
      name: m.name,
      ...(m.lastError ? { error: m.lastError } : {}),
    });
  };

  async function handle(m: Membership, message: MeshMessage): Promise<void> {
    // A message at or below the position was handled already (a replay overlapping a late delivery).
    if (m.position && message.sequence <= m.position.since) return;
    if (m.position) m.position = { epoch: m.position.epoch, since: message.sequence };
    m.activity.received(message.from.name);
    m.activity.handlingStarted();
    events.emit('change', { agentId: m.agentId });
    try {
      const saved = await materialize(dir, message);
      if (!saved.ok) throw new Error(saved.error.message);
      await o.onInbound?.({
        agentId: m.agentId,
        message,
        text: decodeText(message.payload),
        attachments: saved.result,
        header: inboundHeader(message),
      });
    } finally {
      m.activity.handlingEnded();
      events.emit('change', { agentId: m.agentId });
    }
  }

  /** Takes in what a claim says about the stream, before any replayed message is handled. */
  function claimed(m: Membership, c: ClaimedFrame): void {
    if (c.resumeSecret) m.resumeSecret = c.resumeSecret;
    m.position = { epoch: c.epoch, since: c.recovery ? c.recovery.since : c.sequence };
    if (c.recovery) {
      events.emit('recovery', { ...c.recovery, agentId: m.agentId, resumed: c.resumed });
      if (!c.recovery.recovered)
        o.log('warn', 'mesh client: recovery was partial; older missed messages are in history', {
          agent: m.agentId,
          project: m.project,
          since: c.recovery.since,
          replayed: c.recovery.replayed,
        });
    }
  }

  /** What is remembered for an agent: never the secret in a log, only in the memory store. */
  const remembered = (m: Membership): RememberedConnection => ({
    project: m.project,
    name: m.name,
    ...(m.resumeSecret ? { resumeSecret: m.resumeSecret } : {}),
    ...(m.position ? { epoch: m.position.epoch, since: m.position.since } : {}),
  });

  function schedule(m: Membership): void {
    if (!m.desired) return;
    // With several hubs, the next attempt goes to the next one: the last one just failed or dropped.
    m.hub = (m.hub + 1) % urls.length;
    m.retryInMs = m.delay;
    setState(m, 'reconnecting');
    m.timer = timers.setTimeout(() => {
      m.timer = undefined;
      void attempt(m);
    }, m.delay);
    m.delay = Math.min(m.delay * 2, cap);
  }

  async function attempt(m: Membership): Promise<void> {
    if (!m.desired) return;
    // A connection ended by an explicit disconnect elsewhere (`bun run mesh disconnect`) is not rejoined.
    if (!m.revive && o.memory && (await o.memory.ended(m.agentId))) {
      m.desired = false;
      m.retryInMs = undefined;
      m.lastError = {
        code: 'A2A_CLIENT_CLOSED',
        message: `the connection of ${m.agentId} was ended by a disconnect`,
      };
      members.delete(m.agentId);
      return setState(m, 'stopped');
    }
    const r = await openConnection({
      hubUrl: urls[m.hub]!,
      project: m.project,
      name: m.name,
      token: o.token,
      WebSocket: o.WebSocket,
      log: o.log,
      timers,
      resume: m.resumeSecret,
      recover: m.position,
      onClaimed: (c) => claimed(m, c),
      onMessage: (message) => handle(m, message),
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
        return setState(m, 'stopped');
      }
      return schedule(m);
    }
    const conn = r.result;
    m.conn = conn;
    m.delay = base;
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
      schedule(m);
    });
    setState(m, 'connected');
    await o.memory?.save(m.agentId, remembered(m), { revive: m.revive });
    m.revive = false;
  }

  function status(m: Membership): MembershipStatus {
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
      s.hubUrl = urls[m.hub]!;
    }
    if (m.lastError) s.lastError = m.lastError;
    if (m.retryInMs !== undefined) s.retryInMs = m.retryInMs;
    return s;
  }

  async function stop(m: Membership): Promise<void> {
    m.desired = false;
    if (m.timer !== undefined) timers.clearTimeout(m.timer);
    m.timer = undefined;
    members.delete(m.agentId);
    const conn = m.conn;
    m.conn = undefined;
    if (conn && !conn.closed) {
      conn.close(1000, 'disconnect');
      await conn.done;
    }
  }

  return {
    http,
    on: events.on,

    /**
     * Joins `project` as `name` for `agentId` (one presence per agent). Calling again with the same
     * project and name returns the current status; a different one leaves the old presence first.
     * Resolves after the first attempt; failures other than the stop codes keep retrying.
     */
    async connect(
      agentId: string,
      project: string,
      name = agentId,
      saved?: RememberedConnection,
    ): Promise<MembershipStatus> {
      const existing = members.get(agentId);
      if (existing && existing.project === project && existing.name === name && existing.desired)
        return status(existing);
      if (existing) await stop(existing);
      const m: Membership = {
        agentId,
        project,
        name,
        state: 'connecting',
        desired: true,
        delay: base,
        activity: createActivity(now),
        hub: 0,
        revive: true,
      };
      // A remembered connection of the same name brings its resume secret and stream position.
      if (saved && saved.project === project && saved.name === name) {
        if (saved.resumeSecret) m.resumeSecret = saved.resumeSecret;
        if (saved.epoch !== undefined && saved.since !== undefined)
          m.position = { epoch: saved.epoch, since: saved.since };
      }
      members.set(agentId, m);
      setState(m, 'connecting');
      await attempt(m);
      return status(m);
    },

    /** Leaves on purpose: the presence ends and the remembered connection is forgotten. */
    async disconnect(agentId: string): Promise<void> {
      const m = members.get(agentId);
      if (m) {
        await stop(m);
        setState(m, 'stopped');
      }
      await o.memory?.forget(agentId);
    },

    /** Rejoins every remembered connection (after a restart). */
    async restore(): Promise<MembershipStatus[]> {
      const saved = (await o.memory?.load()) ?? {};
      return Promise.all(
        Object.entries(saved).map(([id, c]) => this.connect(id, c.project, c.name, c)),
      );
    },

    status(agentId: string): MembershipStatus | undefined {
      const m = members.get(agentId);
      return m && status(m);
    },

    /** The roster names other than the agent itself. */
    peers(agentId: string): string[] {
      return (
        members
          .get(agentId)
          ?.conn?.peers()
          .map((p) => p.name) ?? []
      );
    },

    /** Sends from an agent's presence; attachments are absolute local paths. */
    async send(agentId: string, req: SendRequest): Promise<Result<SendReceipt, ClientCode>> {
      const m = members.get(agentId);
      if (!m?.conn) return fail('A2A_CLIENT_CLOSED', `${agentId} is not connected`);
      const attachments: Attachment[] = [];
      for (const path of req.attachments ?? []) {
        const a = await snapshotFile(path);
        if (!a.ok) return a;
        attachments.push(a.result);
      }
      const { inline, ...rest } = req;
      const r = await m.conn.send({ ...rest, attachments: [...attachments, ...(inline ?? [])] });
      if (r.ok) {
        m.activity.sent(r.result.recipients);
        events.emit('change', { agentId });
      }
      return r;
    },

    /** Reads the agent's project history over HTTP. */
    history(agentId: string, q: HistoryOptions = {}): Promise<Result<MeshMessage[], ClientCode>> {
      const m = members.get(agentId);
      if (!m) return Promise.resolve(fail('A2A_CLIENT_CLOSED', `${agentId} is not connected`));
      return httpOf(urls[m.hub]!).history(m.project, q);
    },

    /** Closes every presence without forgetting remembered connections (a process shutting down); their positions are kept. */
    async close(): Promise<void> {
      await Promise.all(
        [...members.values()].map(async (m) => {
          await stop(m);
          if (m.resumeSecret) await o.memory?.save(m.agentId, remembered(m));
        }),
      );
    },
  };
}
