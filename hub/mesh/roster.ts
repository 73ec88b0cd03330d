/** @module hub/mesh/roster — live presences: one per open, claimed socket, unique names per project. */

import type { ServerWebSocket } from 'bun';
import type { LeaveReason, Peer } from '../../lib/mesh/wire.ts';

/** Per-socket state kept in `ws.data`. */
export interface MeshSocketData {
  kind: 'mesh';
  presence?: Presence;
  helloTimer?: ReturnType<typeof setTimeout>;
  /** Set once the hub decided to close this socket; later frames are ignored. */
  closing: boolean;
}

export interface Presence {
  project: string;
  name: string;
  presenceId: string;
  joinedAt: number;
  ws: ServerWebSocket<MeshSocketData>;
  open: boolean;
  /** Cleared at each heartbeat ping, set again by the pong. */
  pongSeen: boolean;
  leaveReason?: LeaveReason;
  /** Deliveries waiting for this presence's acknowledgement: messageId -> sender presenceId. */
  inbound: Map<string, string>;
}

export const peerOf = (p: Presence): Peer => ({ name: p.name, presenceId: p.presenceId });

export type Roster = ReturnType<typeof createRoster>;

export function createRoster() {
  const byProject = new Map<string, Map<string, Presence>>();
  const byId = new Map<string, Presence>();
  return {
    /** Claims a name; undefined when the name is taken in that project. */
    claim(project: string, name: string, ws: ServerWebSocket<MeshSocketData>, joinedAt: number): Presence | undefined {
      let names = byProject.get(project);
      if (names?.has(name)) return undefined;
      if (!names) byProject.set(project, (names = new Map()));
      const p: Presence = { project, name, presenceId: crypto.randomUUID(), joinedAt, ws, open: true, pongSeen: true, inbound: new Map() };
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
