/** Known-answer vectors: lib/peer/signature.ts must reproduce fixtures/peer-vectors.json byte for byte. */

import { describe, expect, test } from 'bun:test';
import vectorsDoc from '../fixtures/peer-vectors.json';
import {
  createSigner,
  createVerifier,
  derivedKey,
  ed25519PublicKey,
  fromB64url,
  bunHashes,
  nobleEd25519,
  nobleHashes,
  signedString,
  toB64url,
  nativeEd25519,
  type PeerMode,
  type RingEntry,
} from '../lib/peer/signature.ts';

interface Vector {
  mode: PeerMode;
  node: string;
  ts: string;
  nonce: string;
  scope: string;
  body: string;
  bodySha256: string;
  signedString: string;
  signature: string;
  derivedKey?: string;
  privateKey?: string;
  publicKey?: string;
}
const vectors = vectorsDoc.vectors as Vector[];
const secret = fromB64url(vectorsDoc.fleetSecret, 32)!;
const enc = new TextEncoder();

describe('peer known-answer vectors', () => {
  test('cover every mode', () => {
    expect(new Set(vectors.map((v) => v.mode))).toEqual(new Set(['shared', 'derived', 'ed25519']));
  });

  // The hot-path primitives (Bun hasher, WebCrypto) and the @noble fallbacks must both reproduce them.
  for (const [name, backend, hashes] of [
    ['bun + native', nativeEd25519(), bunHashes!],
    ['noble', nobleEd25519, nobleHashes],
  ] as const) {
    for (const v of vectors) {
      test(`${v.mode} ${v.node} (${name})`, async () => {
        const body = enc.encode(v.body);
        expect(signedString(v, body, hashes)).toBe(v.signedString);
        if (v.derivedKey) expect(toB64url(derivedKey(secret, v.node))).toBe(v.derivedKey);
        const seed = v.privateKey ? fromB64url(v.privateKey, 32) : undefined;
        if (seed) expect(toB64url(ed25519PublicKey(seed))).toBe(v.publicKey!);

        const signer = createSigner({ node: v.node, secret, seed, ed25519: backend, hashes });
        const headers = await signer.sign(v.scope, body, { mode: v.mode, ts: Number(v.ts), nonce: v.nonce });
        expect(headers['x-peer-signature']).toBe(v.signature);

        const entry: RingEntry = { mode: v.mode, ed25519: v.publicKey ? [fromB64url(v.publicKey, 32)!] : [] };
        const verifier = createVerifier({ ring: new Map([[v.node, entry]]), secret, now: () => Number(v.ts), ed25519: backend, hashes });
        const sent = new Headers({ ...headers, 'x-peer-signature': v.signature });
        expect(await verifier.verify(sent, body)).toEqual({ ok: true, node: v.node, mode: v.mode, scope: v.scope, ts: Number(v.ts) });
      });
    }
  }
});
