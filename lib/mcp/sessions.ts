/**
 * @module lib/mcp/sessions — the MCP sessions of one process: a random id made at `initialize`, bound
 * to the principal that made it (another caller presenting the id finds nothing), the revision
 * negotiated, the client's capabilities and log level, its resource subscriptions, the requests the
 * server sent it and waits on, at most one server-message stream each, a bounded table and an idle
 * expiry.
 */

import { fail, ok, type Failure, type Result } from '../errors/result.ts';
import { EventQueue } from '../event-queue.ts';
import type { McpLimits } from './limits.ts';
import type { LogLevel } from './protocol.ts';

/** The client's answer to a request of the server: its result, or its JSON-RPC error. */
export type ClientAnswer = { result: unknown } | { error: unknown };

export interface McpSession {
  readonly id: string;
  /** The owner key of the principal that initialized it (lib/auth/principal.ts `ownerKey`). */
  readonly owner: string;
  readonly protocolVersion: string;
  /** The client's name and version from `initialize` (for logs; never trusted). */
  readonly client: string;
  /** What the client said at `initialize` it can do (`sampling`, `elicitation`, `roots`, …). */
  readonly clientCapabilities: Record<string, unknown>;
  /** The least severe log level the client wants (`logging/setLevel`); unset: every level. */
  logLevel?: LogLevel;
  /** Resource URIs the client subscribed to (at most `limits.subscriptions`). */
  readonly subscriptions: Set<string>;
  /** Requests the server sent the client and waits on, by id (at most `limits.pendingRequests`). */
  readonly pending: Map<string, (answer: ClientAnswer) => void>;
  lastSeen: number;
  /** The open GET stream, if any: where server notifications go. */
  stream?: EventQueue<unknown>;
  /** Runs once when the session ends (a mesh presence leaves, …). */
  readonly cleanups: (() => void | Promise<void>)[];
  /** Runs each time its stream ends (the client went away, or it reconnects). */
  readonly streamEnded: (() => void)[];
}

/** A new session, or MCP_SESSIONS_FULL when the table is at its bound. */
export type OpenOutcome = Result<McpSession, Failure<'MCP_SESSIONS_FULL'>>;

/** Visible ASCII only, as transports §Session Management requires; 256 random bits. */
const newSessionId = () =>
  `mcp_${Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('base64url')}`;

/** A `subscriptions/listen` stream (2026-07-28): whose, what it opted in to, and where it goes. */
interface Listener {
  id: string | number;
  owner: string;
  lists: Set<string>;
  uris: Set<string>;
  queue: EventQueue<unknown>;
}

/** An open `subscriptions/listen` stream as its opener holds it. */
export interface OpenListen {
  queue: EventQueue<unknown>;
  /** Sends a notification on this stream only, tagged with its subscription id. */
  tell(method: string, params: Record<string, unknown>): void;
}

type ListenRefusal = Failure<'MCP_LISTENERS_FULL' | 'MCP_TOO_MANY_LISTENERS'>;

/** The resource URIs a `subscriptions/listen` filter asks for: strings of 1–512 characters, at most `limit`. */
export function listenUris(asked: Record<string, unknown>, limit: number): Set<string> {
  return new Set(
    (Array.isArray(asked.resourceSubscriptions) ? asked.resourceSubscriptions : [])
      .filter((u): u is string => typeof u === 'string' && u.length > 0 && u.length <= 512)
      .slice(0, limit),
  );
}

/** The list-changed notification each opt-in of `subscriptions/listen` stands for. */
const LIST_OPT_INS: Record<string, string> = {
  toolsListChanged: 'notifications/tools/list_changed',
  promptsListChanged: 'notifications/prompts/list_changed',
  resourcesListChanged: 'notifications/resources/list_changed',
};

export class McpSessions {
  private readonly byId = new Map<string, McpSession>();
  private readonly listeners = new Set<Listener>();

  constructor(
    private readonly limits: Pick<
      McpLimits,
      | 'sessions'
      | 'sessionsPerPrincipal'
      | 'sessionIdleMs'
      | 'streamMessages'
      | 'subscriptions'
      | 'listeners'
      | 'listenersPerPrincipal'
    >,
    private readonly now: () => number = Date.now,
  ) {}

  get size(): number {
    return this.byId.size;
  }

  open(
    owner: string,
    protocolVersion: string,
    client: string,
    clientCapabilities: Record<string, unknown> = {},
  ): OpenOutcome {
    const own = [...this.byId.values()].filter((s) => s.owner === owner);
    if (own.length >= this.limits.sessionsPerPrincipal) {
      const oldest = own.reduce((a, b) => (b.lastSeen < a.lastSeen ? b : a));
      void this.end(oldest.id);
    }
    this.sweep();
    if (this.byId.size >= this.limits.sessions)
      return fail('MCP_SESSIONS_FULL', 'too many MCP sessions are open; try again later');
    const session: McpSession = {
      id: newSessionId(),
      owner,
      protocolVersion,
      client: client.slice(0, 128),
      clientCapabilities,
      subscriptions: new Set(),
      pending: new Map(),
      lastSeen: this.now(),
      cleanups: [],
      streamEnded: [],
    };
    this.byId.set(session.id, session);
    return ok(session);
  }

  /** The session `id` names for `owner`; undefined when it does not exist, expired or is someone else's. */
  find(id: string, owner: string): McpSession | undefined {
    const s = this.byId.get(id);
    if (!s) return undefined;
    if (this.idle(s)) {
      void this.end(s.id);
      return undefined;
    }
    if (s.owner !== owner) return undefined;
    s.lastSeen = this.now();
    return s;
  }

  /** Opens the session's server-message stream; undefined when one is already open. */
  openStream(s: McpSession): EventQueue<unknown> | undefined {
    if (s.stream && !s.stream.isClosed) return undefined;
    const q = new EventQueue<unknown>(
      () => {
        if (s.stream === q) delete s.stream;
        for (const fn of s.streamEnded) fn();
      },
      { maxItems: this.limits.streamMessages },
    );
    s.stream = q;
    return q;
  }

  /** Sends a server notification on the session's stream, when one is open. */
  notify(s: McpSession, method: string, params: Record<string, unknown>): boolean {
    if (!s.stream || s.stream.isClosed) return false;
    s.stream.push({ jsonrpc: '2.0', method, params });
    return true;
  }

  /** Why `owner` may not open one more `subscriptions/listen` stream now; undefined: it may. */
  listenRefusal(owner: string): ListenRefusal | undefined {
    if (this.listeners.size >= this.limits.listeners)
      return {
        code: 'MCP_LISTENERS_FULL',
        message: 'too many subscription streams are open; try again later',
      };
    let own = 0;
    for (const l of this.listeners) if (l.owner === owner) own++;
    if (own >= this.limits.listenersPerPrincipal)
      return {
        code: 'MCP_TOO_MANY_LISTENERS',
        message: `a principal holds at most ${this.limits.listenersPerPrincipal} subscription streams; close one first`,
      };
    return undefined;
  }

  /**
   * Opens a `subscriptions/listen` stream of `owner`: the acknowledgment of what it will hear
   * first, then each notification it opted in to, tagged with its id. `honored` adds opt-ins the
   * server serves itself (its own resource URIs); `onEnd` runs once when the stream ends.
   * MCP_LISTENERS_FULL past the process's bound, MCP_TOO_MANY_LISTENERS past the principal's.
   */
  listen(
    id: string | number,
    asked: Record<string, unknown>,
    owner: string,
    onEnd?: () => void,
  ): Result<OpenListen, ListenRefusal> {
    const refused = this.listenRefusal(owner);
    if (refused) return { ok: false, error: refused };
    const lists = new Set(Object.keys(LIST_OPT_INS).filter((k) => asked[k] === true));
    const uris = listenUris(asked, this.limits.subscriptions);
    const listener: Listener = {
      id,
      owner,
      lists,
      uris,
      queue: new EventQueue<unknown>(
        () => {
          this.listeners.delete(listener);
          onEnd?.();
        },
        { maxItems: this.limits.streamMessages },
      ),
    };
    this.listeners.add(listener);
    const notifications: Record<string, unknown> = {};
    for (const k of lists) notifications[k] = true;
    if (asked.resourceSubscriptions !== undefined) notifications.resourceSubscriptions = [...uris];
    this.tell(listener, 'notifications/subscriptions/acknowledged', { notifications });
    return ok({ queue: listener.queue, tell: (m, p) => this.tell(listener, m, p) });
  }

  private tell(l: Listener, method: string, params: Record<string, unknown>): void {
    const own = params._meta && typeof params._meta === 'object' ? params._meta : {};
    const _meta = { ...own, 'io.modelcontextprotocol/subscriptionId': l.id };
    l.queue.push({ jsonrpc: '2.0', method, params: { ...params, _meta } });
  }

  /**
   * Sends a server notification to every session with an open stream, and a list change to every
   * listener that opted in to it; returns how many got it.
   */
  notifyAll(method: string, params: Record<string, unknown> = {}): number {
    let sent = 0;
    for (const s of this.byId.values()) if (this.notify(s, method, params)) sent++;
    const optIn = Object.keys(LIST_OPT_INS).find((k) => LIST_OPT_INS[k] === method);
    for (const l of this.listeners)
      if (optIn && l.lists.has(optIn)) {
        this.tell(l, method, params);
        sent++;
      }
    return sent;
  }

  /** Tells every session subscribed to `uri` that the resource changed; returns how many heard. */
  notifyUpdated(uri: string): number {
    let sent = 0;
    for (const s of this.byId.values())
      if (s.subscriptions.has(uri) && this.notify(s, 'notifications/resources/updated', { uri }))
        sent++;
    for (const l of this.listeners)
      if (l.uris.has(uri)) {
        this.tell(l, 'notifications/resources/updated', { uri });
        sent++;
      }
    return sent;
  }

  async end(id: string): Promise<boolean> {
    const s = this.byId.get(id);
    if (!s) return false;
    this.byId.delete(id);
    s.stream?.close();
    for (const answer of s.pending.values()) answer({ error: { message: 'the session ended' } });
    s.pending.clear();
    for (const c of s.cleanups) await Promise.resolve(c()).catch(() => {});
    return true;
  }

  async endAll(): Promise<void> {
    for (const l of [...this.listeners]) l.queue.close();
    await Promise.all([...this.byId.keys()].map((id) => this.end(id)));
  }

  /** Unused past the limit, and not listening on its stream (an open stream is a client still there). */
  private idle(s: McpSession): boolean {
    return this.now() - s.lastSeen > this.limits.sessionIdleMs && (!s.stream || s.stream.isClosed);
  }

  /** Ends every idle session (run at each `open`, so abandoned ones do not wait for a full table). */
  sweep(): void {
    for (const s of [...this.byId.values()]) if (this.idle(s)) void this.end(s.id);
  }
}
