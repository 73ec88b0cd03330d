/**
 * @module hub/mesh/cluster — what a hub needs to know about the other hubs on its database: the
 * presences they hold, a cluster-wide claim of a roster name, and the events that cross hubs
 * (commits, presence changes, delivery outcomes). `singleHub()` is the cluster of one hub
 * (SQLite); `hub/mesh/postgres-cluster.ts` is the shared one.
 */

import type { DeliveryFrame, LeaveReason } from '../../lib/mesh/wire.ts';

/** A presence held by another hub. */
export interface RemotePeer {
  project: string;
  name: string;
  presenceId: string;
  joinedAt: number;
  hubId: string;
}

/** Who holds a name when a claim finds it taken. */
export interface NameHolder {
  presenceId: string;
  hubId: string;
  joinedAt: number;
  resumeHash: Buffer;
}

export type ClusterEvent =
  /** Another hub committed messages of `project` up to `sequence`. */
  | { type: 'committed'; project: string; sequence: number }
  | { type: 'joined'; peer: RemotePeer }
  | { type: 'left'; peer: RemotePeer; reason: LeaveReason }
  /** A presence moved to `hubId` (its client resumed there); its old hub cuts the old socket. */
  | { type: 'moved'; peer: RemotePeer }
  /** One of this hub's presences was removed by another hub (this hub's lease had expired). */
  | { type: 'swept'; presenceId: string }
  /** A delivery outcome for a sender that may be on this hub: the frame, already encoded. */
  | { type: 'delivery'; senderPresenceId: string; frame: string }
  /** This hub's lease ran out (it was cut off from the database too long): its presences are gone from the cluster. */
  | { type: 'lease_lost' }
  /** The channel was re-established: events in between were not heard, so heads must be re-read. */
  | { type: 'resync' };

export interface MeshCluster {
  readonly hubId: string;
  /** False for a hub alone: then the remote view is always empty and complete. */
  readonly shared: boolean;
  /**
   * Reads a project's presences on other hubs from the database into the view. The view follows
   * notifications, which can trail a just-made claim: a claim and a send to an unknown name read first.
   */
  refresh(project: string): Promise<void>;
  /** Presences of `project` on other hubs, in join order. */
  remote(project: string): RemotePeer[];
  remoteByName(project: string, name: string): RemotePeer | undefined;
  /** Claims a name across the cluster; a taken name answers its holder (a resume is checked against its hash). */
  claim(c: {
    project: string;
    name: string;
    presenceId: string;
    joinedAt: number;
    resumeHash: Buffer;
  }): Promise<{ claimed: true } | { claimed: false; holder: NameHolder }>;
  /** Moves a held presence to this hub; false when it is no longer held. */
  takeOver(project: string, name: string, presenceId: string): Promise<boolean>;
  /** Gives a name up (the presence left this hub). */
  release(project: string, name: string, presenceId: string, reason: LeaveReason): void;
  /** Sends a delivery outcome to the hub of a sender that is not on this hub. */
  deliver(senderPresenceId: string, frame: DeliveryFrame): void;
  onEvent(handler: (e: ClusterEvent) => void): void;
  close(): Promise<void>;
}

/** The cluster of one hub: every presence is local, nothing crosses hubs. */
export function singleHub(): MeshCluster {
  return {
    hubId: 'local',
    shared: false,
    refresh: async () => {},
    remote: () => [],
    remoteByName: () => undefined,
    claim: async () => ({ claimed: true }),
    takeOver: async () => true,
    release: () => {},
    deliver: () => {},
    onEvent: () => {},
    close: async () => {},
  };
}
