/**
 * @module lib/net/browser-guard — a node's browser boundary, the same rules the hub applies
 * (hub/http/access.ts): `Sec-Fetch-Site: cross-site` is refused except on the public reads (card,
 * health, capabilities, public keys), a state-changing request that carries an `Origin` must carry
 * one of the node's own origins. Bodies must be JSON too, and each binding refuses any other type
 * (or none) in its own protocol's shape (lib/a2a/jsonrpc/envelope.ts, lib/a2a/rest/binding.ts), so no form
 * or `text/plain` POST a foreign page can send without a preflight reaches a route. Clients outside
 * a browser send neither header and are judged by their proof alone.
 */

import { codedError } from './coded.ts';

/** What anyone may read from anywhere: what a client reads to learn how to call the node. */
const PUBLIC_READS = new Set([
  '/.well-known/agent-card.json',
  '/.well-known/agent.json',
  '/health',
  '/healthz',
  '/readyz',
  '/capabilities',
  '/peer/identity',
]);
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);
/**
 * The refusal of a request a browser page elsewhere could have sent, or undefined. `origins` are
 * the node's own (`http://127.0.0.1:<port>` and the like, and its public URL's).
 */
export function browserRefusal(req: Request, origins: ReadonlySet<string>): Response | undefined {
  const path = new URL(req.url).pathname;
  if (req.headers.get('sec-fetch-site') === 'cross-site' && !PUBLIC_READS.has(path))
    return codedError('FORBIDDEN_CROSS_SITE', 'requests from another site are refused');
  if (SAFE_METHODS.has(req.method)) return undefined;
  const origin = req.headers.get('origin');
  if (origin !== null && !origins.has(origin))
    return codedError('FORBIDDEN_ORIGIN', 'requests from another origin may only read');
  return undefined;
}

/** A process's own origins on `port`: the loopback names, a concrete bind address, and `extra`. */
export function ownOrigins(host: string, port: number, extra: string[] = []): Set<string> {
  const own = ['127.0.0.1', 'localhost', '[::1]'].map((h) => `http://${h}:${port}`);
  if (host !== '0.0.0.0' && host !== '::')
    own.push(`http://${host.includes(':') ? `[${host}]` : host}:${port}`);
  const more = extra.flatMap((u) => {
    try {
      return [new URL(u).origin];
    } catch {
      return [];
    }
  });
  return new Set([...own, ...more]);
}
