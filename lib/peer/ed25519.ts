/**
 * @module lib/peer/ed25519 — Ed25519 for the peer channel and signed cards: Bun's native crypto
 * where the runtime has it, @noble/ed25519 otherwise (both checked against the same vectors),
 * and the public key of a seed.
 */

import {
  createPrivateKey,
  createPublicKey,
  sign as cryptoSign,
  verify as cryptoVerify,
  type KeyObject,
} from 'node:crypto';
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
// RFC 8410 SubjectPublicKeyInfo prefix for a raw 32-byte Ed25519 public key.
const SPKI_PREFIX = new Uint8Array([
  0x30, 0x2a, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x03, 0x21, 0x00,
]);
const ALG = { name: 'Ed25519' } as const;

/** The node:crypto private key of a 32-byte seed. */
function privateKeyOf(seed: Uint8Array): KeyObject {
  const der = new Uint8Array(48);
  der.set(PKCS8_PREFIX);
  der.set(seed, 16);
  return createPrivateKey({ key: Buffer.from(der), format: 'der', type: 'pkcs8' });
}

let native: boolean | undefined;
/** Whether node:crypto signs and verifies Ed25519 here (probed once). */
function hasNative(): boolean {
  if (native !== undefined) return native;
  try {
    const seed = new Uint8Array(32).fill(7);
    const msg = utf8.encode('probe');
    const sig = cryptoSign(null, msg, privateKeyOf(seed));
    native = cryptoVerify(null, msg, publicKeyOf(ed25519PublicKey(seed)), sig);
  } catch {
    native = false;
  }
  return native;
}

/** The node:crypto public key of 32 raw bytes. @throws when they are not a key. */
function publicKeyOf(publicKey: Uint8Array): KeyObject {
  const der = new Uint8Array(44);
  der.set(SPKI_PREFIX);
  der.set(publicKey, 12);
  return createPublicKey({ key: Buffer.from(der), format: 'der', type: 'spki' });
}

/**
 * Signs at once (cards are signed where no await fits): node:crypto, about 20 µs, else noble,
 * whose first use builds tables of about 80 ms of CPU and 15 MB, once per process.
 */
export function ed25519SignSync(seed: Uint8Array, message: Uint8Array): Uint8Array {
  return hasNative()
    ? new Uint8Array(cryptoSign(null, message, privateKeyOf(seed)))
    : ed.sign(message, seed);
}

/** Verifies at once; false for any signature that does not verify or a malformed key. */
export function ed25519VerifySync(
  publicKey: Uint8Array,
  message: Uint8Array,
  signature: Uint8Array,
): boolean {
  if (publicKey.length !== 32 || signature.length !== 64) return false;
  try {
    return hasNative()
      ? cryptoVerify(null, message, publicKeyOf(publicKey), signature)
      : ed.verify(signature, message, publicKey, { zip215: false });
  } catch {
    return false;
  }
}
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
    if (!k) privs.set(seed, (k = privateKeyOf(seed)));
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
    const spki = createPublicKey(privateKeyOf(seed)).export({ format: 'der', type: 'spki' });
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
