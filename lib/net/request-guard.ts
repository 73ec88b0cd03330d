/**
 * @module lib/net/request-guard — what every process does before its routes see a request: a `Host`
 * that is not a host name or address (with an optional port), or a target Bun cannot turn into a
 * URL, answers 400 `BAD_HOST` (never the 500 a thrown `new URL` would give), and `serveDefaults`
 * turns off Bun's development error page, whatever NODE_ENV says, so an escaped throw answers a
 * coded 500 with no source lines or paths.
 */

import { codedError } from './coded.ts';

/** A DNS name, an IPv4 address or a bracketed IPv6 address, then an optional port. */
const HOST =
  /^(?:[a-z0-9_](?:[a-z0-9_-]{0,62})(?:\.[a-z0-9_](?:[a-z0-9_-]{0,62}))*\.?|\[[0-9a-f:.]{2,45}\])(?::(\d{1,5}))?$/i;

/** The last `Host` found well formed: the same one again is not matched again. */
let lastGood = '';

/** Whether a `Host` header value is a host with an optional port no larger than 65535. */
function isWellFormedHost(host: string): boolean {
  if (host === lastGood) return true;
  if (host.length === 0 || host.length > 260) return false;
  const m = HOST.exec(host);
  const ok = m !== null && (m[1] === undefined || Number(m[1]) <= 65535);
  if (ok) lastGood = host;
  return ok;
}

/** The 400 a malformed request gets, or undefined when its Host and URL can be read. */
function malformedRequest(req: Request): Response | undefined {
  const host = req.headers.get('host');
  if (host !== null && !isWellFormedHost(host))
    return codedError('BAD_HOST', 'the Host header is not a host name or address');
  if (!URL.canParse(req.url))
    return codedError('BAD_HOST', 'the request target and Host do not make a URL');
  return undefined;
}

/** Wraps a fetch handler so a malformed request is answered before the handler runs. */
export function guardRequests<A extends unknown[]>(
  handler: (req: Request, ...rest: A) => Response | Promise<Response>,
): (req: Request, ...rest: A) => Promise<Response> {
  return async (req, ...rest) => malformedRequest(req) ?? handler(req, ...rest);
}

/**
 * Options every Bun.serve of the kit takes: no development mode (Bun's error page shows the
 * checkout's paths and source), and a coded 500 for anything a handler threw.
 */
export const serveDefaults = Object.freeze({
  development: false,
  error: () => codedError('INTERNAL', 'Internal error'),
});
