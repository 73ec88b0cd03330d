/**
 * @module lib/errors/as-data — how a coded failure travels inside an A2A message: beside the text for
 * people, a data part `{"error": {"code", "message"}}` that the receiver reads as data. A code is
 * never parsed back out of the text.
 */

import type { Failure } from './result.ts';

/** A code a receiver accepts from another node: a short identifier, nothing that could mean more. */
const CODE = /^[A-Za-z][A-Za-z0-9_.-]{0,63}$/;

/** The status-message parts for a failure: its message as text, then the failure as data. */
export function failureParts(
  failure: Failure,
): [{ text: string }, { data: { error: Failure }; mediaType: 'application/json' }] {
  const error: Failure = {
    code: failure.code,
    message: failure.message,
    ...(failure.field ? { field: failure.field } : {}),
  };
  return [{ text: failure.message }, { data: { error }, mediaType: 'application/json' }];
}

/** The failure a message's parts carry as data, if one does. */
export function codedFailureOf(parts: readonly unknown[]): Failure | undefined {
  for (const p of parts) {
    const error = (
      p as { data?: { error?: { code?: unknown; message?: unknown; field?: unknown } } } | null
    )?.data?.error;
    if (!error || typeof error.code !== 'string' || !CODE.test(error.code)) continue;
    const message = typeof error.message === 'string' ? error.message.slice(0, 2000) : error.code;
    return typeof error.field === 'string'
      ? { code: error.code, message, field: error.field.slice(0, 200) }
      : { code: error.code, message };
  }
  return undefined;
}
