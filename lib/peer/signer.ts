/**
 * @module lib/peer/signer — one node's signer of the peer channel: it picks the strongest mode it
 * holds a key for towards a receiver (`pairwise` when the ring has the receiver's Ed25519 key)
 * and returns the X-Peer-Signature header over the canonical string (lib/peer/signature.ts).
 */

import { detectEd25519, type Ed25519Backend } from './ed25519.ts';
import { defaultHashes, derivedKey, type HashBackend } from './hashes.ts';
import { toB64url } from './base64url.ts';
import { createPairCache, pairKey, type X25519Backend } from './pairwise.ts';
import {
  formatSignature,
  NODE_NAME,
  NONCE,
  PEER_HEADER,
  PEER_MODES,
  ROUTE,
  SCOPE,
  signedString,
  type PeerMode,
  type PeerRing,
} from './signature.ts';

type Mac = (text: string) => string;

const utf8 = new TextEncoder();

/** 128 random bits in base64url (22 characters), written straight into a Buffer and read back. */
function newNonce(): string {
  return crypto.getRandomValues(Buffer.allocUnsafe(16)).toString('base64url');
}

/** Who a request is for and what it may do: all three are signed. */
export interface SignTarget {
  /** The receiving node's fleet name. */
  to: string;
  /** The route on the receiver, e.g. `/peer/invoke`. */
  route: string;
  scope: string;
}

export interface SignOptions {
  mode?: PeerMode;
  ts?: number;
  nonce?: string;
}

export interface PeerSigner {
  readonly node: string;
  /** Modes this signer holds material for, strongest first (`pairwise` needs the receiver in the ring too). */
  readonly modes: readonly PeerMode[];
  /**
   * Signs one request: returns its X-Peer-Signature header, in a new object the caller may add to.
   * Without `opts.mode` it signs `pairwise` when the receiver has an Ed25519 key in the ring,
   * otherwise in the signer's own mode.
   * @throws Error when a field is malformed or the mode has no key (caller bugs).
   */
  sign(target: SignTarget, body: Uint8Array, opts?: SignOptions): Promise<Record<string, string>>;
}

export interface SignerOptions {
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
      return { [PEER_HEADER]: formatSignature({ ...fields, mode, sig: signature }) };
    },
  });
}
