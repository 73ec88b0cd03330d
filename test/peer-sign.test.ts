/** lib/peer/signature.ts in process: Ed25519 cross-checks, the replay cache bounds, rotation, secrecy of signers. */

import { describe, expect, setDefaultTimeout, test } from 'bun:test';
import * as ed from '@noble/ed25519';
import { createNonceCache } from '../lib/peer/nonces.ts';
import { signedString, type RingEntry } from '../lib/peer/signature.ts';
import { fromB64url } from '../lib/peer/base64url.ts';
import { bunHashes, nobleHashes } from '../lib/peer/hashes.ts';
import {
  detectEd25519,
  ed25519PublicKey,
  nobleEd25519,
  nativeEd25519,
} from '../lib/peer/ed25519.ts';
import { createVerifier } from '../lib/peer/verifier.ts';
import { createSigner } from '../lib/peer/signer.ts';
import { signatureFields } from './support/peer.ts';

setDefaultTimeout(20_000); // per file (Bun scopes it so): real servers and processes are slow on a busy machine

const NOW = 1_767_225_600_000;
const enc = new TextEncoder();
const body = enc.encode('{"capability":"echo","args":{}}');
const T = { to: 'hub', route: '/peer/invoke', scope: 'echo' };
const ROUTE = '/peer/invoke';
const ringOf = (node: string, ...seeds: Uint8Array[]) =>
  new Map<string, RingEntry>([[node, { mode: 'ed25519', ed25519: seeds.map(ed25519PublicKey) }]]);

describe('Ed25519 implementations agree', () => {
  test('Bun offers native Ed25519, so the hot path uses it', async () => {
    expect((await detectEd25519()).name).toBe('native');
  });

  test('@noble/ed25519 signatures verify in the native verifier and the other way round', async () => {
    const seed = ed.utils.randomSecretKey();
    const ring = ringOf('crm', seed);
    for (const [signWith, verifyWith] of [
      [nobleEd25519, nativeEd25519()],
      [nativeEd25519(), nobleEd25519],
    ]) {
      const signer = createSigner({ node: 'crm', seed, now: () => NOW, ed25519: signWith });
      const verifier = createVerifier({ self: 'hub', ring, now: () => NOW, ed25519: verifyWith });
      const headers = await signer.sign(T, body);
      const stated = signatureFields(headers['x-peer-signature']!);
      expect(await verifier.verify(new Headers(headers), body, ROUTE)).toMatchObject({
        ok: true,
        result: { node: 'crm', mode: 'ed25519' },
      });
      // and the raw library agrees on the same bytes
      const text = enc.encode(
        signedString(
          {
            node: 'crm',
            ts: stated.ts!,
            nonce: stated.nonce!,
            scope: 'echo',
            to: 'hub',
            route: ROUTE,
          },
          body,
        ),
      );
      expect(ed.verify(fromB64url(stated.sig!, 64)!, text, ed25519PublicKey(seed))).toBe(true);
    }
  });

  test('both backends refuse a forged or malformed signature without throwing', async () => {
    const pub = ed25519PublicKey(ed.utils.randomSecretKey());
    for (const b of [nobleEd25519, nativeEd25519()]) {
      expect(await b.verify(pub, body, new Uint8Array(64))).toBe(false);
      expect(await b.verify(pub, body, new Uint8Array(64).fill(255))).toBe(false);
      expect(await b.verify(new Uint8Array(32).fill(255), body, new Uint8Array(64))).toBe(false);
    }
  });
});

describe('hash implementations agree', () => {
  test('Bun hasher and @noble/hashes give the same SHA-256 and HMAC on random inputs', () => {
    const keys = [
      crypto.getRandomValues(new Uint8Array(32)),
      crypto.getRandomValues(new Uint8Array(16)),
    ];
    const [bunMacs, nobleMacs] = [
      keys.map((k) => bunHashes!.macFor(k)),
      keys.map((k) => nobleHashes.macFor(k)),
    ];
    for (let i = 0; i < 200; i++) {
      const bytes = crypto.getRandomValues(new Uint8Array(i * 7));
      const text = `${new TextDecoder().decode(bytes)}\u00e9\u534a`;
      expect(bunHashes!.sha256hex(bytes)).toBe(nobleHashes.sha256hex(bytes));
      // a prepared key is reused across calls, as the verifier does
      expect(bunMacs[i % 2]!(text)).toBe(nobleMacs[i % 2]!(text));
    }
  });
});

describe('verifier', () => {
  test('one nonce verified twenty times at once in process: exactly one passes', async () => {
    const seed = ed.utils.randomSecretKey();
    const signer = createSigner({ node: 'crm', seed, now: () => NOW });
    const verifier = createVerifier({ self: 'hub', ring: ringOf('crm', seed), now: () => NOW });
    const headers = new Headers(await signer.sign(T, body));
    const results = await Promise.all(
      Array.from({ length: 20 }, () => verifier.verify(headers, body, ROUTE)),
    );
    expect(results.map((r) => (r.ok ? 'ok' : r.error.code)).sort()).toEqual([
      ...Array(19).fill('PEER_REPLAY'),
      'ok',
    ]);
  });

  test('a ring holding two keys for a rotating node accepts both, and neither after retirement', async () => {
    const [oldSeed, newSeed] = [ed.utils.randomSecretKey(), ed.utils.randomSecretKey()];
    const both = createVerifier({
      self: 'hub',
      ring: ringOf('crm', newSeed, oldSeed),
      now: () => NOW,
    });
    const retired = createVerifier({ self: 'hub', ring: ringOf('crm', newSeed), now: () => NOW });
    const sign = (seed: Uint8Array) =>
      createSigner({ node: 'crm', seed, now: () => NOW })
        .sign(T, body)
        .then((h) => new Headers(h));
    const outcome = async (v: ReturnType<typeof createVerifier>, seed: Uint8Array) => {
      const r = await v.verify(await sign(seed), body, ROUTE);
      return r.ok ? 'ok' : r.error.code;
    };
    expect([
      await outcome(both, oldSeed),
      await outcome(both, newSeed),
      await outcome(retired, oldSeed),
      await outcome(retired, newSeed),
    ]).toEqual(['ok', 'ok', 'PEER_BAD_SIGNATURE', 'ok']);
  });

  test('the window is configurable', async () => {
    const seed = ed.utils.randomSecretKey();
    const signer = createSigner({ node: 'crm', seed, now: () => NOW - 5_000 });
    const strict = createVerifier({
      self: 'hub',
      ring: ringOf('crm', seed),
      now: () => NOW,
      windowMs: 1_000,
    });
    expect(await strict.verify(new Headers(await signer.sign(T, body)), body, ROUTE)).toMatchObject(
      { ok: false, error: { code: 'PEER_STALE' } },
    );
  });

  test('a verifier without the fleet secret refuses HMAC modes as unverifiable', async () => {
    const secret = crypto.getRandomValues(new Uint8Array(32));
    const signer = createSigner({ node: 'lan', secret, now: () => NOW });
    const verifier = createVerifier({
      self: 'hub',
      ring: new Map([['lan', { mode: 'shared', ed25519: [] }]]),
      now: () => NOW,
    });
    expect(
      await verifier.verify(new Headers(await signer.sign(T, body)), body, ROUTE),
    ).toMatchObject({ ok: false, error: { code: 'PEER_BAD_SIGNATURE' } });
  });
});

describe('nonce cache', () => {
  test('a flood cannot grow it past its capacity, and evicted nonces still cannot be replayed', () => {
    const cache = createNonceCache(60_000, 100);
    for (let i = 0; i < 10_000; i++) expect(cache.admit(`n${i}`, NOW + i, NOW)).toBe('fresh');
    expect(cache.size).toBe(100);
    // n0 was evicted long ago: its timestamp is behind the horizon, so it is refused anyway
    expect(cache.admit('n0', NOW, NOW)).toBe('horizon');
    expect(cache.admit('n9999', NOW + 9_999, NOW)).toBe('replay');
    expect(cache.admit('new', NOW + 20_000, NOW)).toBe('fresh');
  });

  test('entries are dropped once their timestamp has left the window', () => {
    const cache = createNonceCache(1_000, 1_000);
    for (let i = 0; i < 50; i++) cache.admit(`n${i}`, NOW, NOW);
    expect(cache.size).toBe(50);
    cache.admit('later', NOW + 5_000, NOW + 5_000);
    expect(cache.size).toBe(1);
  });

  test('a cache that grows while its oldest entries leave keeps every live nonce, in order', () => {
    // Expiry moves the front while arrivals outgrow the buffer several times (it starts small).
    const cache = createNonceCache(1_000, 5_000);
    for (let i = 0; i < 4_800; i++) {
      const t = NOW + Math.floor(i / 2);
      expect(cache.admit(`n${i}`, t, t)).toBe('fresh');
    }
    // Live: timestamps within 1,000 ms of the last (NOW + 2,399), that is i >= 2,798.
    expect(cache.size).toBe(4_800 - 2_798);
    expect(cache.admit('n4799', NOW + 2_399, NOW + 2_399)).toBe('replay');
    expect(cache.admit('n2798', NOW + 1_399, NOW + 2_399)).toBe('replay');
    expect(cache.admit('n2797', NOW + 1_398, NOW + 2_399)).toBe('fresh');
    // Past capacity the oldest goes first and the horizon follows it.
    for (let i = 0; i < 6_000; i++) cache.admit(`m${i}`, NOW + 2_400, NOW + 2_400);
    expect(cache.size).toBe(5_000);
    expect(cache.admit('n4799', NOW + 2_399, NOW + 2_400)).toBe('horizon');
  });
});

describe('signers keep keys to themselves', () => {
  test('serialising or printing a signer shows no key bytes', () => {
    const secret = crypto.getRandomValues(new Uint8Array(32));
    const seed = crypto.getRandomValues(new Uint8Array(32));
    const signer = createSigner({ node: 'crm', secret, seed });
    const shown = JSON.stringify(signer) + String(signer) + Bun.inspect(signer);
    for (const b of [secret, seed]) {
      expect(shown).not.toContain(Buffer.from(b).toString('base64url'));
      expect(shown).not.toContain(Buffer.from(b).toString('hex'));
      expect(shown).not.toContain(`${String(b[0])}, ${String(b[1])}`);
    }
    expect(signer.modes).toEqual(['ed25519', 'derived', 'shared']);
  });

  test('invalid signer input is a thrown configuration error, not a bad signature', async () => {
    expect(() => createSigner({ node: '../etc' })).toThrow('invalid node name');
    expect(() => createSigner({ node: 'crm', seed: new Uint8Array(31) })).toThrow('32 bytes');
    await expect(createSigner({ node: 'crm' }).sign(T, body)).rejects.toThrow('no key');
    await expect(
      createSigner({ node: 'crm', seed: new Uint8Array(32) }).sign(
        { ...T, scope: 'bad\nscope' },
        body,
      ),
    ).rejects.toThrow('invalid scope');
  });
});
