/**
 * @module hub/workbench/skills/answer — how a hub capability answers a coded outcome: the success
 * as it is, a failure raised the one way a capability reports one (CapabilityError), its code
 * unchanged.
 */

import { CapabilityError } from '../../../lib/catalog/catalog.ts';
import type { Failure, Result } from '../../../lib/errors/result.ts';

const raise = (e: Failure, what?: string) =>
  new CapabilityError(e.code, what ? `${what}: ${e.message}` : e.message);

/** The result of a successful outcome; `what` names the node asked, for the failure's message. */
export function resultOf<T>(r: Result<T, Failure>, what?: string): T {
  if (r.ok) return r.result;
  throw raise(r.error, what);
}

/** An outcome that is itself the answer (`{ok: true, …fields}`, as entity alignment returns). */
export function unlessFailed<S extends { ok: true }, F extends Failure>(
  r: S | { ok: false; error: F },
): S {
  if (!r.ok) throw raise(r.error);
  return r;
}
