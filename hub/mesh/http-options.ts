/**
 * @module hub/mesh/http-options — what the mesh's HTTP routes are made with: the store, the
 * realtime side, the join token, the limits and when the hub started.
 */

import type { MeshLimits } from '../../lib/mesh/limits.ts';
import type { MeshStore } from '../../lib/mesh/store.ts';
import type { Realtime } from './realtime.ts';

export interface MeshHttpOptions {
  store: MeshStore;
  realtime: Realtime;
  token?: string;
  limits: MeshLimits;
  startedAt: number;
}
