/**
 * @module lib/metrics/answer-code — the error code a JSON answer carries: the code its builder says it
 * rendered is remembered beside the Response, so the request metrics (lib/metrics/http.ts) count
 * it without reading anything back; `errorCodeOf` finds it in an answer built elsewhere.
 */

import { A2A_ERRORS } from '../errors/a2a.ts';
import { OTHER } from './registry.ts';

const RPC_REASONS = new Map<number, string>(
  Object.entries(A2A_ERRORS).map(([reason, e]) => [e.rpc, reason]),
);

/** The code of a coded failure body: `error.code` text, an A2A reason in the details, or a JSON-RPC code's name. */
export function errorCodeOf(doc: unknown): string | undefined {
  const error = (doc as { error?: unknown } | null)?.error as Record<string, unknown> | undefined;
  if (!error || typeof error !== 'object') return undefined;
  if (typeof error.code === 'string') return error.code;
  for (const d of [error.data, error.details].flatMap((x) =>
    Array.isArray(x) ? x : x ? [x] : [],
  )) {
    const reason = (d as { reason?: unknown } | null)?.reason;
    if (typeof reason === 'string') return reason;
  }
  return typeof error.code === 'number' ? (RPC_REASONS.get(error.code) ?? OTHER) : undefined;
}

/** Answers whose code is known: the code, or null for an answer that carries none. Weak: gone with the answer. */
const told = new WeakMap<Response, string | null>();

/** A JSON answer of `doc`, and `code`, the error code it renders (null: none), for the request metrics. */
export function codedJsonResponse(doc: unknown, status: number, code: string | null): Response {
  const res = new Response(JSON.stringify(doc), {
    status,
    headers: { 'Content-Type': 'application/json' },
  });
  told.set(res, code);
  return res;
}

/** What the builder of `res` recorded: its code, null when it carries none, undefined when it was built elsewhere. */
export function answerCodeOf(res: Response): string | null | undefined {
  return told.get(res);
}
