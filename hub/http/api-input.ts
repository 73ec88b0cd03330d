/**
 * @module hub/http/api-input — what the console API accepts: node names and capability ids, the
 * trace page's query, and the JSON object a POST carries (read under its limit).
 */

import { isPlainObject } from '../../lib/json/guards.ts';
import { PRINCIPAL_NAME } from '../../lib/auth/principal.ts';
import { parseJsonBody, readBodyBytes } from '../../lib/body.ts';
import type { TraceOutcome, TraceQuery } from '../../lib/fleet/trace.ts';
import { refuse } from './api-replies.ts';

export const CAPABILITY = /^[a-z][a-z0-9-]*(\.[a-z][a-z0-9-]*)+$/;
const OUTCOMES: ReadonlySet<string> = new Set(['ok', 'failed', 'empty']);
const MAX_INVOKE_BODY = 64 * 1024;

/** The trace page's query from its URL parameters, or why they are refused. */
export function traceQuery(params: URLSearchParams): TraceQuery | string {
  const q: TraceQuery = {};
  for (const [key, value] of params) {
    if (key === 'limit' || key === 'before') {
      const n = Number(value);
      if (!/^\d+$/.test(value) || n < 1 || n > Number.MAX_SAFE_INTEGER)
        return `${key} must be a positive integer`;
      q[key] = n;
    } else if (key === 'from' || key === 'to') {
      if (!PRINCIPAL_NAME.test(value)) return `${key} must be a node name`;
      q[key] = value;
    } else if (key === 'capability') {
      if (!CAPABILITY.test(value)) return 'capability must be a capability id';
      q.capability = value;
    } else if (key === 'outcome') {
      if (!OUTCOMES.has(value)) return 'outcome must be ok, failed or empty';
      q.outcome = value as TraceOutcome;
    } else if (key === 'traceId') {
      if (!/^[0-9a-f]{32}$/.test(value)) return 'traceId must be 32 lower-case hex digits';
      q.traceId = value;
    } else return `unknown parameter ${key}`;
  }
  return q;
}

/**
 * The JSON object a POST carries, or the refusal to answer. The access policy has already
 * refused other origins and bodies that are not JSON; this reads the body under its limit.
 */
export async function postedObject(req: Request): Promise<Record<string, unknown> | Response> {
  if (!(req.headers.get('content-type') ?? '').startsWith('application/json'))
    return refuse('BAD_REQUEST', 'send application/json');
  const bytes = await readBodyBytes(req, MAX_INVOKE_BODY).catch(() => undefined);
  if (!bytes) return refuse('TOO_LARGE', `body must be under ${MAX_INVOKE_BODY} bytes`);
  const parsed = parseJsonBody(new TextDecoder().decode(bytes));
  if (!parsed.ok)
    return parsed.error.code === 'BAD_JSON'
      ? refuse('BAD_REQUEST', 'body is not JSON')
      : refuse(parsed.error.code, parsed.error.message);
  const body = parsed.result;
  if (!isPlainObject(body)) return refuse('BAD_REQUEST', 'body must be a JSON object');
  return body as Record<string, unknown>;
}
