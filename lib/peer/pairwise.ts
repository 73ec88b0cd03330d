/**
 * @module lib/peer/pairwise — the `pairwise` key of two fleet nodes: X25519 agreement between their
 * Ed25519 identities (converted to their Montgomery form), then HKDF-SHA256 naming both nodes.
 * Only the two key holders can compute it, so it identifies the caller as well as an Ed25519
 * signature does while each request costs one HMAC (docs/peer.md "Pairwise").
 *
 * API:
 *   pairKey(self, seed, peer, peerPublicKey, backend?)  -> 32-byte key, or undefined for a bad peer key
 *   pairInfo(a, b)                                       the HKDF info string, both names in order
 *   x25519Secret(seed) / x25519Public(ed25519Public)     the Montgomery forms of an identity
 *   nativeX25519 / nobleX25519, detectX25519()           the agreement (node:crypto / @noble fallback)
 *   createPairCache(capacity, make)                      a bounded map for prepared pair keys
 */

import { createPrivateKey, createPublicKey, diffieHellman } from 'node:crypto';
import * as ed from '@noble/ed25519';
import { hkdf } from '@noble/hashes/hkdf.js';
import { sha256, sha512 } from '@noble/hashes/sha2.js';

const P = 2n ** 255n - 19n;
const utf8 = new TextEncoder();

/**
 * The X25519 secret of an Ed25519 seed: the first half of SHA-512(seed), the same bytes RFC 8032
 * clamps into the signing scalar (X25519 clamps them the same way, RFC 7748).
 */
export function x25519Secret(seed: Uint8Array): Uint8Array {
  return sha512(seed).slice(0, 32);
}

/**
 * The X25519 public key of an Ed25519 public key: u = (1 + y) / (1 - y) mod p. Refuses (undefined)
 * bytes that are not a curve point and points of small order, whose agreement would be guessable.
 */
export function x25519Public(ed25519Public: Uint8Array): Uint8Array | undefined {
  let point: ed.Point;
  try {
    point = ed.Point.fromBytes(ed25519Public);
  } catch {
    return undefined;
  }
  if (point.isSmallOrder()) return undefined;
  const { y } = point.toAffine();
  const u = ed.etc.mod((1n + y) * ed.etc.invert(1n - y, P), P);
  return littleEndian(u);
}

function littleEndian(n: bigint): Uint8Array {
  const out = new Uint8Array(32);
  for (let i = 0; i < 32; i++, n >>= 8n) out[i] = Number(n & 0xffn);
  return out;
}

/** Canonical HKDF info: both names, lower first, so each side computes the same string. */
function pairInfo(a: string, b: string): string {
  const [lo, hi] = a <= b ? [a, b] : [b, a];
  return `peer:pairwise:${lo}:${hi}`;
}

// ---------------------------------------------------------------------------------------------
// X25519 agreement: node:crypto where the runtime has it, @noble/ed25519 otherwise.

export interface X25519Backend {
  readonly name: 'native' | 'noble';
  /** X25519(secret, peer) as 32 bytes, or undefined when the result is all zero. */
  agree(secret: Uint8Array, peerX25519Public: Uint8Array): Uint8Array | undefined;
}

// RFC 8410 DER prefixes of raw X25519 keys.
const X_PKCS8 = Buffer.from('302e020100300506032b656e04220420', 'hex');
const X_SPKI = Buffer.from('302a300506032b656e032100', 'hex');

export const nativeX25519: X25519Backend = Object.freeze({
  name: 'native' as const,
  agree(secret: Uint8Array, peer: Uint8Array) {
    try {
      const privateKey = createPrivateKey({
        key: Buffer.concat([X_PKCS8, secret]),
        format: 'der',
        type: 'pkcs8',
      });
      const publicKey = createPublicKey({
        key: Buffer.concat([X_SPKI, peer]),
        format: 'der',
        type: 'spki',
      });
      return new Uint8Array(diffieHellman({ privateKey, publicKey })); // throws on an all-zero result
    } catch {
      return undefined;
    }
  },
});

/** RFC 7748 section 5: the Montgomery ladder over bigints. Slow (a few ms) but only run once per peer. */
export const nobleX25519: X25519Backend = Object.freeze({
  name: 'noble' as const,
  agree(secret: Uint8Array, peer: Uint8Array) {
    const k = secret.slice();
    k[0]! &= 248;
    k[31]! &= 127;
    k[31]! |= 64;
    const u = peer.slice();
    u[31]! &= 127;
    const result = ladder(fromLittleEndian(k), fromLittleEndian(u) % P);
    return result === 0n ? undefined : littleEndian(result);
  },
});

function fromLittleEndian(b: Uint8Array): bigint {
  let n = 0n;
  for (let i = b.length - 1; i >= 0; i--) n = (n << 8n) | BigInt(b[i]!);
  return n;
}

function ladder(k: bigint, u: bigint): bigint {
  const m = (x: bigint) => ed.etc.mod(x, P);
  const a24 = 121665n;
  let [x2, z2, x3, z3] = [1n, 0n, u, 1n];
  let swap = 0n;
  for (let t = 254n; t >= 0n; t--) {
    const bit = (k >> t) & 1n;
    swap ^= bit;
    if (swap) [x2, x3, z2, z3] = [x3, x2, z3, z2];
    swap = bit;
    const A = m(x2 + z2),
      AA = m(A * A),
      B = m(x2 - z2),
      BB = m(B * B),
      E = m(AA - BB);
    const C = m(x3 + z3),
      D = m(x3 - z3),
      DA = m(D * A),
      CB = m(C * B);
    x3 = m((DA + CB) ** 2n);
    z3 = m(u * m((DA - CB) ** 2n));
    x2 = m(AA * BB);
    z2 = m(E * (AA + a24 * E));
  }
  if (swap) [x2, z2] = [x3, z3];
  return z2 === 0n ? 0n : m(x2 * ed.etc.invert(z2, P));
}

let detected: X25519Backend | undefined;
/** The native agreement when node:crypto computes the RFC 7748 test vector, else noble. */
export function detectX25519(): X25519Backend {
  if (detected) return detected;
  // RFC 7748 section 6.1: Alice's secret with Bob's public key.
  const alice = Buffer.from(
    '77076d0a7318a57d3c16c17251b26645df4c2f87ebc0992ab177fba51db92c2a',
    'hex',
  );
  const bob = Buffer.from(
    'de9edb7d7b7dc1b4d35b61c2ece435373f8343c85b78674dadfc7e146f882b4f',
    'hex',
  );
  const want = '4a5d9d5ba4ce2de1728e3bf480350f25e07e21c947d19e3376f09b3c1e161742';
  const got = nativeX25519.agree(alice, bob);
  return (detected = got && Buffer.from(got).toString('hex') === want ? nativeX25519 : nobleX25519);
}

/**
 * The pair key of `self` (holding `seed`) and `peer` (holding the private half of `peerPublicKey`):
 * HKDF-SHA256(ikm = X25519 agreement, salt = none, info = pairInfo(self, peer), 32 bytes).
 * Both sides compute the same bytes. Undefined when the peer's key is unusable.
 */
export function pairKey(
  self: string,
  seed: Uint8Array,
  peer: string,
  peerPublicKey: Uint8Array,
  backend: X25519Backend = detectX25519(),
): Uint8Array | undefined {
  const peerX = x25519Public(peerPublicKey);
  const shared = peerX && backend.agree(x25519Secret(seed), peerX);
  return shared && hkdf(sha256, shared, undefined, utf8.encode(pairInfo(self, peer)), 32);
}

/**
 * A bounded map from a peer's name to whatever was prepared for it (its keyed MACs). When full,
 * the entry added first is dropped; a dropped peer is simply prepared again on its next request.
 */
interface PairCache<T> {
  /** The entry for `peer`, made by `make(peer)` on first use. */
  get(peer: string): T;
  readonly size: number;
}

/** `make` is fixed at creation so the hot path allocates nothing. */
export function createPairCache<T>(capacity: number, make: (peer: string) => T): PairCache<T> {
  if (!(capacity >= 1)) throw new Error('pair cache: capacity must be at least 1');
  const entries = new Map<string, T>();
  return {
    get(peer) {
      let v = entries.get(peer);
      if (v === undefined) {
        if (entries.size >= capacity) entries.delete(entries.keys().next().value!);
        v = make(peer);
        entries.set(peer, v);
      }
      return v;
    },
    get size() {
      return entries.size;
    },
  };
}
