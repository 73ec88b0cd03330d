/**
 * @module lib/a2a/card/signature — signed agent cards (A2A 1.0 §8.4): a node signs its card with
 * its Ed25519 key as a flattened JWS (`alg` EdDSA, `typ` JOSE, `kid`, `jku` to the node's JWKS)
 * over the canonical form of lib/a2a/card/canonical.ts, and anyone holding the node's public key
 * checks it with `verifyCardSignature`. The official JS SDK's `verifyAgentCardSignature` accepts
 * these cards.
 */

import { isPlainObject } from '../../json/guards.ts';
import { createHash } from 'node:crypto';
import { ed25519PublicKey, ed25519SignSync, ed25519VerifySync } from '../../peer/ed25519.ts';
import { CARD_SIGNATURE_ERRORS, type CardSignatureErrorCode } from '../../errors/card.ts';
import type { Failure, Result } from '../../errors/result.ts';
import { canonicalCard } from './canonical.ts';

/** A key a card is signed with: its public id, the 32-byte seed and the public key. */
export interface CardKey {
  kid: string;
  seed: Uint8Array;
  publicKey: Uint8Array;
}

/** A key a checker trusts (pinned from a fleet's key ring), with its id when known. */
export interface TrustedCardKey {
  kid?: string;
  publicKey: Uint8Array;
}

/** One entry of a card's `signatures`: a flattened JWS without its (detached) payload. */
export interface CardSignature {
  protected: string;
  signature: string;
  header?: Record<string, unknown>;
}

/** Where a node serves the public keys its card names (RFC 7517 JWK Set). */
export const JWKS_PATH = '/.well-known/jwks.json';
/** Most signatures a checker reads on one card: a card is signed by its current and previous key. */
const MAX_CARD_SIGNATURES = 4;
/** Longest `protected` member read (a header of a few short fields). */
const MAX_PROTECTED_CHARS = 2048;

const utf8 = new TextEncoder();
const b64url = (bytes: Uint8Array | string) =>
  Buffer.from(typeof bytes === 'string' ? utf8.encode(bytes) : bytes).toString('base64url');
const B64URL = /^[A-Za-z0-9_-]*$/;

/**
 * The card key of a 32-byte seed; its id is the one the fleet's key ring gives the same key
 * (`ed25519:` and 16 hex digits of its SHA-256), so a checker can match the two.
 */
export function cardKeyOf(seed: Uint8Array): CardKey {
  const publicKey = ed25519PublicKey(seed);
  return { kid: cardKeyId(publicKey), seed, publicKey };
}

/** The id of a public key, as `cardKeyOf` and the fleet's key ring give it. */
export function cardKeyId(publicKey: Uint8Array): string {
  return `ed25519:${createHash('sha256').update(publicKey).digest('hex').slice(0, 16)}`;
}

/** The public key as a JWK, the form a JWKS and the SDK's verifier take. */
function publicJwk(key: { kid: string; publicKey: Uint8Array }): Record<string, string> {
  return {
    kty: 'OKP',
    crv: 'Ed25519',
    x: b64url(key.publicKey),
    kid: key.kid,
    alg: 'EdDSA',
    use: 'sig',
  };
}

/** The JWK Set a node serves at JWKS_PATH: every key a card it served may be signed with. */
export function jwks(keys: readonly { kid: string; publicKey: Uint8Array }[]): {
  keys: Record<string, string>[];
} {
  return { keys: keys.map(publicJwk) };
}

/**
 * The card with one signature by `key` in `signatures` (replacing any it carried). `jku` is the
 * absolute URL of the node's JWKS.
 * @throws JcsError when the card holds a value with no canonical form (a bug in the card).
 */
export function signCard<C extends { signatures?: CardSignature[] }>(
  card: C,
  key: CardKey,
  jku: string,
): C {
  const header = b64url(JSON.stringify({ alg: 'EdDSA', typ: 'JOSE', kid: key.kid, jku }));
  const input = `${header}.${b64url(canonicalCard(card))}`;
  const signature = b64url(ed25519SignSync(key.seed, utf8.encode(input)));
  const signatures: CardSignature[] = [{ protected: header, signature }];
  return { ...card, signatures };
}

/** The signed interfaces of a card, as `url binding` pairs. */
function signedRoutes(card: object): Set<string> {
  const list = (card as { supportedInterfaces?: unknown }).supportedInterfaces;
  const out = new Set<string>();
  if (Array.isArray(list))
    for (const i of list) {
      const { url, protocolBinding } = (i ?? {}) as { url?: unknown; protocolBinding?: unknown };
      if (typeof url === 'string' && typeof protocolBinding === 'string')
        out.add(`${url} ${protocolBinding}`);
    }
  return out;
}

/**
 * v0.3 clients route by the card's top-level `url` (with `preferredTransport`, JSONRPC when absent)
 * and `additionalInterfaces`, which the v1.0 canonical form, the one the official SDK verifies,
 * does not cover. So a signed card verifies only when each of those routes is one of its signed
 * interfaces (same URL, same binding): a relayed card cannot send a v0.3 client elsewhere.
 */
function coversV03Routes(card: object): { ok: false; error: CardFailure } | undefined {
  const { url, preferredTransport, additionalInterfaces } = card as Record<string, unknown>;
  if (url === undefined && preferredTransport === undefined && additionalInterfaces === undefined)
    return undefined;
  const signed = signedRoutes(card);
  const covered = (u: unknown, binding: unknown) =>
    typeof u === 'string' && typeof binding === 'string' && signed.has(`${u} ${binding}`);
  const preferred = preferredTransport ?? 'JSONRPC';
  if (url !== undefined ? !covered(url, preferred) : typeof preferred !== 'string')
    return fail(
      'CARD_SIGNATURE_INVALID',
      'the agent card url and preferredTransport are not one of its signed interfaces',
    );
  if (additionalInterfaces === undefined) return undefined;
  const extra = Array.isArray(additionalInterfaces) ? additionalInterfaces : [undefined];
  for (const i of extra) {
    const { url: u, transport } = (i ?? {}) as { url?: unknown; transport?: unknown };
    if (!covered(u, transport))
      return fail(
        'CARD_SIGNATURE_INVALID',
        'an agent card additionalInterfaces entry is not one of its signed interfaces',
      );
  }
  return undefined;
}

type CardFailure = Failure<CardSignatureErrorCode>;
const fail = (
  code: CardSignatureErrorCode,
  detail?: string,
): { ok: false; error: CardFailure } => ({
  ok: false,
  error: { code, message: detail ?? CARD_SIGNATURE_ERRORS[code].message },
});

/** The protected header of a signature entry, if it is a JSON object in base64url. */
function readHeader(entry: unknown): Record<string, unknown> | undefined {
  if (typeof entry !== 'object' || entry === null) return undefined;
  const p = (entry as { protected?: unknown }).protected;
  const s = (entry as { signature?: unknown }).signature;
  if (typeof p !== 'string' || typeof s !== 'string') return undefined;
  if (p.length > MAX_PROTECTED_CHARS || !B64URL.test(p) || s.length !== 86 || !B64URL.test(s))
    return undefined;
  try {
    const h = JSON.parse(Buffer.from(p, 'base64url').toString('utf8'));
    return isPlainObject(h) ? h : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Checks a card's signatures against the keys the caller trusts (never against a key the card
 * points to): the card verifies when one EdDSA signature made by a trusted key covers its
 * canonical form. A trusted key with a `kid` is tried only for signatures naming that `kid`.
 * Bad input is a coded failure, never a throw.
 */
export function verifyCardSignature(
  card: unknown,
  trusted: readonly TrustedCardKey[],
): Result<{ kid: string }, CardFailure> {
  if (!isPlainObject(card))
    return fail('CARD_SIGNATURE_MALFORMED', 'the agent card is not a JSON object');
  const signatures = (card as { signatures?: unknown }).signatures;
  if (signatures === undefined || (Array.isArray(signatures) && signatures.length === 0))
    return fail('CARD_UNSIGNED');
  if (!Array.isArray(signatures)) return fail('CARD_SIGNATURE_MALFORMED');
  let payload: string;
  try {
    payload = b64url(canonicalCard(card));
  } catch {
    return fail('CARD_SIGNATURE_MALFORMED', 'the agent card has no canonical form (RFC 8785)');
  }
  let sawWellFormed = false;
  let sawTrustedKey = false;
  for (const entry of signatures.slice(0, MAX_CARD_SIGNATURES)) {
    const header = readHeader(entry);
    // `crit` names extensions this checker does not implement (RFC 7515 §4.1.11).
    if (header?.alg !== 'EdDSA' || typeof header.kid !== 'string' || 'crit' in header) continue;
    sawWellFormed = true;
    const { protected: p, signature } = entry as CardSignature;
    const sig = new Uint8Array(Buffer.from(signature, 'base64url'));
    const input = utf8.encode(`${p}.${payload}`);
    for (const key of trusted) {
      if (key.kid !== undefined && key.kid !== header.kid) continue;
      sawTrustedKey = true;
      if (ed25519VerifySync(key.publicKey, input, sig))
        return coversV03Routes(card) ?? { ok: true, result: { kid: header.kid } };
    }
  }
  if (!sawWellFormed) return fail('CARD_SIGNATURE_MALFORMED');
  if (!sawTrustedKey) return fail('CARD_KEY_UNKNOWN');
  return fail('CARD_SIGNATURE_INVALID');
}
