/**
 * @module lib/errors/result — the one shape of an outcome: `{ok: true, result}` or `{ok: false, error}`
 * with a stable code. In process and on the wire it is the same object, so a result crosses a
 * process boundary as data and is never rebuilt from text.
 */

/** A coded failure: a stable code (see lib/errors/registry.ts), a message for people, the offending field. */
export interface Failure<C extends string = string> {
  code: C;
  message: string;
  field?: string;
}

/** How a call to another node ended without an answer of its own (lib/peer/client.ts, lib/fleet/message.ts). */
export type CallFailureKind =
  | 'unreachable'
  | 'timeout'
  | 'refused'
  | 'failed'
  | 'bad-answer'
  | 'bad-call';

/** A failed call to another node: the code is the node's own when it answered with one. */
export interface CallFailure extends Failure {
  kind: CallFailureKind;
  /** HTTP status of the answer, when there was one. */
  status?: number;
  /** The node that produced the error, when it is not the one called (a relay further down). */
  at?: string;
  /** The A2A task the failure belongs to, when there was one. */
  taskId?: string;
}

export type Ok<T = unknown> = { ok: true; result: T; summary?: string };
export type Err<E extends Failure = Failure> = { ok: false; error: E };
/** An expected outcome as a value; only bugs throw. `summary` is one line for people, when given. */
export type Result<T = unknown, E extends Failure = Failure> = Ok<T> | Err<E>;

export const ok = <T>(result: T): Ok<T> => ({ ok: true, result });

export const fail = <C extends string>(
  code: C,
  message: string,
  field?: string,
): Err<Failure<C>> => ({
  ok: false,
  error: field ? { code, message, field } : { code, message },
});
