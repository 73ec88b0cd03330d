/**
 * @module hub/mesh/trust — the mesh's own join token, for a mesh server used without the hub's
 * access policy (hub/http/access.ts): constant-time checks of `hello` tokens and bearer headers.
 */

import { timingSafeEqual } from 'node:crypto';

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
