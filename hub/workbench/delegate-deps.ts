/**
 * @module hub/workbench/delegate-deps — what the delegator is made with: the invoker, the fleet's
 * node names and members (to tell an executor), the hub's own tasks (to continue a delegation) and
 * the default executor.
 */

import type { Task } from '../../lib/a2a/types.ts';
import type { Principal } from '../../lib/auth/principal.ts';
import type { FleetInvoker } from '../../lib/fleet/invoke.ts';

/** A fleet member as the fleet view sees it: enough to tell an executor from other nodes. */
interface MemberView {
  name: string;
  online: boolean;
  skills: { id: string }[];
}

export interface DelegatorDeps {
  invoker: FleetInvoker;
  /** Names of the fleet's nodes (the hub is not one). */
  nodeNames: () => string[];
  /** The fleet view's nodes, to see which offer `exec.*`. */
  members: () => Promise<MemberView[]>;
  /**
   * Reads one of the hub's own tasks as `caller` (advancing it, as any read does); undefined when
   * there is none or it is another principal's.
   */
  findTask: (id: string, caller: Principal) => Promise<Readonly<Task> | undefined>;
  /** The executor when none is named (default `resolve`). */
  defaultExecutor?: string;
}
