/** @module hub/mesh/trust — the optional join token: constant-time checks and the open-network warning. */

import { timingSafeEqual } from 'node:crypto';

/** True for addresses only this machine can reach. */
function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || host === '[::1]' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

/** Compares a presented token with the configured one without leaking where they differ. No token configured admits everyone. */
export function tokenAccepted(expected: string | undefined, presented: unknown): boolean {
  if (!expected) return true;
  if (typeof presented !== 'string') return false;
  const a = new Bun.CryptoHasher('sha256').update(expected).digest();
  const b = new Bun.CryptoHasher('sha256').update(presented).digest();
  return timingSafeEqual(a, b);
}

/** Reads `Authorization: Bearer <token>`. */
export function bearer(req: Request): string | undefined {
  const h = req.headers.get('authorization');
  return h?.startsWith('Bearer ') ? h.slice(7) : undefined;
}

/** The start-up warning for a hub reachable from other machines without a token, or undefined. */
export function trustWarning(host: string, token: string | undefined): string | undefined {
  if (token || isLoopback(host)) return undefined;
  return `mesh hub bound to ${host} without MESH_TOKEN: anyone who can reach this port can join projects, read history and delete projects`;
}
