/**
 * @module lib/auth/secret — random bearer secrets and their stored form: a 256-bit random value shown
 * once, kept only as its SHA-256 (looked up by digest, so timing never depends on the token's characters).
 */

/** Bearer tokens start with this, so a leaked one is recognisable (and tests can grep for it). */
const TOKEN_PREFIX = 'lume_';

/** A fresh secret: `prefix` + 32 random bytes in base64url (43 characters). */
export function newSecret(prefix = TOKEN_PREFIX): string {
  return prefix + Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('base64url');
}

/** SHA-256 of a secret, lower-case hex: what is stored instead of it. */
export function hashSecret(secret: string): string {
  return new Bun.CryptoHasher('sha256').update(secret).digest('hex');
}
