/**
 * The receiver-bound signature and the pairwise mode against real servers: a request meant for
 * another node or route is refused and runs nothing; ring members talk pairwise; strangers,
 * forgers and weaker modes are refused; replays stay refused. Plus the pair-key primitives.
 */

import { afterAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import {
  createPairCache,
  nativeX25519,
  nobleX25519,
  pairKey,
  x25519Public,
  x25519Secret,
} from '../lib/peer/pairwise.ts';
import type { RingEntry } from '../lib/peer/signature.ts';
import { ed25519PublicKey } from '../lib/peer/ed25519.ts';
import { createVerifier } from '../lib/peer/verifier.ts';
import { createSigner } from '../lib/peer/signer.ts';
import { invokeBody, signedPost, startFleet } from './support/peer.ts';

setDefaultTimeout(20_000); // per file (Bun scopes it so): real servers and processes are slow on a busy machine

const NOW = 1_767_225_600_000;
const f = startFleet(['hub', 'crm', 'scanner', 'lan', 'ghost'], {
  modes: { lan: 'derived' },
  unknown: ['ghost'],
  now: () => NOW,
});
afterAll(() => f.stop());
const { hub, crm, scanner } = f.nodes as Record<
  'hub' | 'crm' | 'scanner',
  (typeof f.nodes)[string]
>;
const refusal = (code: string) => ({ ok: false, error: { code, message: expect.any(String) } });
const callsOf = () =>
  Object.fromEntries(Object.values(f.nodes).map((n) => [n.name, n.calls.length]));

describe('the signature names its receiver and route', () => {
  for (const mode of ['pairwise', 'ed25519'] as const) {
    test(`${mode}: a request signed for scanner is refused by the hub, runs nothing, and is still good at scanner`, async () => {
      const body = invokeBody('echo', { for: 'scanner' });
      const before = callsOf();
      const atHub = await signedPost(crm.signer, hub.url, 'echo', body, { to: 'scanner', mode });
      expect([atHub.status, atHub.body]).toEqual([401, refusal('PEER_WRONG_RECEIVER')]);
      expect(atHub.body.error.message).toBe('signed for scanner, this node is hub');
      expect(callsOf()).toEqual(before);
      // the very same bytes and headers, delivered where they were meant to go
      const atScanner = await fetch(`${scanner.url}/peer/invoke`, {
        method: 'POST',
        headers: atHub.headers,
        body,
      });
      expect([atScanner.status, await atScanner.json()]).toEqual([
        200,
        { ok: true, result: { node: 'scanner', args: { for: 'scanner' } } },
      ]);
    });
  }

  test('a request signed for another route of the right node is refused on both routes', async () => {
    const before = callsOf();
    const relayBody = JSON.stringify({ route: ['crm'], capability: 'whoami', args: {}, trail: [] });
    const toInvoke = await signedPost(hub.signer, scanner.url, 'relay:whoami', relayBody, {
      route: '/peer/relay',
      path: '/peer/invoke',
    });
    expect([toInvoke.status, toInvoke.body]).toEqual([401, refusal('PEER_WRONG_RECEIVER')]);
    const toRelay = await signedPost(hub.signer, scanner.url, 'whoami', invokeBody('whoami'), {
      route: '/peer/invoke',
      path: '/peer/relay',
    });
    expect([toRelay.status, toRelay.body]).toEqual([401, refusal('PEER_WRONG_RECEIVER')]);
    expect(callsOf()).toEqual(before);
  });

  test('rewriting X-Peer-To or X-Peer-Route to match breaks the signature', async () => {
    const before = callsOf();
    const to = await signedPost(crm.signer, hub.url, 'echo', invokeBody('echo'), {
      to: 'scanner',
      edit: (h) => (h.to = 'hub'),
    });
    const route = await signedPost(crm.signer, hub.url, 'echo', invokeBody('echo'), {
      route: '/peer/relay',
      edit: (h) => (h.route = '/peer/invoke'),
    });
    expect([to.status, to.body, route.status, route.body]).toEqual([
      401,
      refusal('PEER_BAD_SIGNATURE'),
      401,
      refusal('PEER_BAD_SIGNATURE'),
    ]);
    expect(callsOf()).toEqual(before);
  });

  test('a request without X-Peer-To is unsigned, and a hostile one is not echoed', async () => {
    const r = await signedPost(crm.signer, hub.url, 'echo', invokeBody('echo'), {
      edit: (h) => delete h.to,
    });
    expect([r.status, r.body]).toEqual([401, refusal('PEER_UNSIGNED')]);
    const odd = await signedPost(crm.signer, hub.url, 'echo', invokeBody('echo'), {
      edit: (h) => (h.to = '<script>'),
    });
    expect([odd.status, odd.body.error.code, odd.text.includes('<script>')]).toEqual([
      401,
      'PEER_WRONG_RECEIVER',
      false,
    ]);
  });
});

describe('pairwise between ring members', () => {
  test('is the default, both ways, through the client and through a relay', async () => {
    const direct = await signedPost(crm.signer, scanner.url, 'echo', invokeBody('echo', { n: 1 }));
    expect([direct.status, direct.fields.mode]).toEqual([200, 'pairwise']);
    const back = await signedPost(scanner.signer, crm.url, 'whoami', invokeBody('whoami'));
    expect([back.status, back.fields.mode, back.body]).toEqual([
      200,
      'pairwise',
      { ok: true, result: 'crm' },
    ]);
    expect(await crm.client.peerFetch('scanner', 'whoami')).toEqual({
      ok: true,
      result: 'scanner',
    });
    expect(await crm.client.peerRelay('hub', ['scanner'], 'whoami')).toEqual({
      ok: true,
      result: 'scanner',
    });
  });

  test('a node whose ring entry is an HMAC mode is signed to (and signs) in that mode', async () => {
    const r = await signedPost(f.nodes.lan!.signer, hub.url, 'whoami', invokeBody('whoami'));
    expect([r.status, r.fields.mode]).toEqual([200, 'derived']);
    const to = await signedPost(crm.signer, f.nodes.lan!.url, 'whoami', invokeBody('whoami'));
    expect([to.status, to.fields.mode]).toEqual([200, 'ed25519']); // lan holds no pair: no pair key
  });

  test('replays stay refused, at the node it was meant for and anywhere else', async () => {
    const body = invokeBody('echo', { once: true });
    const first = await signedPost(crm.signer, scanner.url, 'echo', body);
    const again = await fetch(`${scanner.url}/peer/invoke`, {
      method: 'POST',
      headers: first.headers,
      body,
    });
    const elsewhere = await fetch(`${hub.url}/peer/invoke`, {
      method: 'POST',
      headers: first.headers,
      body,
    });
    expect([
      first.status,
      again.status,
      (await again.json()).error.code,
      elsewhere.status,
      (await elsewhere.json()).error.code,
    ]).toEqual([200, 401, 'PEER_REPLAY', 401, 'PEER_WRONG_RECEIVER']);
  });
});

describe('pairwise refuses', () => {
  test('a stranger, a third member forging a pair it is not part of, an HMAC node without a pair', async () => {
    const before = callsOf();
    const ghost = await signedPost(f.nodes.ghost!.signer, hub.url, 'echo', invokeBody('echo'), {
      mode: 'pairwise',
    });
    expect([ghost.status, ghost.body]).toEqual([401, refusal('PEER_UNKNOWN_NODE')]);
    // scanner holds its own pair keys with crm and with the hub, not the crm-hub one
    const forger = createSigner({ node: 'crm', seed: scanner.seed, ring: f.ring, now: () => NOW });
    const forged = await signedPost(forger, hub.url, 'echo', invokeBody('echo'));
    expect([forged.fields.mode, forged.status, forged.body]).toEqual([
      'pairwise',
      401,
      refusal('PEER_BAD_SIGNATURE'),
    ]);
    // lan's ring entry carries no Ed25519 key, so no pair key exists for it
    const lanWithPair = createSigner({
      node: 'lan',
      seed: f.nodes.lan!.seed,
      ring: f.ring,
      now: () => NOW,
    });
    const lan = await signedPost(lanWithPair, hub.url, 'echo', invokeBody('echo'));
    expect([lan.fields.mode, lan.status, lan.body]).toEqual([
      'pairwise',
      401,
      refusal('PEER_BAD_SIGNATURE'),
    ]);
    expect(callsOf()).toEqual(before);
  });

  test('a weaker mode from a node whose ring entry is ed25519', async () => {
    const withSecret = createSigner({
      node: 'crm',
      secret: f.secret,
      seed: crm.seed,
      ring: f.ring,
      now: () => NOW,
    });
    for (const mode of ['derived', 'shared'] as const) {
      const r = await signedPost(withSecret, scanner.url, 'echo', invokeBody('echo'), { mode });
      expect([mode, r.status, r.body]).toEqual([mode, 401, refusal('PEER_DOWNGRADE')]);
    }
  });

  test('the process keeps serving after every refusal', async () => {
    expect(await crm.client.peerFetch('hub', 'whoami')).toEqual({ ok: true, result: 'hub' });
  });
});

describe('pair keys', () => {
  const seeds = Array.from({ length: 4 }, () => crypto.getRandomValues(new Uint8Array(32)));

  test('both sides and both X25519 implementations derive the same key; other pairs differ', () => {
    const [a, b, c] = seeds as [Uint8Array, Uint8Array, Uint8Array];
    const ab = [
      pairKey('crm', a, 'scanner', ed25519PublicKey(b), nativeX25519),
      pairKey('scanner', b, 'crm', ed25519PublicKey(a), nativeX25519),
      pairKey('crm', a, 'scanner', ed25519PublicKey(b), nobleX25519),
    ].map((k) => Buffer.from(k!).toString('hex'));
    expect(new Set(ab).size).toBe(1);
    const ac = Buffer.from(pairKey('crm', a, 'lan', ed25519PublicKey(c))!).toString('hex');
    const abRenamed = Buffer.from(pairKey('crm', a, 'hub', ed25519PublicKey(b))!).toString('hex');
    expect(new Set([ab[0], ac, abRenamed]).size).toBe(3);
  });

  test('the Montgomery form of a public key is the X25519 public key of the seed', () => {
    for (const seed of seeds) {
      const viaSecret = nativeX25519.agree(
        x25519Secret(seed),
        Buffer.from('09'.padEnd(64, '0'), 'hex'),
      );
      expect(Buffer.from(x25519Public(ed25519PublicKey(seed))!).toString('hex')).toBe(
        Buffer.from(viaSecret!).toString('hex'),
      );
    }
  });

  test('unusable peer keys give no pair key: not a point, the identity, a small-order point', () => {
    const identity = new Uint8Array(32);
    identity[0] = 1;
    const smallOrder = Buffer.from(
      'ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f',
      'hex',
    ); // order 2
    for (const bad of [new Uint8Array(32).fill(255), identity, new Uint8Array(smallOrder)]) {
      expect(x25519Public(bad)).toBeUndefined();
      expect(pairKey('crm', seeds[0]!, 'evil', bad)).toBeUndefined();
    }
  });

  test('the per-peer cache is bounded, and an evicted peer is prepared again and still verifies', async () => {
    let made = 0;
    const cache = createPairCache<number>(3, () => ++made);
    for (let i = 0; i < 100; i++) cache.get(`n${i % 10}`);
    expect([cache.size, made]).toEqual([3, 100]);
    expect([cache.get('n9'), made]).toEqual([100, 100]);

    const [self, x, y] = seeds as [Uint8Array, Uint8Array, Uint8Array];
    const ring = new Map<string, RingEntry>([
      ['hub', { mode: 'ed25519', ed25519: [ed25519PublicKey(self)] }],
      ['crm', { mode: 'ed25519', ed25519: [ed25519PublicKey(x)] }],
      ['scanner', { mode: 'ed25519', ed25519: [ed25519PublicKey(y)] }],
    ]);
    const verifier = createVerifier({
      self: 'hub',
      ring,
      seeds: [self],
      pairCapacity: 1,
      now: () => NOW,
    });
    const signers = [
      createSigner({ node: 'crm', seed: x, ring, now: () => NOW }),
      createSigner({ node: 'scanner', seed: y, ring, now: () => NOW }),
    ];
    const body = new TextEncoder().encode('{}');
    const outcomes: string[] = [];
    for (let i = 0; i < 6; i++) {
      const h = await signers[i % 2]!.sign(
        { to: 'hub', route: '/peer/invoke', scope: 'echo' },
        body,
      );
      const r = await verifier.verify(new Headers(h), body, '/peer/invoke');
      outcomes.push(r.ok ? r.result.mode : r.error.code);
    }
    expect(outcomes).toEqual(Array(6).fill('pairwise'));
  });
});
