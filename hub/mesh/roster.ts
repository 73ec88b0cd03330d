/**
 * @module hub/mesh/roster — this hub's live presences: one per claimed name per project, each on
 * its current socket, with the hash of the resume secret that lets its owner take it over from a
 * new socket (on this hub or another one sharing the database).
 */

import type { ServerWebSocket } from 'bun';
import { timingSafeEqual } from 'node:crypto';
import type { LeaveReason, MeshMessage, Peer } from '../../lib/mesh/wire.ts';

/** Per-socket state kept in `ws.data`. */
export interface MeshSocketData {
  kind: 'mesh';
  presence?: Presence;
  helloTimer?: ReturnType<typeof setTimeout>;
  /** Set once the hub decided to close this socket; later frames are ignored. */
  closing: boolean;
  /** Cut as a slow consumer: nothing more is queued for it, and it closes once its backlog is out. */
  cut?: boolean;
  /** The upgrade request was authenticated (a bearer token or a console session), so `hello` needs no token. */
  authenticated?: boolean;
  /** The principal the upgrade or the hello's token proved (an owner key); absent: none. */
  principal?: string;
  /** Admitted with the secret of the hub's own console presences: the hub names its principal. */
  own?: boolean;
  /** Frames that arrived while the hello was being answered (claims wait for the store); handled after the claim. */
  early?: (string | Buffer)[];
}

type PresenceSocket = ServerWebSocket<MeshSocketData>;

/** One live presence; its state changes go through these methods. */
export class Presence {
  #ws: PresenceSocket;
  #open = true;
  /** Heartbeat pings sent since the last pong. */
  #missed = 0;
  /**
   * Messages at or below this sequence are not delivered live: the claim's head (a fresh claim
   * starts after it) or what the last recovery replayed.
   */
  #liveAfter = 0;
  /** False while a claim is being answered: deliveries wait in `backlog` until `claimed` is sent. */
  #ready = false;
  #backlog: MeshMessage[] = [];
  #leaveReason: LeaveReason | undefined;
  /** Sends waiting behind one that first reads the cluster's roster (they keep their order). */
  #sending: Promise<unknown> | undefined;
  /** Deliveries waiting for this presence's acknowledgement: messageId -> sender presenceId. */
  readonly #inbound = new Map<string, string>();

  constructor(
    readonly project: string,
    readonly name: string,
    readonly presenceId: string,
    readonly joinedAt: number,
    ws: PresenceSocket,
    /** SHA-256 of the resume secret given at claim; the secret itself is never kept. */
    readonly resumeHash: Buffer,
  ) {
    this.#ws = ws;
  }

  /** The current socket; a resume swaps it for the new one. */
  get ws(): PresenceSocket {
    return this.#ws;
  }
  get open(): boolean {
    return this.#open;
  }
  get ready(): boolean {
    return this.#ready;
  }
  get missed(): number {
    return this.#missed;
  }
  get leaveReason(): LeaveReason | undefined {
    return this.#leaveReason;
  }

  /** Out of the roster: nothing more is delivered to it. */
  end(): void {
    this.#open = false;
  }

  /** Why it is about to leave (the departure reports it). */
  leavingWith(reason: LeaveReason): void {
    this.#leaveReason = reason;
  }

  pinged(): void {
    this.#missed++;
  }

  ponged(): void {
    this.#missed = 0;
  }

  /** A takeover: the presence goes on over `ws`; deliveries wait until the new socket has its `claimed`. */
  moveTo(ws: PresenceSocket): void {
    this.#ws = ws;
    this.#missed = 0;
    this.#ready = false;
  }

  /** Live deliveries up to `sequence` are skipped (the claim's head, or what a recovery replays). */
  liveAfter(sequence: number): void {
    this.#liveAfter = sequence;
  }

  /**
   * What becomes of a delivery: held while the claim is answered (`overflow` past `maxBacklog`),
   * skipped when a replay covers it, else `send` (and it waits for its acknowledgement).
   */
  offer(m: MeshMessage, maxBacklog: number): 'send' | 'held' | 'skip' | 'overflow' {
    if (!this.#ready) {
      if (this.#backlog.length >= maxBacklog) return 'overflow';
      this.#backlog.push(m);
      return 'held';
    }
    if (m.sequence <= this.#liveAfter) return 'skip';
    this.awaitAck(m);
    return 'send';
  }

  /** `claimed` is out: deliveries go straight through; answers those held meanwhile. */
  markReady(): MeshMessage[] {
    this.#ready = true;
    const held = this.#backlog;
    this.#backlog = [];
    return held;
  }

  /** `m` was sent to this presence: its acknowledgement goes to the sender. */
  awaitAck(m: MeshMessage): void {
    this.#inbound.set(m.messageId, m.from.presenceId);
  }

  /** The sender waiting for this acknowledgement (now answered), if any. */
  acked(messageId: string): string | undefined {
    const sender = this.#inbound.get(messageId);
    this.#inbound.delete(messageId);
    return sender;
  }

  /** The deliveries still waiting for an acknowledgement (messageId, sender), no longer awaited. */
  dropAcks(): [string, string][] {
    const waiting = [...this.#inbound];
    this.#inbound.clear();
    return waiting;
  }

  /** Runs `fn` after the sends held before it; a promise it returns holds the later ones. */
  inTurn(fn: () => Promise<void> | undefined): void {
    const run = this.#sending ? this.#sending.then(fn) : fn();
    if (!run) return;
    this.#sending = run;
    void run.then(() => {
      if (this.#sending === run) this.#sending = undefined;
    });
  }
}

/** A presence as the sender of a message: with the principal its current socket proved, if any. */
export const peerOf = (p: Presence): Peer => {
  const principal = p.ws.data.principal;
  return principal
    ? { name: p.name, presenceId: p.presenceId, principal }
    : { name: p.name, presenceId: p.presenceId };
};

export type Roster = ReturnType<typeof createRoster>;

export function createRoster() {
  const byProject = new Map<string, Map<string, Presence>>();
  const byId = new Map<string, Presence>();
  return {
    /** Claims a name (with a presence id the cluster agreed to); undefined when the name is taken here. */
    claim(
      project: string,
      name: string,
      presenceId: string,
      ws: ServerWebSocket<MeshSocketData>,
      joinedAt: number,
      resumeHash: Buffer,
    ): Presence | undefined {
      let names = byProject.get(project);
      if (names?.has(name)) return undefined;
      if (!names) byProject.set(project, (names = new Map()));
      const p = new Presence(project, name, presenceId, joinedAt, ws, resumeHash);
      names.set(name, p);
      byId.set(p.presenceId, p);
      return p;
    },
    remove(p: Presence): void {
      p.end();
      byId.delete(p.presenceId);
      const names = byProject.get(p.project);
      if (names?.get(p.name) === p) names.delete(p.name);
      if (names?.size === 0) byProject.delete(p.project);
    },
    get: (project: string, name: string): Presence | undefined => byProject.get(project)?.get(name),
    byId: (presenceId: string): Presence | undefined => byId.get(presenceId),
    /** Presences of a project in join order. */
    list: (project: string): Presence[] => [...(byProject.get(project)?.values() ?? [])],
    count: (project: string): number => byProject.get(project)?.size ?? 0,
    all: (): Presence[] => [...byId.values()],
    get size() {
      return byId.size;
    },
  };
}

const sha256 = (s: string): Buffer =>
  Buffer.from(new Bun.CryptoHasher('sha256').update(s).digest());

/** A fresh resume secret (256 random bits, base64url) and the hash the hub keeps of it. */
export function newResumeSecret(): { secret: string; hash: Buffer } {
  const secret = Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('base64url');
  return { secret, hash: sha256(secret) };
}

/** True when `presented` is the secret behind `hash`; compared in constant time. */
export function resumeSecretMatches(hash: Buffer, presented: string): boolean {
  return timingSafeEqual(hash, sha256(presented));
}
