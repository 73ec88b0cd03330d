/**
 * @module lib/peer/verifier — a node's verifier of the peer channel: the X-Peer-Signature header's
 * fields are checked cheapest first (shape, receiver, route, node, mode, window, nonce, signature
 * shape) so junk costs no signature check, then the signature over the canonical string
 * (lib/peer/signature.ts), and only then is the nonce recorded.
 */

import { PEER_ERRORS, type PeerRefusalCode } from '../errors/peer.ts';
import { fail, type Failure, type Result } from '../errors/result.ts';
import { fromB64url } from './base64url.ts';
import { detectEd25519, type Ed25519Backend } from './ed25519.ts';
import { defaultHashes, derivedKey, type HashBackend } from './hashes.ts';
import { createNonceCache, type NonceCache } from './nonces.ts';
import { createPairCache, detectX25519, pairKey, type X25519Backend } from './pairwise.ts';
import {
  isMode,
  MAC_TEXT,
  NODE_NAME,
  NONCE,
  PEER_HEADER,
  PEER_MODES,
  parseSignature,
  PEER_RANK,
  ROUTE,
  SCOPE,
  SIG_BYTES,
  signedString,
  TS,
  type PeerMode,
  type PeerRing,
  type RingEntry,
  type StatedSignature,
} from './signature.ts';

type Mac = (text: string) => string;

const utf8 = new TextEncoder();

/** Who signed a request that verified, in which mode, for what scope and when. */
export interface VerifiedPeer {
  node: string;
  mode: PeerMode;
  scope: string;
  ts: number;
}
export type PeerRefusal = Failure<PeerRefusalCode>;
export type VerifyResult = Result<VerifiedPeer, PeerRefusal>;

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

const refuse = (code: PeerRefusalCode, message: string = PEER_ERRORS[code].message) =>
  fail(code, message);

type Refusal = ReturnType<typeof refuse>;

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

/** A request whose stated fields passed every check short of the signature itself. */
interface Admissible {
  node: string;
  entry: RingEntry;
  mode: PeerMode;
  t: number;
  clock: number;
  /** Ed25519: the signature bytes; the HMAC modes: its canonical text. */
  sig: Uint8Array | string;
}

interface Context {
  self: string;
  ring: PeerRing;
  windowMs: number;
  clock: number;
}

const named = (text: string, pattern: RegExp) => (pattern.test(text) ? text : 'something else');

/** The checks that cost no signature, cheapest first. */
function admissible(s: StatedSignature, route: string, c: Context): Admissible | Refusal {
  const { node, ts, nonce, scope, to, route: signedRoute, mode, sig: signature } = s;
  const fail = refuse;
  // The receiver and route are signed; checking the stated ones first gives a request that
  // was meant for someone else its own answer, and costs nothing.
  if (to !== c.self)
    return fail(
      'PEER_WRONG_RECEIVER',
      `signed for ${named(to, NODE_NAME)}, this node is ${c.self}`,
    );
  if (signedRoute !== route)
    return fail(
      'PEER_WRONG_RECEIVER',
      `signed for route ${named(signedRoute, ROUTE)}, this route is ${route}`,
    );
  if (!NODE_NAME.test(node))
    return fail('PEER_UNKNOWN_NODE', "the signature's node is not a node name");
  const entry = c.ring.get(node);
  if (!entry) return fail('PEER_UNKNOWN_NODE');
  if (!isMode(mode))
    return fail(
      'PEER_BAD_SIGNATURE',
      `the signature's mode must be one of ${PEER_MODES.join(', ')}`,
    );
  if (PEER_RANK[mode] < PEER_RANK[entry.mode])
    return fail('PEER_DOWNGRADE', `${node} signs with ${entry.mode}`);
  if (!TS.test(ts)) return fail('PEER_STALE', "the signature's ts must be unix milliseconds");
  const t = Number(ts);
  if (Math.abs(c.clock - t) > c.windowMs)
    return fail(
      'PEER_STALE',
      `timestamp is ${c.clock > t ? 'older' : 'newer'} than the ${c.windowMs} ms window`,
    );
  if (!NONCE.test(nonce))
    return fail('PEER_BAD_SIGNATURE', "the signature's nonce must be 128 bits in base64url");
  if (!SCOPE.test(scope)) return fail('PEER_SCOPE', "the signature's scope is not a valid scope");
  // HMACs are compared in their canonical text form; Ed25519 needs the bytes.
  const sig =
    mode === 'ed25519'
      ? fromB64url(signature, 64)
      : MAC_TEXT.test(signature)
        ? signature
        : undefined;
  if (!sig)
    return fail(
      'PEER_BAD_SIGNATURE',
      `the signature's sig must be ${SIG_BYTES[mode]} bytes in base64url`,
    );
  return { node, entry, mode, t, clock: c.clock, sig };
}

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

  /** Whether the signature is good, or the refusal when this node holds no key for its mode. */
  async function signatureHolds(a: Admissible, text: string): Promise<boolean | Refusal> {
    const { sig, mode, node } = a;
    if (typeof sig !== 'string') {
      ed25519 ??= await detectEd25519();
      const msg = utf8.encode(text);
      for (const pub of a.entry.ed25519) if (await ed25519.verify(pub, msg, sig)) return true;
      return false;
    }
    if (mode === 'pairwise') {
      if (!seeds.length)
        return refuse(
          'PEER_BAD_SIGNATURE',
          'this node holds no Ed25519 key to check pairwise signatures',
        );
      const macs = pairMacs.get(node);
      let good = false;
      for (let i = 0; i < macs.length && !good; i++) good = equalMac(macs[i]!(text), sig);
      return good;
    }
    if (!secret)
      return refuse('PEER_BAD_SIGNATURE', 'this node holds no fleet secret to check HMAC modes');
    return equalMac(macFor(mode as 'derived' | 'shared', node)(text), sig);
  }

  return Object.freeze({
    isRelay: (node: string) => o.ring.get(node)?.relay === true,
    async verify(headers: Headers, body: Uint8Array, route: string): Promise<VerifyResult> {
      const parsed = parseSignature(headers.get(PEER_HEADER));
      if (!parsed.ok) return parsed;
      const stated = parsed.result;
      const a = admissible(stated, route, { self, ring: o.ring, windowMs, clock: now() });
      if ('ok' in a) return a;
      const { node, nonce, scope, ts } = stated;
      const nonceKey = `${node} ${nonce}`;
      if (nonces.seen(nonceKey)) return refuse('PEER_REPLAY');
      const text = signedString({ node, ts, nonce, scope, to: self, route }, body, hashes);
      const good = await signatureHolds(a, text);
      if (typeof good !== 'boolean') return good;
      if (!good) return refuse('PEER_BAD_SIGNATURE');
      // Check-and-record happens in one synchronous step after the awaits above, so concurrent
      // requests carrying one nonce cannot both pass.
      const admitted = nonces.admit(nonceKey, a.t, a.clock);
      if (admitted === 'replay') return refuse('PEER_REPLAY');
      if (admitted === 'horizon')
        return refuse('PEER_STALE', 'timestamp is older than the replay horizon');
      return { ok: true, result: { node, mode: a.mode, scope, ts: a.t } };
    },
  });
}
