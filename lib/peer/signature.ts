/**
 * @module lib/peer/signature — the wire format of the signed peer channel (docs/peer.md): the
 * modes and their strength, the one X-Peer-Signature header (written and read here), the field
 * rules, and the canonical string signer (lib/peer/signer.ts) and verifier (lib/peer/verifier.ts)
 * both compute and nothing else does. The primitives are in lib/peer/hashes.ts and
 * lib/peer/ed25519.ts; the `pairwise` key of two nodes is made in lib/peer/pairwise.ts.
 *
 * Header: `v1 node=… ts=… nonce=… scope=… to=… route=… mode=… sig=…`.
 * Signed string: `node\nts\nnonce\nscope\nto\nroute\nsha256hex(body)` over the exact body bytes.
 */

import { PRINCIPAL_NAME } from '../auth/principal.ts';
import type { PeerRefusalCode } from '../errors/peer.ts';
import { fail, type Err, type Failure, type Ok } from '../errors/result.ts';
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

/** The one header a signed request carries: every signed field, the mode and the signature. */
export const PEER_HEADER = 'x-peer-signature';
/** Longest header value read; a longer one is refused before it is split (the fields' own caps sum to ~650). */
const PEER_HEADER_MAX = 1024;
/** The header's fields, in the order the signer writes them. */
export const PEER_FIELDS = ['node', 'ts', 'nonce', 'scope', 'to', 'route', 'mode', 'sig'] as const;
export type PeerField = (typeof PEER_FIELDS)[number];
/** The header's fields as stated, each checked only for being there once. */
export type StatedSignature = Record<PeerField, string>;
const FIELD_NAMES: ReadonlySet<string> = new Set(PEER_FIELDS);

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

/** The header value of a signature; the fields must already follow their rules (no spaces in any). */
export function formatSignature(s: StatedSignature): string {
  return `v1 node=${s.node} ts=${s.ts} nonce=${s.nonce} scope=${s.scope} to=${s.to} route=${s.route} mode=${s.mode} sig=${s.sig}`;
}

type HeaderRefusal = Err<Failure<Extract<PeerRefusalCode, 'PEER_UNSIGNED' | 'PEER_BAD_HEADER'>>>;
const malformed = (why: string): HeaderRefusal =>
  fail('PEER_BAD_HEADER', `X-Peer-Signature ${why} (docs/peer.md)`);

/** `name=` of each field, in the order the signer writes them. */
const FIELD_PREFIXES = PEER_FIELDS.map((k) => `${k}=`);

/**
 * The fields of a value written in the signer's order with nothing else in it (every signed
 * request), read in one pass without the general loop's bookkeeping; undefined for any other
 * value, which the general loop then reads (or refuses) as before.
 */
function inSignerOrder(value: string): StatedSignature | undefined {
  const out: string[] = [];
  let at = 3;
  for (let i = 0; i < FIELD_PREFIXES.length; i++) {
    const prefix = FIELD_PREFIXES[i]!;
    if (!value.startsWith(prefix, at)) return undefined;
    const from = at + prefix.length;
    const last = i === FIELD_PREFIXES.length - 1;
    const end = last ? value.length : value.indexOf(' ', from);
    if (end < 0) return undefined;
    const field = value.slice(from, end);
    // A value holding `=` or a space would read differently in the general loop: leave it to it.
    if (field.includes('=') || (last && field.includes(' '))) return undefined;
    out.push(field);
    at = end + 1;
  }
  const [node, ts, nonce, scope, to, route, mode, sig] = out as [
    string,
    string,
    string,
    string,
    string,
    string,
    string,
    string,
  ];
  return { node, ts, nonce, scope, to, route, mode, sig };
}

/**
 * Splits an X-Peer-Signature value into its fields: `v1`, then `name=value` parts separated by
 * one space, each of the eight names exactly once and no other. Only the shape is checked here;
 * each field's own rule is the verifier's. A repeated header arrives joined with `, ` and is
 * refused like any other malformed value.
 */
export function parseSignature(value: string | null): Ok<StatedSignature> | HeaderRefusal {
  if (value === null) return fail('PEER_UNSIGNED', 'missing X-Peer-Signature');
  if (value.length > PEER_HEADER_MAX)
    return malformed(`is longer than ${PEER_HEADER_MAX} characters`);
  if (!value.startsWith('v1 ')) return malformed('must start with v1 and one space');
  const inOrder = inSignerOrder(value);
  if (inOrder) return { ok: true, result: inOrder };
  const f: Partial<StatedSignature> = {};
  for (let at = 3, part = 1; at <= value.length; part++) {
    let end = value.indexOf(' ', at);
    if (end < 0) end = value.length;
    const eq = value.indexOf('=', at);
    if (eq < 0 || eq >= end) return malformed(`part ${part} is not name=value`);
    const name = value.slice(at, eq);
    if (!FIELD_NAMES.has(name)) return malformed(`part ${part} is not one of its fields`);
    if (f[name as PeerField] !== undefined) return malformed(`has ${name} twice`);
    f[name as PeerField] = value.slice(eq + 1, end);
    at = end + 1;
  }
  const missing = PEER_FIELDS.filter((k) => f[k] === undefined);
  if (missing.length) return fail('PEER_UNSIGNED', `X-Peer-Signature lacks ${missing.join(', ')}`);
  return { ok: true, result: f as StatedSignature };
}
