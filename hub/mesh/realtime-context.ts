/**
 * @module hub/mesh/realtime-context — what the parts of the hub's `/v1/connect` side share: the
 * store, the cluster, the roster, the socket writer, the delivery stream and the project
 * watchers, one object per hub (made in hub/mesh/realtime.ts, read-only; each presence is a
 * class that owns its state, hub/mesh/roster.ts).
 */

import type { Log } from '../../lib/log.ts';
import type { MeshLimits } from '../../lib/mesh/limits.ts';
import type { MeshStore } from '../../lib/mesh/store.ts';
import type { MeshMessage } from '../../lib/mesh/wire.ts';
import type { MeshCluster } from './cluster.ts';
import type { Presence, Roster } from './roster.ts';
import type { SocketOut, WS } from './socket-out.ts';
import type { createDeliveryStream } from './stream.ts';
import type { Timers } from './timers.ts';

/** What this hub knew of a message it sent: the local recipients it chose (for `disconnected` outcomes). */
export interface LocalSend {
  frozen: Presence[];
}

/** What a watcher of a project (the console) hears: the roster after each change, and each new message. */
export type ProjectEvent =
  | { type: 'roster'; peers: { name: string; presenceId: string; joinedAt: number }[] }
  | { type: 'message'; message: MeshMessage };

export interface RealtimeContext {
  readonly store: MeshStore;
  readonly log: Log;
  readonly now: () => number;
  readonly limits: MeshLimits;
  readonly timers: Timers;
  readonly cluster: MeshCluster;
  readonly roster: Roster;
  readonly io: SocketOut;
  readonly stream: ReturnType<typeof createDeliveryStream<LocalSend>>;
  readonly watchers: Map<string, Set<(e: ProjectEvent) => void>>;
  /** Whether a `hello` may claim, given its socket and the token it carries. */
  readonly admit: (ws: WS, token: unknown) => boolean;
}
