/**
 * @module hub/workbench/skills/answer — how a hub capability answers the outcome of a call it made:
 * the success as it is, a failure returned as a value with its code and field unchanged and its
 * message naming the node asked.
 */

import { ok, type Err, type Failure, type Result } from '../../../lib/errors/result.ts';

/** A failure a hub capability passes on: code and field as they came, the message after `what`. */
export function passedOn({ code, message, field }: Failure, what?: string): Err<Failure> {
  const text = what ? `${what}: ${message}` : message;
  return { ok: false, error: field ? { code, message: text, field } : { code, message: text } };
}

/** A call's outcome as a hub capability answers it; `what` names the node asked, for the failure's message. */
export function answerOf<T>(r: Result<T, Failure>, what?: string): Result<T> {
  return r.ok ? ok(r.result) : passedOn(r.error, what);
}

/** An outcome that is itself the answer (`{ok: true, …fields}`, as entity alignment returns). */
export function unlessFailed<S extends { ok: true }, F extends Failure>(
  r: S | { ok: false; error: F },
): Result<S> {
  return r.ok ? ok(r) : passedOn(r.error);
}
