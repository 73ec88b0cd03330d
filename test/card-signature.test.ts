/**
 * Signed agent cards (A2A 1.0 §8.4): the RFC 8785 form against the a2a-tck corpus's vectors and
 * the kit's card cases (fixtures/card-signing/), every node's card accepted by the official SDK's
 * `verifyAgentCardSignature` with the key its JWKS names, a card changed by one byte refused by
 * both checkers, v0.3 routing fields (`url`, `preferredTransport`, `additionalInterfaces`) that
 * disagree with the signed interfaces refused here, hostile signature entries refused with a code,
 * and a key rotation under
 * concurrent card requests that never serves a card its JWKS cannot verify.
 */

import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { readFileSync } from 'node:fs';
import { canonicalizeAgentCard, verifyAgentCardSignature } from '@a2a-js/sdk';
import * as ed from '@noble/ed25519';
import { canonicalCard } from '../lib/a2a/card/canonical.ts';
import { cardKeyOf, JWKS_PATH, signCard, verifyCardSignature } from '../lib/a2a/card/signature.ts';
import { canonicalJson, JcsError } from '../lib/a2a/card/jcs.ts';
import { statusOf } from '../lib/errors/registry.ts';
import { loadCardKeys } from '../lib/node/card-keys.ts';
import { ed25519PublicKey, ed25519SignSync, ed25519VerifySync } from '../lib/peer/ed25519.ts';
import scanner from '../node/scanner/index.ts';
import { type RunningFleet, startFleet } from './support/fleet.ts';
import { FIXTURES, startNode, type TestNode } from './support/node.ts';

setDefaultTimeout(20_000); // per file (Bun scopes it so): real servers and processes are slow on a busy machine

const read = (name: string) => JSON.parse(readFileSync(`${FIXTURES}/card-signing/${name}`, 'utf8'));
const jcsVectors = read('jcs-vectors.json') as {
  accept: { id: string; input?: unknown; input_raw?: string; canonical: string }[];
  reject: { id: string; input_raw: string }[];
};
const cardVectors = read('card-canonicalization.json') as {
  cases: { id: string; agent_card: Record<string, unknown>; jcs?: string; card: string }[];
  reject: { id: string; claimed: string }[];
};

/** What an SDK user writes: fetch the JWKS the signature's `jku` names and take the key `kid` names. */
const jwksKeyFinder = (fetched: string[]) => async (kid: string, jku?: string) => {
  fetched.push(jku ?? '');
  const set = (await (await fetch(jku!)).json()) as { keys: { kid: string }[] };
  const jwk = set.keys.find((k) => k.kid === kid);
  if (!jwk) throw new Error(`no key ${kid}`);
  return jwk as any;
};
/** The SDK's verdict: true when `verifyAgentCardSignature` accepts the card. */
async function sdkAccepts(card: unknown, fetched: string[] = []): Promise<boolean> {
  const debug = console.debug;
  console.debug = () => {}; // the SDK logs each entry that fails
  try {
    await verifyAgentCardSignature(jwksKeyFinder(fetched))(card as any);
    return true;
  } catch {
    return false;
  } finally {
    console.debug = debug;
  }
}
const publicKeyOf = async (card: Record<string, unknown>) => {
  const url = `${String(card.url).replace(/\/a2a$/, '')}${JWKS_PATH}`;
  const set = (await (await fetch(url)).json()) as { keys: { kid: string; x: string }[] };
  return set.keys.map((k) => ({
    kid: k.kid,
    publicKey: new Uint8Array(Buffer.from(k.x, 'base64url')),
  }));
};

describe('RFC 8785 (fixtures/card-signing/jcs-vectors.json)', () => {
  test('every accept vector gives its canonical bytes once signatures are excluded', () => {
    const got = jcsVectors.accept.map((v) => {
      const input = (v.input_raw !== undefined ? JSON.parse(v.input_raw) : v.input) as Record<
        string,
        unknown
      >;
      const { signatures: _, ...rest } = input;
      return { id: v.id, canonical: canonicalJson(rest) };
    });
    expect(got).toEqual(jcsVectors.accept.map((v) => ({ id: v.id, canonical: v.canonical })));
    expect(got.length).toBeGreaterThanOrEqual(30);
  });

  test('every reject vector is refused: a lone surrogate, NaN, ±Infinity', () => {
    const refused = jcsVectors.reject.map((v) => {
      let value: unknown;
      try {
        value = JSON.parse(v.input_raw);
      } catch {
        return v.id; // not JSON at all: no canonical form to give
      }
      try {
        canonicalJson(value);
        return `${v.id} accepted`;
      } catch (e) {
        return e instanceof JcsError ? v.id : `${v.id} threw ${e}`;
      }
    });
    expect(refused).toEqual(jcsVectors.reject.map((v) => v.id));
    for (const n of [Number.NaN, Infinity, -Infinity])
      expect(() => canonicalJson({ n })).toThrow(JcsError);
    expect(() => canonicalJson({ [String.fromCharCode(0xd800)]: 1 })).toThrow(JcsError);
  });
});

describe('the card signing input (fixtures/card-signing/card-canonicalization.json)', () => {
  test("the kit's cards: RFC 8785 of the card without signatures, and this project's §8.4.1 form", () => {
    for (const c of cardVectors.cases) {
      const { signatures: _, ...rest } = c.agent_card;
      if (c.jcs) expect({ id: c.id, jcs: canonicalJson(rest) }).toEqual({ id: c.id, jcs: c.jcs });
      expect({ id: c.id, card: canonicalCard(c.agent_card) }).toEqual({ id: c.id, card: c.card });
      // The official SDK signs and verifies over the same bytes.
      expect({ id: c.id, sdk: canonicalizeAgentCard(c.agent_card as any) }).toEqual({
        id: c.id,
        sdk: c.card,
      });
    }
  });

  test('claimed canonical text that still carries signatures is not the canonical form', () => {
    for (const r of cardVectors.reject) {
      const card = JSON.parse(r.claimed);
      expect(card.signatures).toBeDefined();
      expect(canonicalCard(card)).not.toBe(r.claimed);
      expect(canonicalCard(card)).not.toContain('signatures');
    }
  });
});

describe("a node's signed card", () => {
  let node: TestNode;
  let card: Record<string, unknown>;
  beforeAll(async () => {
    node = await startNode(scanner({ fixturesDir: FIXTURES }));
    card = (await (await fetch(`${node.url}/.well-known/agent-card.json`)).json()) as Record<
      string,
      unknown
    >;
  });
  afterAll(() => node.dispose());

  test('is a flattened JWS with EdDSA, typ, kid and a jku to the JWKS the node serves', async () => {
    const [sig] = card.signatures as { protected: string; signature: string }[];
    const header = JSON.parse(Buffer.from(sig!.protected, 'base64url').toString('utf8'));
    expect(Object.keys(header).sort()).toEqual(['alg', 'jku', 'kid', 'typ']);
    expect(header).toMatchObject({ alg: 'EdDSA', typ: 'JOSE', jku: `${node.url}${JWKS_PATH}` });
    const jwks = (await (await fetch(header.jku)).json()) as { keys: Record<string, string>[] };
    expect(jwks.keys.map((k) => [k.kty, k.crv, k.kid, k.alg])).toEqual([
      ['OKP', 'Ed25519', header.kid, 'EdDSA'],
    ]);
    expect(jwks.keys[0]).not.toHaveProperty('d'); // never the private key
  });

  test('the official SDK verifies it through the jku; changed by one byte it does not', async () => {
    const fetched: string[] = [];
    expect(await sdkAccepts(card, fetched)).toBe(true);
    expect(fetched).toEqual([`${node.url}${JWKS_PATH}`]);
    const text = JSON.stringify(card);
    const i = text.indexOf('Watches sector');
    const flipped = JSON.parse(`${text.slice(0, i)}w${text.slice(i + 1)}`);
    expect(await sdkAccepts(flipped)).toBe(false);
    const keys = await publicKeyOf(card);
    expect(verifyCardSignature(card, keys)).toMatchObject({ ok: true });
    expect(verifyCardSignature(flipped, keys)).toMatchObject({
      ok: false,
      error: { code: 'CARD_SIGNATURE_INVALID' },
    });
  });

  test('a v0.3 url moved elsewhere does not verify here (the v1.0 form does not cover it)', async () => {
    const keys = await publicKeyOf(card);
    const moved = { ...card, url: 'http://attacker.example/a2a' };
    expect(verifyCardSignature(moved, keys)).toMatchObject({
      ok: false,
      error: { code: 'CARD_SIGNATURE_INVALID' },
    });
  });

  test('v0.3 routing fields changed (additionalInterfaces, preferredTransport) do not verify here, though the SDK accepts them', async () => {
    const keys = await publicKeyOf(card);
    const url = card.url as string;
    const relayed = [
      {
        ...card,
        additionalInterfaces: [{ url: 'http://attacker.example/a2a', transport: 'JSONRPC' }],
      },
      {
        ...card,
        additionalInterfaces: [
          ...(card.additionalInterfaces as unknown[]),
          { url, transport: 'GRPC' },
        ],
      },
      { ...card, additionalInterfaces: 'http://attacker.example/a2a' },
      { ...card, preferredTransport: 'GRPC' },
      { ...card, preferredTransport: 42 },
    ];
    for (const moved of relayed) {
      // The v1.0 form the SDK verifies does not cover them: it cannot tell.
      expect(await sdkAccepts(moved)).toBe(true);
      expect(verifyCardSignature(moved, keys)).toMatchObject({
        ok: false,
        error: { code: 'CARD_SIGNATURE_INVALID' },
      });
    }
    // The same fields, agreeing with the signed interfaces, still verify; so does a card without them.
    const { url: _u, preferredTransport: _p, additionalInterfaces: _a, ...v1Only } = card;
    expect(verifyCardSignature({ ...card, preferredTransport: 'JSONRPC' }, keys)).toMatchObject({
      ok: true,
    });
    expect(verifyCardSignature(v1Only, keys)).toMatchObject({ ok: true });
  });

  test('hostile signature entries are refused with a code and a 4xx, never a throw', async () => {
    const keys = await publicKeyOf(card);
    const [good] = card.signatures as { protected: string; signature: string }[];
    const other = cardKeyOf(new Uint8Array(32).fill(9));
    const header = (h: unknown) => Buffer.from(JSON.stringify(h)).toString('base64url');
    const cases: [string, unknown, string][] = [
      ['not an object', 'card', 'CARD_SIGNATURE_MALFORMED'],
      ['unsigned', { ...card, signatures: undefined }, 'CARD_UNSIGNED'],
      ['empty', { ...card, signatures: [] }, 'CARD_UNSIGNED'],
      ['not a list', { ...card, signatures: good }, 'CARD_SIGNATURE_MALFORMED'],
      ['junk entries', { ...card, signatures: [null, 1, 'x', {}] }, 'CARD_SIGNATURE_MALFORMED'],
      [
        'alg none',
        { ...card, signatures: [{ ...good, protected: header({ alg: 'none', kid: 'k' }) }] },
        'CARD_SIGNATURE_MALFORMED',
      ],
      [
        'crit',
        {
          ...card,
          signatures: [{ ...good, protected: header({ alg: 'EdDSA', kid: 'k', crit: ['b64'] }) }],
        },
        'CARD_SIGNATURE_MALFORMED',
      ],
      [
        'a huge header',
        { ...card, signatures: [{ ...good, protected: 'A'.repeat(1_000_000) }] },
        'CARD_SIGNATURE_MALFORMED',
      ],
      ['signed by a key not pinned', signCard(card, other, 'http://x/jwks'), 'CARD_KEY_UNKNOWN'],
      [
        'a lone surrogate',
        { ...card, name: String.fromCharCode(0xdc00) },
        'CARD_SIGNATURE_MALFORMED',
      ],
    ];
    for (const [what, c, code] of cases) {
      const r = verifyCardSignature(c, keys);
      expect({ what, code: r.ok ? 'ok' : r.error.code }).toEqual({ what, code });
      expect(statusOf(code)).toBe(422);
    }
    // A key pinned without its id is tried against every entry: another key's signature fails.
    expect(
      verifyCardSignature(signCard(card, other, 'http://x/jwks'), [
        { publicKey: keys[0]!.publicKey },
      ]),
    ).toMatchObject({ ok: false, error: { code: 'CARD_SIGNATURE_INVALID' } });
  });

  test('a rotation under concurrent card requests: every card verifies with the JWKS after it', async () => {
    const before = await publicKeyOf(card);
    const next = cardKeyOf(crypto.getRandomValues(new Uint8Array(32)));
    const reads = Array.from({ length: 40 }, async (_, i) => {
      if (i === 20) node.node.rotateCardKey(next);
      const c = await (await fetch(`${node.url}/.well-known/agent-card.json`)).json();
      return { c, keys: await publicKeyOf(c as Record<string, unknown>) };
    });
    const kids = new Set<string>();
    for (const { c, keys } of await Promise.all(reads)) {
      const r = verifyCardSignature(c, keys);
      expect(r).toMatchObject({ ok: true });
      if (r.ok) kids.add(r.result.kid);
      expect(await sdkAccepts(c)).toBe(true);
    }
    expect(kids.has(next.kid)).toBe(true);
    const after = await publicKeyOf(card);
    // The JWKS now names the new key first and keeps the one it replaced.
    expect(after.map((k) => k.kid)).toEqual([next.kid, before[0]!.kid]);
    const served = (await (await fetch(`${node.url}/.well-known/agent-card.json`)).json()) as any;
    expect(verifyCardSignature(served, [next])).toMatchObject({
      ok: true,
      result: { kid: next.kid },
    });
    expect(verifyCardSignature(card, [next])).toMatchObject({
      ok: false,
      error: { code: 'CARD_KEY_UNKNOWN' },
    });
  });
});

describe("the hub checks each member's card against the key it pinned", () => {
  let f: RunningFleet;
  beforeAll(async () => {
    f = await startFleet([scanner({ fixturesDir: FIXTURES })]);
  });
  afterAll(() => f.stop());
  const scannerStatus = async () =>
    ((await (await fetch(`${f.hubUrl}/api/fleet`)).json()) as any).nodes.find(
      (n: any) => n.name === 'scanner',
    );

  test('a card signed with the pinned key is verified; another key is marked and logged', async () => {
    const own = (await loadCardKeys(f.dataDir, 'scanner'))!.current;
    expect(await scannerStatus()).toMatchObject({
      cardSignature: { state: 'verified', kid: own.kid },
      warnings: [],
    });
    const stranger = cardKeyOf(crypto.getRandomValues(new Uint8Array(32)));
    f.nodes.get('scanner')!.node.rotateCardKey(stranger);
    const marked = await scannerStatus();
    expect(marked.cardSignature).toEqual({ state: 'failed', code: 'CARD_KEY_UNKNOWN' });
    expect(marked.warnings).toEqual([
      'card signature does not verify against the key pinned for scanner (CARD_KEY_UNKNOWN)',
    ]);
    await scannerStatus(); // asked again: logged once, not per snapshot
    const logged = f.log.lines.filter((l) => l.includes('fleet member card does not verify'));
    expect(logged).toEqual([
      'warn fleet member card does not verify {"node":"scanner","code":"CARD_KEY_UNKNOWN"}',
    ]);
    f.nodes.get('scanner')!.node.rotateCardKey(own);
    expect((await scannerStatus()).cardSignature).toEqual({ state: 'verified', kid: own.kid });
  });
});

describe('the sync Ed25519 that signs and checks cards (node:crypto, noble where it lacks one)', () => {
  // RFC 8032 §7.1 TEST 2: one-byte message 0x72.
  const seed = Buffer.from(
    '4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb',
    'hex',
  );
  const message = Buffer.from('72', 'hex');
  const want =
    '92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da' +
    '085ac1e43e15996e458f3613d0f11d8c387b2eaeb4302aeeb00d291612bb0c00';

  test('signs the RFC 8032 vector as noble does, and derives its public key', () => {
    expect(Buffer.from(ed25519SignSync(seed, message)).toString('hex')).toBe(want);
    expect(Buffer.from(ed.sign(message, seed)).toString('hex')).toBe(want);
    expect(Buffer.from(ed25519PublicKey(seed)).toString('hex')).toBe(
      '3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c',
    );
  });

  test('checks it, and refuses a bent signature, a non-canonical S, a short key or signature', () => {
    const pub = ed25519PublicKey(seed);
    const sig = Buffer.from(want, 'hex');
    expect(ed25519VerifySync(pub, message, sig)).toBe(true);
    const bent = Uint8Array.from(sig);
    bent[10]! ^= 1;
    expect(ed25519VerifySync(pub, message, bent)).toBe(false);
    // S + L (the group order) is the same scalar, encoded non-canonically: RFC 8032 refuses it.
    const L = 2n ** 252n + 27742317777372353535851937790883648493n;
    const s = BigInt(`0x${Buffer.from(sig.subarray(32)).reverse().toString('hex')}`) + L;
    const sPlusL = Uint8Array.from(sig);
    sPlusL.set(Buffer.from(s.toString(16).padStart(64, '0'), 'hex').reverse(), 32);
    expect(ed.verify(sPlusL, message, pub, { zip215: false })).toBe(false);
    expect(ed25519VerifySync(pub, message, sPlusL)).toBe(false);
    expect(ed25519VerifySync(pub.subarray(0, 31), message, sig)).toBe(false);
    expect(ed25519VerifySync(pub, message, sig.subarray(0, 63))).toBe(false);
    expect(ed25519VerifySync(pub, Buffer.from('73', 'hex'), sig)).toBe(false);
  });
});
