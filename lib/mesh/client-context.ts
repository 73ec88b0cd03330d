/**
 * @module lib/mesh/client-context — what the parts of the mesh client share: the hub addresses and
 * their HTTP clients, the backoff, the events and one membership per agent (made in
 * lib/mesh/client.ts), each membership a class that owns its state across reconnects.
 */

import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { definedOnly } from '../defined.ts';
import { createActivity } from './activity.ts';
import type {
  ClientEvents,
  ClientTimers,
  MembershipState,
  MembershipStatus,
  MeshClientOptions,
} from './client-types.ts';
import type { MeshConnection } from './connection.ts';
import { createEmitter } from './emitter.ts';
import type { ClientCode, MeshError } from './errors.ts';
import { createHubClient, type HubClient } from './http-client.ts';
import type { RememberedConnection } from './memory.ts';
import type { StreamPosition } from './wire.ts';

/** One agent's presence as the client keeps it, across reconnects; its state changes go through these methods. */
export class Membership {
  readonly activity: ReturnType<typeof createActivity>;
  #state: MembershipState = 'connecting';
  #desired = true;
  #conn: MeshConnection | undefined;
  #delay: number;
  #timer: unknown;
  #retryInMs: number | undefined;
  #lastError: MeshError<ClientCode> | undefined;
  /** Given by the hub at a fresh claim; held in memory (and in the 0600 memory file), never logged. */
  #resumeSecret: string | undefined;
  /** The project's stream epoch and the highest sequence handled: where recovery starts. */
  #position: StreamPosition | undefined;
  /** Index into the hub addresses of the one to try next. */
  #hub = 0;
  /** Set by an explicit connect until its first save: that save replaces a disconnect's tombstone. */
  #revive = true;

  constructor(
    private readonly ctx: ClientContext,
    readonly agentId: string,
    readonly project: string,
    readonly name: string,
    saved?: RememberedConnection,
  ) {
    this.#delay = ctx.base;
    this.activity = createActivity(ctx.now);
    if (saved && saved.project === project && saved.name === name) {
      this.#resumeSecret = saved.resumeSecret || undefined;
      if (saved.epoch !== undefined && saved.since !== undefined)
        this.#position = { epoch: saved.epoch, since: saved.since };
    }
  }

  get desired(): boolean {
    return this.#desired;
  }
  get conn(): MeshConnection | undefined {
    return this.#conn;
  }
  get resumeSecret(): string | undefined {
    return this.#resumeSecret;
  }
  get position(): StreamPosition | undefined {
    return this.#position;
  }
  get revive(): boolean {
    return this.#revive;
  }
  /** The hub address to try next (or the one this presence is on). */
  get hubUrl(): string {
    return this.ctx.urls[this.#hub]!;
  }

  /** Enters `state` and tells the client's listeners (with the last error, if any). */
  enter(state: MembershipState): void {
    this.#state = state;
    const { agentId, project, name } = this;
    const error = this.#lastError;
    this.ctx.events.emit('presence-changed', { agentId, project, name, state, error });
  }

  /** Records a refusal or a failure; `stop` also ends the retries. */
  failed(error: MeshError<ClientCode>, stop = false): void {
    this.#lastError = error;
    if (!stop) return;
    this.#desired = false;
    this.#retryInMs = undefined;
    this.enter('stopped');
  }

  /** Schedules `attempt` at the next backoff delay, on the next hub: the last one just failed or dropped. */
  retry(attempt: () => void): void {
    if (!this.#desired) return;
    this.#hub = (this.#hub + 1) % this.ctx.urls.length;
    this.#retryInMs = this.#delay;
    this.enter('reconnecting');
    this.#timer = this.ctx.timers.setTimeout(() => {
      this.#timer = undefined;
      attempt();
    }, this.#delay);
    this.#delay = Math.min(this.#delay * 2, this.ctx.cap);
  }

  /** A claim succeeded: the backoff resets. */
  connected(conn: MeshConnection): void {
    this.#conn = conn;
    this.#delay = this.ctx.base;
    this.#retryInMs = this.#lastError = undefined;
  }

  /** `conn` closed; answers whether to reconnect (the membership is still wanted). */
  dropped(conn: MeshConnection, error: MeshError<ClientCode>): boolean {
    if (this.#conn === conn) this.#conn = undefined;
    if (!this.#desired) return false;
    this.#lastError = error;
    return true;
  }

  /** The first save after an explicit connect is done. */
  revived(): void {
    this.#revive = false;
  }

  /** What a claim says about the stream: the resume secret (when fresh) and where recovery starts. */
  claimed(resumeSecret: string | undefined, position: StreamPosition): void {
    if (resumeSecret) this.#resumeSecret = resumeSecret;
    this.#position = position;
  }

  /** Moves the position past `sequence`; false when it was handled already (a replay overlapping a late delivery). */
  handles(sequence: number): boolean {
    if (!this.#position) return true;
    if (sequence <= this.#position.since) return false;
    this.#position = { epoch: this.#position.epoch, since: sequence };
    return true;
  }

  /** No more attempts; answers the connection, which the caller closes. */
  end(): MeshConnection | undefined {
    this.#desired = false;
    if (this.#timer !== undefined) this.ctx.timers.clearTimeout(this.#timer);
    this.#timer = undefined;
    const conn = this.#conn;
    this.#conn = undefined;
    return conn;
  }

  /** What is remembered for an agent: never the secret in a log, only in the memory store. */
  remembered(): RememberedConnection {
    const { project, name } = this;
    const p = this.#position;
    return definedOnly({
      project,
      name,
      resumeSecret: this.#resumeSecret,
      epoch: p?.epoch,
      since: p?.since,
    });
  }

  status(): MembershipStatus {
    const { agentId, project, name, activity } = this;
    const conn = this.#conn;
    return definedOnly({
      agentId,
      project,
      name,
      state: this.#state,
      peers: (conn?.peers() ?? []).map((p) => ({ ...p, activity: activity.peer(p.name) })),
      activity: activity.self(),
      self: conn?.self,
      hubUrl: conn ? this.hubUrl : undefined,
      lastError: this.#lastError,
      retryInMs: this.#retryInMs,
    });
  }
}

export interface ClientContext {
  readonly o: MeshClientOptions;
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
