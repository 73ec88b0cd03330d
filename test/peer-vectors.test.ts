/**
 * Known-answer vectors: fixtures/peer-vectors.json is what node:crypto computes (its generator,
 * test/support/peer-vectors.ts, must reproduce it), and lib/peer must reproduce it byte for byte.
 */

import { describe, expect, setDefaultTimeout, test } from 'bun:test';
import vectorsDoc from '../fixtures/peer-vectors.json';
import {
  nativeX25519,
  nobleX25519,
  pairKey,
  x25519Public,
  x25519Secret,
} from '../lib/peer/pairwise.ts';
import { signedString, type PeerMode, type RingEntry } from '../lib/peer/signature.ts';
import { fromB64url, toB64url } from '../lib/peer/base64url.ts';
import { derivedKey, bunHashes, nobleHashes } from '../lib/peer/hashes.ts';
import { ed25519PublicKey, nobleEd25519, nativeEd25519 } from '../lib/peer/ed25519.ts';
import { createVerifier } from '../lib/peer/verifier.ts';
import { createSigner } from '../lib/peer/signer.ts';
import { makePeerVectors } from './support/peer-vectors.ts';

setDefaultTimeout(20_000); // per file (Bun scopes it so): real servers and processes are slow on a busy machine

interface Vector {
  mode: PeerMode;
  node: string;
  to: string;
  route: string;
  ts: string;
  nonce: string;
  scope: string;
  body: string;
  bodySha256: string;
  signedString: string;
  signature: string;
  header: string;
  derivedKey?: string;
  sharedSecret?: string;
  pairKey?: string;
}
interface Identity {
  privateKey: string;
  publicKey: string;
  x25519Secret: string;
  x25519Public: string;
}
const vectors = vectorsDoc.vectors as Vector[];
const identities = vectorsDoc.identities as Record<string, Identity>;
const secret = fromB64url(vectorsDoc.fleetSecret, 32)!;
const enc = new TextEncoder();
const seedOf = (node: string) =>
  identities[node] ? fromB64url(identities[node].privateKey, 32) : undefined;
const pubOf = (node: string) => fromB64url(identities[node]!.publicKey, 32)!;

describe('peer known-answer vectors', () => {
  test('the file is what the node:crypto generator makes', () => {
    expect(makePeerVectors()).toEqual(vectorsDoc as ReturnType<typeof makePeerVectors>);
  });

  test('cover every mode, and pairwise from the lower and the higher name', () => {
    expect(new Set(vectors.map((v) => v.mode))).toEqual(
      new Set(['shared', 'derived', 'ed25519', 'pairwise']),
    );
    const pairwise = vectors.filter((v) => v.mode === 'pairwise');
    expect(pairwise.some((v) => v.node < v.to) && pairwise.some((v) => v.node > v.to)).toBe(true);
  });

  test('identities: public keys and X25519 forms', () => {
    for (const [node, id] of Object.entries(identities)) {
      const seed = seedOf(node)!;
      expect([node, toB64url(ed25519PublicKey(seed))]).toEqual([node, id.publicKey]);
      expect([node, toB64url(x25519Secret(seed))]).toEqual([node, id.x25519Secret]);
      expect([node, toB64url(x25519Public(pubOf(node))!)]).toEqual([node, id.x25519Public]);
    }
  });

  // The hot-path primitives (Bun hasher, node:crypto) and the @noble fallbacks must both reproduce them.
  for (const [name, backend, hashes, x25519] of [
    ['bun + native', nativeEd25519(), bunHashes!, nativeX25519],
    ['noble', nobleEd25519, nobleHashes, nobleX25519],
  ] as const) {
    for (const v of vectors) {
      test(`${v.mode} ${v.node} -> ${v.to} ${v.route} (${name})`, async () => {
        const body = enc.encode(v.body);
        expect(signedString(v, body, hashes)).toBe(v.signedString);
        if (v.derivedKey) expect(toB64url(derivedKey(secret, v.node))).toBe(v.derivedKey);
        if (v.pairKey) {
          expect(
            toB64url(x25519.agree(x25519Secret(seedOf(v.node)!), x25519Public(pubOf(v.to))!)!),
          ).toBe(v.sharedSecret!);
          expect(toB64url(pairKey(v.node, seedOf(v.node)!, v.to, pubOf(v.to), x25519)!)).toBe(
            v.pairKey,
          );
          expect(toB64url(pairKey(v.to, seedOf(v.to)!, v.node, pubOf(v.node), x25519)!)).toBe(
            v.pairKey,
          );
        }

        // The caller's ring entry states the vector's mode (an HMAC mode means an app without a pair).
        const hmac = v.mode === 'shared' || v.mode === 'derived' ? v.mode : undefined;
        const entry = (n: string): RingEntry =>
          hmac && n === v.node
            ? { mode: hmac, ed25519: [] }
            : { mode: 'ed25519', ed25519: [pubOf(n)] };
        const ring = new Map<string, RingEntry>([v.node, v.to].map((n) => [n, entry(n)]));
        const signer = createSigner({
          node: v.node,
          secret,
          seed: seedOf(v.node),
          ring,
          ed25519: backend,
          hashes,
          x25519,
        });
        const headers = await signer.sign({ to: v.to, route: v.route, scope: v.scope }, body, {
          mode: v.mode,
          ts: Number(v.ts),
          nonce: v.nonce,
        });
        expect(headers).toEqual({ 'x-peer-signature': v.header });

        const verifier = createVerifier({
          self: v.to,
          ring,
          secret,
          seeds: seedOf(v.to) ? [seedOf(v.to)!] : [],
          now: () => Number(v.ts),
          ed25519: backend,
          hashes,
          x25519,
        });
        const sent = new Headers({ 'x-peer-signature': v.header });
        expect(await verifier.verify(sent, body, v.route)).toEqual({
          ok: true,
          result: { node: v.node, mode: v.mode, scope: v.scope, ts: Number(v.ts) },
        });
      });
    }
  }
});
