/**
 * @module lib/peer/signature — the one signing and verification implementation of the signed peer channel
 * (docs/peer.md). Every node and the hub import it; nothing else
 * signs or verifies. Key files live in peer-keys.ts, the client in peer-client.ts, routes in
 * peer-routes.ts; all of them call into this file.
 *
 * API:
 *   signedString(fields, body)             the canonical string both sides compute
 *   createSigner({ node, secret?, seed?, ring?, mode? }) -> PeerSigner;
 *     signer.sign({ to, route, scope }, body) -> headers
 *   createVerifier({ self, ring, secret?, seeds?, now?, windowMs?, nonceCapacity? }) -> PeerVerifier;
 *     verifier.verify(headers, body, route) -> { ok: true, node, mode, scope, ts } | { ok: false, code, message }
 *   PEER_ERRORS                             the table of codes, HTTP statuses and default messages
 *   nativeEd25519 / nobleEd25519, bunHashes / nobleHashes   the primitives (hot path / fallback)
 * Signed string: `node\nts\nnonce\nscope\nto\nroute\nsha256hex(body)` over the exact body bytes.
 * The `pairwise` key of two nodes is made in lib/peer/pairwise.ts.
 */

import { createPrivateKey, createPublicKey, sign as cryptoSign, type KeyObject } from 'node:crypto';
import * as ed from '@noble/ed25519';
import { hkdf } from '@noble/hashes/hkdf.js';
import { hmac } from '@noble/hashes/hmac.js';
import { sha256, sha512 } from '@noble/hashes/sha2.js';
import { bytesToHex } from '@noble/hashes/utils.js';
import { PRINCIPAL_NAME } from '../auth/principal.ts';
import { PEER_ERRORS, type PeerRefusalCode } from '../errors/peer.ts';
import { createNonceCache, type NonceCache } from './nonces.ts';
import { createPairCache, detectX25519, pairKey, type X25519Backend } from './pairwise.ts';

ed.hashes.sha512 = sha512;

// ---------------------------------------------------------------------------------------------
// Wire format.

export type PeerMode = 'pairwise' | 'ed25519' | 'derived' | 'shared';
/** What a ring entry states: the kind of key the node holds. `pairwise` needs no entry of its own. */
export type RingMode = Exclude<PeerMode, 'pairwise'>;
/** The order of preference, strongest first. */
const PEER_MODES: readonly PeerMode[] = Object.freeze(['pairwise', 'ed25519', 'derived', 'shared']);
/**
 * Strength, for the no-downgrade rule. `pairwise` ranks with `ed25519`: its key comes from the
 * two nodes' Ed25519 identities, so only those two holders can compute it.
 */
export const PEER_RANK: Readonly<Record<PeerMode, number>> = Object.freeze({
  pairwise: 3,
  ed25519: 3,
  derived: 2,
  shared: 1,
});
const isMode = (m: string): m is PeerMode => Object.hasOwn(PEER_RANK, m);

const PEER_HEADERS = Object.freeze({
  node: 'x-peer-node',
  ts: 'x-peer-ts',
  nonce: 'x-peer-nonce',
  scope: 'x-peer-scope',
  to: 'x-peer-to',
  route: 'x-peer-route',
  mode: 'x-peer-mode',
  signature: 'x-peer-signature',
});

/** Node names as in the fleet file (the principal name rule); also what keeps names safe in file paths. */
export const NODE_NAME = PRINCIPAL_NAME;
/** Scopes are visible ASCII without spaces, so no field can smuggle a newline into the string. */
export const SCOPE = /^[\x21-\x7e]{1,200}$/;
/** A route is an absolute path in visible ASCII: the path the receiver serves it at. */
const ROUTE = /^\/[\x21-\x7e]{0,200}$/;
const NONCE = /^[A-Za-z0-9_-]{22}$/; // 128 bits, base64url without padding
const TS = /^[0-9]{1,15}$/;
const B64URL = /^[A-Za-z0-9_-]*$/;
const SIG_BYTES: Record<PeerMode, number> = { pairwise: 32, ed25519: 64, derived: 32, shared: 32 };
const MAC_TEXT = /^[A-Za-z0-9_-]{43}$/; // 32 bytes in base64url

interface SignedFields {
  node: string;
  ts: string;
  nonce: string;
  scope: string;
  /** The receiving node's fleet name. */
  to: string;
  /** The route it is sent to, e.g. `/peer/invoke`. */
  route: string;
}

// ---------------------------------------------------------------------------------------------
// SHA-256 and HMAC: Bun's native hasher on the hot path, @noble/hashes where Bun is absent and as
// the cross-check (the known-answer test runs both).

interface HashBackend {
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

const defaultHashes: HashBackend = bunHashes ?? nobleHashes;

/** The canonical string, the only one signer and verifier ever compute. */
export function signedString(
  f: SignedFields,
  body: Uint8Array,
  hashes: HashBackend = defaultHashes,
): string {
  return `${f.node}\n${f.ts}\n${f.nonce}\n${f.scope}\n${f.to}\n${f.route}\n${hashes.sha256hex(body)}`;
}

export function toB64url(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64url');
}

/** 128 random bits in base64url (22 characters), written straight into a Buffer and read back. */
function newNonce(): string {
  return crypto.getRandomValues(Buffer.allocUnsafe(16)).toString('base64url');
}

/** Strict base64url: right alphabet, right length, canonical encoding; otherwise undefined. */
export function fromB64url(text: string, bytes: number): Uint8Array | undefined {
  if (text.length !== Math.ceil((bytes * 4) / 3) || !B64URL.test(text)) return undefined;
  const out = new Uint8Array(Buffer.from(text, 'base64url'));
  return out.length === bytes && toB64url(out) === text ? out : undefined;
}

/**
 * Constant-time equality for MACs in their base64url form: the time taken does not depend on
 * where the strings differ. Comparing the canonical encoding also refuses non-canonical ones.
 */
function equalMac(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}

/** HKDF-SHA256(fleet secret, info = "peer:" + node), 32 bytes: the node's `derived` key. */
export function derivedKey(secret: Uint8Array, node: string): Uint8Array {
  return hkdf(sha256, secret, undefined, utf8.encode(`peer:${node}`), 32);
}

// ---------------------------------------------------------------------------------------------
// Ed25519: Bun's native crypto on the hot path where the runtime has it, @noble/ed25519 otherwise.

interface Ed25519Backend {
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

// ---------------------------------------------------------------------------------------------
// Signing.

/** Who a request is for and what it may do: all three are signed. */
interface SignTarget {
  /** The receiving node's fleet name. */
  to: string;
  /** The route on the receiver, e.g. `/peer/invoke`. */
  route: string;
  scope: string;
}

interface SignOptions {
  mode?: PeerMode;
  ts?: number;
  nonce?: string;
}

export interface PeerSigner {
  readonly node: string;
  /** Modes this signer holds material for, strongest first (`pairwise` needs the receiver in the ring too). */
  readonly modes: readonly PeerMode[];
  /**
   * Signs one request: returns the eight X-Peer-* headers, in a new object the caller may add to.
   * Without `opts.mode` it signs `pairwise` when the receiver has an Ed25519 key in the ring,
   * otherwise in the signer's own mode.
   * @throws Error when a field is malformed or the mode has no key (caller bugs).
   */
  sign(target: SignTarget, body: Uint8Array, opts?: SignOptions): Promise<Record<string, string>>;
}

interface SignerOptions {
  node: string;
  /** Fleet secret: enables `shared` and `derived`. */
  secret?: Uint8Array;
  /** The node's Ed25519 32-byte seed: enables `ed25519`, and `pairwise` with a ring. */
  seed?: Uint8Array;
  /** The public key ring: receivers with an Ed25519 key get `pairwise` requests. */
  ring?: PeerRing;
  /** Mode used when a call names none and `pairwise` is not possible; defaults to the strongest held. */
  mode?: PeerMode;
  now?: () => number;
  ed25519?: Ed25519Backend;
  hashes?: HashBackend;
  x25519?: X25519Backend;
  /** Most receivers whose pair key is kept prepared (default 1024). */
  pairCapacity?: number;
}

type Mac = (text: string) => string;

/**
 * Creates the signer of one node. Key bytes stay inside the closure, so the signer object can
 * be logged or serialised without leaking them.
 * @throws Error on an invalid node name or wrongly sized key material (configuration bugs).
 */
export function createSigner(o: SignerOptions): PeerSigner {
  if (!NODE_NAME.test(o.node)) throw new Error('peer: invalid node name');
  if (o.secret && o.secret.length < 16)
    throw new Error('peer: fleet secret must be at least 16 bytes');
  if (o.seed && o.seed.length !== 32) throw new Error('peer: Ed25519 seed must be 32 bytes');
  const node = o.node;
  const secret = o.secret && new Uint8Array(o.secret);
  const seed = o.seed && new Uint8Array(o.seed);
  const hashes = o.hashes ?? defaultHashes;
  const macs = secret && {
    shared: hashes.macFor(secret),
    derived: hashes.macFor(derivedKey(secret, node)),
  };
  const now = o.now ?? Date.now;
  const ring = o.ring;
  const modes = PEER_MODES.filter((m) =>
    m === 'pairwise' ? !!seed && !!ring : m === 'ed25519' ? !!seed : !!secret,
  );
  const preferred = o.mode && o.mode !== 'pairwise' ? o.mode : modes.find((m) => m !== 'pairwise');
  // Per receiver: the MAC keyed with the pair key of this node's seed and the receiver's newest key.
  const pairs = createPairCache<Mac | null>(o.pairCapacity ?? 1024, (to) => {
    const pub = seed && ring?.get(to)?.ed25519[0];
    const key = pub && pairKey(node, seed, to, pub, o.x25519);
    return key ? hashes.macFor(key) : null;
  });
  const pairMac = (to: string): Mac | null => (seed && ring ? pairs.get(to) : null);
  return Object.freeze({
    node,
    modes: Object.freeze(modes),
    async sign(target: SignTarget, body: Uint8Array, opts: SignOptions = {}) {
      const { to, route, scope } = target;
      if (!NODE_NAME.test(to)) throw new Error('peer: invalid receiver');
      if (!ROUTE.test(route)) throw new Error('peer: invalid route');
      if (!SCOPE.test(scope)) throw new Error('peer: invalid scope');
      const pair = opts.mode === undefined || opts.mode === 'pairwise' ? pairMac(to) : null;
      const mode = opts.mode ?? (pair ? 'pairwise' : preferred);
      if (!mode || !modes.includes(mode) || (mode === 'pairwise' && !pair))
        throw new Error(`peer: no key for mode ${mode ?? '(none)'} towards ${to}`);
      const nonce = opts.nonce ?? newNonce();
      if (!NONCE.test(nonce)) throw new Error('peer: invalid nonce');
      const fields = { node, ts: String(opts.ts ?? now()), nonce, scope, to, route };
      const text = signedString(fields, body, hashes);
      const signature =
        mode === 'pairwise'
          ? pair!(text)
          : mode === 'ed25519'
            ? toB64url(await (o.ed25519 ?? (await detectEd25519())).sign(seed!, utf8.encode(text)))
            : macs![mode](text);
      return {
        [PEER_HEADERS.node]: node,
        [PEER_HEADERS.ts]: fields.ts,
        [PEER_HEADERS.nonce]: nonce,
        [PEER_HEADERS.scope]: scope,
        [PEER_HEADERS.to]: to,
        [PEER_HEADERS.route]: route,
        [PEER_HEADERS.mode]: mode,
        [PEER_HEADERS.signature]: signature,
      };
    },
  });
}

// ---------------------------------------------------------------------------------------------
// Verification.

/** What the verifier knows of one node: the kind of key it holds and its Ed25519 public keys. */
export interface RingEntry {
  mode: RingMode;
  /** One key normally, two while the node rotates. */
  ed25519: readonly Uint8Array[];
  /** The ring marks it a relay: it may name the principal it forwards a call for (`onBehalfOf`). */
  relay?: boolean;
}
export type PeerRing = ReadonlyMap<string, RingEntry>;

type VerifyResult =
  | { ok: true; node: string; mode: PeerMode; scope: string; ts: number }
  | { ok: false; code: PeerRefusalCode; message: string };

export interface PeerVerifier {
  /** Checks one request that arrived at `route` (e.g. `/peer/invoke`) of this node. */
  verify(headers: Headers, body: Uint8Array, route: string): Promise<VerifyResult>;
  /** Whether the ring marks `node` a relay (one that may act for the principal it names). */
  isRelay?(node: string): boolean;
}

export interface VerifierOptions {
  /** This node's fleet name: requests signed for another receiver are refused. */
  self: string;
  ring: PeerRing;
  /** Fleet secret: needed to accept `shared` and `derived`. */
  secret?: Uint8Array;
  /** This node's Ed25519 seeds, current first (the previous one until it is retired): needed to accept `pairwise`. */
  seeds?: readonly Uint8Array[];
  now?: () => number;
  /** Accepted clock difference either way, in ms (default 60 000). */
  windowMs?: number;
  /** Most nonces remembered at once (default 100 000). */
  nonceCapacity?: number;
  /** The replay cache, when a verifier replaces another after the ring changed (a join). */
  nonces?: NonceCache;
  /** Most callers whose pair keys are kept prepared (default 1024). */
  pairCapacity?: number;
  ed25519?: Ed25519Backend;
  hashes?: HashBackend;
  x25519?: X25519Backend;
}

const refuse = (
  code: PeerRefusalCode,
  message: string = PEER_ERRORS[code].message,
): VerifyResult => ({
  ok: false,
  code,
  message,
});

/**
 * Creates a verifier. Checks run cheapest first (headers, receiver, node, mode, window, nonce) so
 * junk costs no signature check; a nonce is recorded only after its signature verifies.
 * @throws Error on an invalid `self` (a configuration bug).
 */
export function createVerifier(o: VerifierOptions): PeerVerifier {
  if (!NODE_NAME.test(o.self)) throw new Error('peer: invalid node name');
  const self = o.self;
  const windowMs = o.windowMs ?? 60_000;
  const now = o.now ?? Date.now;
  const secret = o.secret && new Uint8Array(o.secret);
  const seeds = (o.seeds ?? []).map((s) => new Uint8Array(s));
  const hashes = o.hashes ?? defaultHashes;
  let ed25519 = o.ed25519;
  const nonces = o.nonces ?? createNonceCache(windowMs, o.nonceCapacity ?? 100_000);
  const sharedMac = secret && hashes.macFor(secret);
  const derivedMacs = new Map<string, Mac>(); // per ring node, made on first use
  const macFor = (mode: 'derived' | 'shared', node: string) => {
    if (mode === 'shared') return sharedMac!;
    let m = derivedMacs.get(node);
    if (!m) derivedMacs.set(node, (m = hashes.macFor(derivedKey(secret!, node))));
    return m;
  };
  // Per caller: one MAC per (own seed, caller key) pair, the current ones first. Outside a
  // rotation that is a single MAC.
  const x25519 = o.x25519 ?? (seeds.length ? detectX25519() : undefined);
  const pairMacs = createPairCache<Mac[]>(o.pairCapacity ?? 1024, (node) =>
    seeds.flatMap((seed) =>
      (o.ring.get(node)?.ed25519 ?? []).flatMap((pub) => {
        const key = pairKey(self, seed, node, pub, x25519);
        return key ? [hashes.macFor(key)] : [];
      }),
    ),
  );
  const named = (text: string, pattern: RegExp) => (pattern.test(text) ? text : 'something else');

  return Object.freeze({
    isRelay: (node: string) => o.ring.get(node)?.relay === true,
    async verify(headers: Headers, body: Uint8Array, route: string): Promise<VerifyResult> {
      const node = headers.get(PEER_HEADERS.node);
      const ts = headers.get(PEER_HEADERS.ts);
      const nonce = headers.get(PEER_HEADERS.nonce);
      const scope = headers.get(PEER_HEADERS.scope);
      const to = headers.get(PEER_HEADERS.to);
      const signedRoute = headers.get(PEER_HEADERS.route);
      const mode = headers.get(PEER_HEADERS.mode);
      const signature = headers.get(PEER_HEADERS.signature);
      if (
        node === null ||
        ts === null ||
        nonce === null ||
        scope === null ||
        to === null ||
        signedRoute === null ||
        mode === null ||
        signature === null
      ) {
        const missing = Object.values(PEER_HEADERS).filter((h) => !headers.has(h));
        return refuse('PEER_UNSIGNED', `missing ${missing.join(', ')}`);
      }
      // The receiver and route are signed; checking the stated ones first gives a request that
      // was meant for someone else its own answer, and costs nothing.
      if (to !== self)
        return refuse(
          'PEER_WRONG_RECEIVER',
          `signed for ${named(to, NODE_NAME)}, this node is ${self}`,
        );
      if (signedRoute !== route)
        return refuse(
          'PEER_WRONG_RECEIVER',
          `signed for route ${named(signedRoute, ROUTE)}, this route is ${route}`,
        );
      if (!NODE_NAME.test(node))
        return refuse('PEER_UNKNOWN_NODE', 'X-Peer-Node is not a node name');
      const entry = o.ring.get(node);
      if (!entry) return refuse('PEER_UNKNOWN_NODE');
      if (!isMode(mode))
        return refuse('PEER_BAD_SIGNATURE', `X-Peer-Mode must be one of ${PEER_MODES.join(', ')}`);
      if (PEER_RANK[mode] < PEER_RANK[entry.mode])
        return refuse('PEER_DOWNGRADE', `${node} signs with ${entry.mode}`);
      if (!TS.test(ts)) return refuse('PEER_STALE', 'X-Peer-Ts must be unix milliseconds');
      const t = Number(ts);
      const clock = now();
      if (Math.abs(clock - t) > windowMs)
        return refuse(
          'PEER_STALE',
          `timestamp is ${clock > t ? 'older' : 'newer'} than the ${windowMs} ms window`,
        );
      if (!NONCE.test(nonce))
        return refuse('PEER_BAD_SIGNATURE', 'X-Peer-Nonce must be 128 bits in base64url');
      if (!SCOPE.test(scope)) return refuse('PEER_SCOPE', 'X-Peer-Scope is not a valid scope');
      // HMACs are compared in their canonical text form; Ed25519 needs the bytes.
      const sig =
        mode === 'ed25519'
          ? fromB64url(signature, 64)
          : MAC_TEXT.test(signature)
            ? signature
            : undefined;
      if (!sig)
        return refuse(
          'PEER_BAD_SIGNATURE',
          `X-Peer-Signature must be ${SIG_BYTES[mode]} bytes in base64url`,
        );
      const nonceKey = `${node} ${nonce}`;
      if (nonces.seen(nonceKey)) return refuse('PEER_REPLAY');

      const text = signedString({ node, ts, nonce, scope, to, route }, body, hashes);
      let good = false;
      if (typeof sig !== 'string') {
        ed25519 ??= await detectEd25519();
        const msg = utf8.encode(text);
        for (const pub of entry.ed25519) if ((good = await ed25519.verify(pub, msg, sig))) break;
      } else if (mode === 'pairwise') {
        if (!seeds.length)
          return refuse(
            'PEER_BAD_SIGNATURE',
            'this node holds no Ed25519 key to check pairwise signatures',
          );
        const macs = pairMacs.get(node);
        for (let i = 0; i < macs.length && !good; i++) good = equalMac(macs[i]!(text), sig);
      } else {
        if (!secret)
          return refuse(
            'PEER_BAD_SIGNATURE',
            'this node holds no fleet secret to check HMAC modes',
          );
        good = equalMac(macFor(mode as 'derived' | 'shared', node)(text), sig);
      }
      if (!good) return refuse('PEER_BAD_SIGNATURE');
      // Check-and-record happens in one synchronous step after the awaits above, so concurrent
      // requests carrying one nonce cannot both pass.
      const admitted = nonces.admit(nonceKey, t, clock);
      if (admitted === 'replay') return refuse('PEER_REPLAY');
      if (admitted === 'horizon')
        return refuse('PEER_STALE', 'timestamp is older than the replay horizon');
      return { ok: true, node, mode, scope, ts: t };
    },
  });
}
