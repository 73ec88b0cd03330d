/**
 * @module lib/peer/ed25519 — Ed25519 for the peer channel: Bun's native crypto on the hot path
 * where the runtime has it, @noble/ed25519 otherwise (both checked against the same vectors),
 * and the public key of a seed.
 */

import { createPrivateKey, createPublicKey, sign as cryptoSign, type KeyObject } from 'node:crypto';
import * as ed from '@noble/ed25519';
import { sha512 } from '@noble/hashes/sha2.js';

ed.hashes.sha512 = sha512;

const utf8 = new TextEncoder();

export interface Ed25519Backend {
  readonly name: 'native' | 'noble';
  sign(seed: Uint8Array, message: Uint8Array): Promise<Uint8Array>;
  /** False for any signature that does not verify, including malformed keys; never throws. */
  verify(publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): Promise<boolean>;
}

export const nobleEd25519: Ed25519Backend = Object.freeze({
  name: 'noble' as const,
  sign: async (seed: Uint8Array, message: Uint8Array) => ed.sign(message, seed),
  verify: async (publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array) => {
    try {
      return ed.verify(signature, message, publicKey, { zip215: false });
    } catch {
      return false;
    }
  },
});

// RFC 8410 PKCS#8 prefix for a raw 32-byte Ed25519 seed.
const PKCS8_PREFIX = new Uint8Array([
  0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x04, 0x22, 0x04, 0x20,
]);
const ALG = { name: 'Ed25519' } as const;
// Our bytes never live on a SharedArrayBuffer; this only narrows the TypeScript type for subtle.
const bs = (b: Uint8Array) => b as Uint8Array<ArrayBuffer>;

/**
 * Ed25519 through Bun's native crypto; imported keys are cached per key-bytes object. Signing
 * uses node:crypto synchronously (about 20 µs, no thread hop); verifying uses crypto.subtle,
 * which runs on Bun's worker threads and so overlaps with request handling.
 */
export function nativeEd25519(): Ed25519Backend {
  const pubs = new WeakMap<Uint8Array, Promise<CryptoKey | null>>();
  const privs = new WeakMap<Uint8Array, KeyObject>();
  const pub = (k: Uint8Array) => {
    let p = pubs.get(k);
    if (!p)
      pubs.set(
        k,
        (p = crypto.subtle.importKey('raw', bs(k), ALG, false, ['verify']).catch(() => null)),
      );
    return p;
  };
  const priv = (seed: Uint8Array) => {
    let k = privs.get(seed);
    if (!k) {
      const der = new Uint8Array(48);
      der.set(PKCS8_PREFIX);
      der.set(seed, 16);
      privs.set(
        seed,
        (k = createPrivateKey({ key: Buffer.from(der), format: 'der', type: 'pkcs8' })),
      );
    }
    return k;
  };
  return Object.freeze({
    name: 'native' as const,
    sign: async (seed: Uint8Array, message: Uint8Array) =>
      new Uint8Array(cryptoSign(null, message, priv(seed))),
    verify: async (publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array) => {
      const key = await pub(publicKey);
      if (!key) return false;
      try {
        return await crypto.subtle.verify(ALG, key, bs(signature), bs(message));
      } catch {
        return false;
      }
    },
  });
}

/**
 * The Ed25519 public key of a 32-byte seed (used when keys are made and loaded). node:crypto
 * does it without noble's precomputed tables, which cost a node about 15 MB of memory; noble is
 * the fallback where node:crypto lacks Ed25519.
 */
export function ed25519PublicKey(seed: Uint8Array): Uint8Array {
  try {
    const der = new Uint8Array(48);
    der.set(PKCS8_PREFIX);
    der.set(seed, 16);
    const spki = createPublicKey(
      createPrivateKey({ key: Buffer.from(der), format: 'der', type: 'pkcs8' }),
    ).export({ format: 'der', type: 'spki' });
    return new Uint8Array(spki.subarray(spki.length - 32));
  } catch {
    return ed.getPublicKey(seed);
  }
}

let detected: Promise<Ed25519Backend> | undefined;
/** The fastest Ed25519 the runtime offers: the native one when it signs and verifies, else noble. */
export function detectEd25519(): Promise<Ed25519Backend> {
  return (detected ??= (async () => {
    try {
      const probe = nativeEd25519();
      const seed = new Uint8Array(32).fill(7);
      const msg = utf8.encode('probe');
      const sig = await probe.sign(seed, msg);
      return (await probe.verify(ed25519PublicKey(seed), msg, sig)) ? probe : nobleEd25519;
    } catch {
      return nobleEd25519;
    }
  })());
}
