/**
 * @module hub/fleet/join-options — what the hub's join service is made with: the live fleet, the
 * fleet files read and written, the data folder, how the ring reloads, who may join, and its
 * bounds.
 */

import type { AuthOutcome } from '../../lib/auth/access.ts';
import type { Fleet } from '../../lib/fleet/config.ts';
import type { Log } from '../../lib/log.ts';

export interface JoinServiceOptions {
  /** The hub's live fleet: a join adds to its nodes in place. */
  fleet: Fleet;
  /** The fleet file read at start, and the one written (they differ when the first is fixtures/). */
  from: string;
  to: string;
  dataDir: string;
  /** Loads the hub's ring again after it changed. */
  reload: () => Promise<void>;
  /** Who sent the request: only a bearer token's principal may join a node. */
  authenticate: (req: Request) => AuthOutcome;
  log: Log;
  fetch?: typeof fetch;
  timeoutMs?: number;
  /** Joins waiting for their turn at most (default 16); more get JOIN_BUSY. */
  maxWaiting?: number;
}
