/**
 * @module lib/peer/hashes — SHA-256 and HMAC for the peer channel: Bun's native hasher on the hot
 * path, @noble/hashes where Bun is absent and as the cross-check (the known-answer test runs
 * both), and the HKDF (node:crypto) that gives a node its `derived` key.
 */

import { hkdfSync } from 'node:crypto';
import { hmac } from '@noble/hashes/hmac.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex } from '@noble/hashes/utils.js';
import { toB64url } from './base64url.ts';

export interface HashBackend {
  readonly name: 'bun' | 'noble';
  sha256hex(bytes: Uint8Array): string;
  /** Prepares a key once; the returned function gives HMAC-SHA256(key, UTF-8 text) in base64url. */
  macFor(key: Uint8Array): (text: string) => string;
}

const utf8 = new TextEncoder();

export const nobleHashes: HashBackend = Object.freeze({
  name: 'noble' as const,
  sha256hex: (bytes: Uint8Array) => bytesToHex(sha256(bytes)),
  macFor: (key: Uint8Array) => (text: string) => toB64url(hmac(sha256, key, utf8.encode(text))),
});

export const bunHashes: HashBackend | undefined =
  typeof Bun === 'undefined'
    ? undefined
    : Object.freeze({
        name: 'bun' as const,
        sha256hex: (bytes: Uint8Array) => Bun.SHA256.hash(bytes, 'hex'),
        macFor: (key: Uint8Array) => {
          // Copying a keyed hasher skips the per-call key schedule.
          const keyed = new Bun.CryptoHasher('sha256', key);
          return (text: string) => keyed.copy().update(text).digest('base64url');
        },
      });

export const defaultHashes: HashBackend = bunHashes ?? nobleHashes;

/** HKDF-SHA256(fleet secret, info = "peer:" + node), 32 bytes: the node's `derived` key. */
export function derivedKey(secret: Uint8Array, node: string): Uint8Array {
  // Native: in JavaScript, the hashing ran hot enough at start to be JIT-compiled (memory).
  return new Uint8Array(hkdfSync('sha256', secret, new Uint8Array(0), `peer:${node}`, 32));
}
