/**
 * @module lib/peer/base64url — base64url as the peer channel writes it: plain encoding, and a
 * strict reader (right alphabet, right length, canonical form) that answers undefined otherwise.
 */

const B64URL = /^[A-Za-z0-9_-]*$/;

export function toB64url(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64url');
}

/** Strict base64url: right alphabet, right length, canonical encoding; otherwise undefined. */
export function fromB64url(text: string, bytes: number): Uint8Array | undefined {
  if (text.length !== Math.ceil((bytes * 4) / 3) || !B64URL.test(text)) return undefined;
  const out = new Uint8Array(Buffer.from(text, 'base64url'));
  return out.length === bytes && toB64url(out) === text ? out : undefined;
}
