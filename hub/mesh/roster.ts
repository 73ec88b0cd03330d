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
  /** Frames that arrived while the hello was being answered (claims wait for the store); handled after the claim. */
  early?: (string | Buffer)[];
}

export interface Presence {
  project: string;
  name: string;
  presenceId: string;
  joinedAt: number;
  /** The current socket; a resume swaps it for the new one. */
  ws: ServerWebSocket<MeshSocketData>;
  open: boolean;
  /** Heartbeat pings sent since the last pong. */
  missed: number;
  /** SHA-256 of the resume secret given at claim; the secret itself is never kept. */
  resumeHash: Buffer;
  /**
   * Messages at or below this sequence are not delivered live: the claim's head (a fresh claim
   * starts after it) or what the last recovery replayed.
   */
  liveAfter: number;
  /** False while a claim is being answered: deliveries wait in `backlog` until `claimed` is sent. */
  ready: boolean;
  backlog: MeshMessage[];
  leaveReason?: LeaveReason;
  /** Sends waiting behind one that first reads the cluster's roster (they keep their order). */
  sending?: Promise<unknown>;
  /** Deliveries waiting for this presence's acknowledgement: messageId -> sender presenceId. */
  inbound: Map<string, string>;
}

export const peerOf = (p: Presence): Peer => ({ name: p.name, presenceId: p.presenceId });

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
      const p: Presence = {
        project,
        name,
        presenceId,
        joinedAt,
        ws,
        open: true,
        missed: 0,
        resumeHash,
        liveAfter: 0,
        ready: false,
        backlog: [],
        inbound: new Map(),
      };
      names.set(name, p);
      byId.set(p.presenceId, p);
      return p;
    },
    remove(p: Presence): void {
      p.open = false;
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
