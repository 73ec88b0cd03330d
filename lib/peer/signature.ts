/**
 * @module lib/peer/signature — the wire format of the signed peer channel (docs/peer.md): the
 * modes and their strength, the eight X-Peer-* headers, the field rules, and the canonical string
 * signer (lib/peer/signer.ts) and verifier (lib/peer/verifier.ts) both compute and nothing else
 * does. The primitives are in lib/peer/hashes.ts and lib/peer/ed25519.ts; the `pairwise` key of
 * two nodes is made in lib/peer/pairwise.ts.
 *
 * Signed string: `node\nts\nnonce\nscope\nto\nroute\nsha256hex(body)` over the exact body bytes.
 */

import { PRINCIPAL_NAME } from '../auth/principal.ts';
import { defaultHashes, type HashBackend } from './hashes.ts';

export type PeerMode = 'pairwise' | 'ed25519' | 'derived' | 'shared';
/** What a ring entry states: the kind of key the node holds. `pairwise` needs no entry of its own. */
export type RingMode = Exclude<PeerMode, 'pairwise'>;
/** The order of preference, strongest first. */
export const PEER_MODES: readonly PeerMode[] = Object.freeze([
  'pairwise',
  'ed25519',
  'derived',
  'shared',
]);
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
export const isMode = (m: string): m is PeerMode => Object.hasOwn(PEER_RANK, m);

export const PEER_HEADERS = Object.freeze({
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
export const ROUTE = /^\/[\x21-\x7e]{0,200}$/;
export const NONCE = /^[A-Za-z0-9_-]{22}$/; // 128 bits, base64url without padding
export const TS = /^[0-9]{1,15}$/;
export const SIG_BYTES: Record<PeerMode, number> = {
  pairwise: 32,
  ed25519: 64,
  derived: 32,
  shared: 32,
};
export const MAC_TEXT = /^[A-Za-z0-9_-]{43}$/; // 32 bytes in base64url

export interface SignedFields {
  node: string;
  ts: string;
  nonce: string;
  scope: string;
  /** The receiving node's fleet name. */
  to: string;
  /** The route it is sent to, e.g. `/peer/invoke`. */
  route: string;
}

/** What the verifier knows of one node: the kind of key it holds and its Ed25519 public keys. */
export interface RingEntry {
  mode: RingMode;
  /** One key normally, two while the node rotates. */
  ed25519: readonly Uint8Array[];
  /** The ring marks it a relay: it may name the principal it forwards a call for (`onBehalfOf`). */
  relay?: boolean;
}
export type PeerRing = ReadonlyMap<string, RingEntry>;

/** The canonical string, the only one signer and verifier ever compute. */
export function signedString(
  f: SignedFields,
  body: Uint8Array,
  hashes: HashBackend = defaultHashes,
): string {
  return `${f.node}\n${f.ts}\n${f.nonce}\n${f.scope}\n${f.to}\n${f.route}\n${hashes.sha256hex(body)}`;
}
