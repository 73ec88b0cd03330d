/** POST /peer/invoke against real servers: each refusal code, hostile input, one-nonce races. */

import { afterAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { toB64url } from '../lib/peer/base64url.ts';
import { createSigner } from '../lib/peer/signer.ts';
import { invokeBody, signedPost, startFleet } from './support/peer.ts';

setDefaultTimeout(20_000); // per file (Bun scopes it so): real servers and processes are slow on a busy machine

const NOW = 1_767_225_600_000; // a fixed clock: the tests own time, nothing waits
const f = startFleet(['hub', 'crm', 'scanner', 'lan', 'ghost'], {
  modes: { scanner: 'derived', lan: 'shared' },
  unknown: ['ghost'],
  now: () => NOW,
  maxBodyBytes: 64 * 1024,
});
afterAll(() => f.stop());
const crm = f.nodes.crm!;
const hub = f.nodes.hub!;
const target = hub.url;
const refusal = (code: string) => ({ ok: false, error: { code, message: expect.any(String) } });

describe('POST /peer/invoke accepts', () => {
  test('each mode from a node whose ring entry names it; pairwise by default between two Ed25519 nodes', async () => {
    for (const name of ['crm', 'scanner', 'lan']) {
      const r = await signedPost(
        f.nodes[name]!.signer,
        target,
        'echo',
        invokeBody('echo', { n: 1 }),
      );
      expect({ status: r.status, body: r.body, mode: r.fields.mode }).toEqual({
        status: 200,
        body: { ok: true, result: { node: 'hub', args: { n: 1 } } },
        mode: { crm: 'pairwise', scanner: 'derived', lan: 'shared' }[name]!,
      });
    }
    // ed25519 ranks with pairwise, so a node may still sign with its own key
    const ed = await signedPost(crm.signer, target, 'echo', invokeBody('echo', { n: 2 }), {
      mode: 'ed25519',
    });
    expect([ed.status, ed.fields.mode, ed.body]).toEqual([
      200,
      'ed25519',
      { ok: true, result: { node: 'hub', args: { n: 2 } } },
    ]);
  });

  test('a missing args is an empty object', async () => {
    const r = await signedPost(crm.signer, target, 'echo', JSON.stringify({ capability: 'echo' }));
    expect(r.body).toEqual({ ok: true, result: { node: 'hub', args: {} } });
  });
});

describe('POST /peer/invoke refuses with a code', () => {
  test('PEER_UNSIGNED: no header, or a header missing some of its fields', async () => {
    const bare = await fetch(`${target}/peer/invoke`, { method: 'POST', body: invokeBody('echo') });
    expect([bare.status, await bare.json()]).toEqual([401, refusal('PEER_UNSIGNED')]);
    const partial = await signedPost(crm.signer, target, 'echo', invokeBody('echo'), {
      edit: (h) => {
        delete h.sig;
        delete h.nonce;
      },
    });
    expect([partial.status, partial.body.error]).toEqual([
      401,
      { code: 'PEER_UNSIGNED', message: 'X-Peer-Signature lacks nonce, sig' },
    ]);
  });

  test('PEER_BAD_HEADER: a malformed X-Peer-Signature, whatever its shape, runs nothing', async () => {
    const raws: Record<string, (v: string) => string> = {
      'a field twice': (v) => `${v} node=crm`,
      'the header twice (joined)': (v) => `${v}, ${v}`,
      'an unknown field': (v) => `${v} admin=yes`,
      'a __proto__ field': (v) => `${v} __proto__=x`,
      'no version': (v) => v.slice(3),
      'another version': (v) => `v2${v.slice(2)}`,
      'two spaces': (v) => v.replace(' ts=', '  ts='),
      'a part without =': (v) => v.replace(' ts=', ' ts'),
      'a huge value': (v) => v.replace(' scope=echo', ` scope=${'e'.repeat(2000)}`),
      'the old eight headers': () => 'AAAA',
    };
    const nonce = toB64url(crypto.getRandomValues(new Uint8Array(16)));
    for (const [name, raw] of Object.entries(raws)) {
      const r = await signedPost(crm.signer, target, 'echo', invokeBody('echo'), { raw, nonce });
      expect([name, r.status, r.body]).toEqual([name, 401, refusal('PEER_BAD_HEADER')]);
    }
    // well formed with the same nonce, it goes through: no refusal recorded it, the process is up
    const good = await signedPost(crm.signer, target, 'echo', invokeBody('echo', { after: 1 }), {
      nonce,
    });
    expect([good.status, good.body]).toEqual([
      200,
      { ok: true, result: { node: 'hub', args: { after: 1 } } },
    ]);
  });

  test('PEER_UNKNOWN_NODE: a node outside the ring, a path-like name, an overlong name', async () => {
    const ghost = await signedPost(f.nodes.ghost!.signer, target, 'echo', invokeBody('echo'));
    expect([ghost.status, ghost.body]).toEqual([401, refusal('PEER_UNKNOWN_NODE')]);
    for (const name of ['../keys/crm', 'CRM', 'a'.repeat(40), '__proto__', 'constructor']) {
      const r = await signedPost(crm.signer, target, 'echo', invokeBody('echo'), {
        edit: (h) => (h.node = name),
      });
      expect([name, r.status, r.body]).toEqual([name, 401, refusal('PEER_UNKNOWN_NODE')]);
    }
  });

  test('PEER_BAD_SIGNATURE: flipped bit, wrong length, garbage base64, another key, unknown mode', async () => {
    const edits: Record<string, (h: Record<string, string>) => void> = {
      flipped: (h) => {
        const s = h.sig!;
        h.sig = (s[0] === 'A' ? 'B' : 'A') + s.slice(1);
      },
      short: (h) => (h.sig = h.sig!.slice(0, -1)),
      long: (h) => (h.sig = `${h.sig!}AAAA`),
      garbage: (h) => (h.sig = '!!!not*base64!!!'),
      padded: (h) => (h.sig = `${h.sig!.slice(0, -2)}==`),
      empty: (h) => (h.sig = ''),
      mode: (h) => (h.mode = 'rsa'),
      nonce: (h) => (h.nonce = 'short'),
    };
    for (const mode of ['pairwise', 'ed25519'] as const) {
      for (const [name, edit] of Object.entries(edits)) {
        const r = await signedPost(crm.signer, target, 'echo', invokeBody('echo'), { mode, edit });
        expect([mode, name, r.status, r.body]).toEqual([
          mode,
          name,
          401,
          refusal('PEER_BAD_SIGNATURE'),
        ]);
      }
    }
    // crm's name, another node's key: its own signature, and the pair key it can make with the hub
    const impostor = createSigner({
      node: 'crm',
      seed: f.nodes.hub!.seed,
      ring: f.ring,
      now: () => NOW,
    });
    for (const mode of ['pairwise', 'ed25519'] as const) {
      const r = await signedPost(impostor, target, 'echo', invokeBody('echo'), { mode });
      expect([mode, r.status, r.body]).toEqual([mode, 401, refusal('PEER_BAD_SIGNATURE')]);
    }
  });

  test('PEER_BAD_SIGNATURE: body changed after signing', async () => {
    const r = await signedPost(crm.signer, target, 'echo', invokeBody('echo', { amount: 1 }), {
      send: invokeBody('echo', { amount: 1000 }),
    });
    expect([r.status, r.body]).toEqual([401, refusal('PEER_BAD_SIGNATURE')]);
  });

  test('PEER_STALE: old, future and malformed timestamps', async () => {
    for (const ts of [NOW - 60_001, NOW + 60_001, 0]) {
      const r = await signedPost(crm.signer, target, 'echo', invokeBody('echo'), { ts });
      expect([ts, r.status, r.body]).toEqual([ts, 401, refusal('PEER_STALE')]);
    }
    const edge = await signedPost(crm.signer, target, 'echo', invokeBody('echo'), {
      ts: NOW - 60_000,
    });
    expect(edge.status).toBe(200);
    const bad = await signedPost(crm.signer, target, 'echo', invokeBody('echo'), {
      edit: (h) => (h.ts = '1e12'),
    });
    expect([bad.status, bad.body]).toEqual([401, refusal('PEER_STALE')]);
  });

  test('PEER_REPLAY: the same signed request twice', async () => {
    const body = invokeBody('echo');
    const first = await signedPost(crm.signer, target, 'echo', body);
    const again = await fetch(`${target}/peer/invoke`, {
      method: 'POST',
      headers: first.headers,
      body,
    });
    expect([first.status, again.status, await again.json()]).toEqual([
      200,
      401,
      refusal('PEER_REPLAY'),
    ]);
  });

  test('PEER_DOWNGRADE: a weaker mode than the ring states', async () => {
    const both = createSigner({ node: 'crm', secret: f.secret, seed: crm.seed, now: () => NOW });
    const scannerBoth = createSigner({ node: 'scanner', secret: f.secret, now: () => NOW });
    const cases = [
      [both, 'derived'],
      [both, 'shared'],
      [scannerBoth, 'shared'],
    ] as const;
    for (const [signer, mode] of cases) {
      const r = await signedPost(signer, target, 'echo', invokeBody('echo'), { mode });
      expect([signer.node, mode, r.status, r.body]).toEqual([
        signer.node,
        mode,
        401,
        refusal('PEER_DOWNGRADE'),
      ]);
    }
  });

  test('PEER_SCOPE: signed scope is not the body capability', async () => {
    const r = await signedPost(crm.signer, target, 'echo', invokeBody('crash'));
    expect([r.status, r.body]).toEqual([401, refusal('PEER_SCOPE')]);
  });
});

describe('hostile input gets a coded answer and the node keeps serving', () => {
  test('malformed bodies, wrong types, huge bodies, wrong method', async () => {
    const cases: [string, number, string][] = [
      ['{not json', 400, 'PEER_BAD_REQUEST'],
      ['[1,2,3]', 400, 'PEER_BAD_REQUEST'],
      ['"echo"', 400, 'PEER_BAD_REQUEST'],
      [JSON.stringify({ capability: 42 }), 400, 'PEER_BAD_REQUEST'],
      [JSON.stringify({ capability: 'echo', args: [1] }), 400, 'PEER_BAD_REQUEST'],
      [JSON.stringify({ capability: 'echo', args: 'x' }), 400, 'PEER_BAD_REQUEST'],
    ];
    for (const [body, status, code] of cases) {
      const r = await signedPost(crm.signer, target, 'echo', body);
      expect([body, r.status, r.body]).toEqual([body, status, refusal(code)]);
    }
    const invalidUtf8 = await signedPost(
      crm.signer,
      target,
      'echo',
      new Uint8Array([0x7b, 0xff, 0xfe, 0x7d]),
    );
    expect([invalidUtf8.status, invalidUtf8.body]).toEqual([400, refusal('PEER_BAD_REQUEST')]);
    // One decoder serves every request: a body cut inside a character leaves nothing for the next one.
    const cut = await signedPost(
      crm.signer,
      target,
      'echo',
      new Uint8Array([
        ...new TextEncoder().encode('{"capability":"echo","args":{"w":"'),
        0xe2,
        0x82,
      ]),
    );
    expect([cut.status, cut.body]).toEqual([400, refusal('PEER_BAD_REQUEST')]);
    const euro = await signedPost(crm.signer, target, 'echo', invokeBody('echo', { w: '€' }));
    expect([euro.status, euro.body]).toEqual([
      200,
      { ok: true, result: { node: 'hub', args: { w: '€' } } },
    ]);

    const huge = 'x'.repeat(65 * 1024);
    const big = await signedPost(crm.signer, target, 'echo', huge);
    expect([big.status, big.body]).toEqual([413, refusal('PEER_TOO_LARGE')]);
    // Chunked upload without a length: the limit still holds while streaming.
    const stream = new ReadableStream({
      start(c) {
        for (let i = 0; i < 100; i++) c.enqueue(new Uint8Array(1024));
        c.close();
      },
    });
    const chunked = await fetch(`${target}/peer/invoke`, { method: 'POST', body: stream });
    expect([chunked.status, await chunked.json()]).toEqual([413, refusal('PEER_TOO_LARGE')]);

    const get = await fetch(`${target}/peer/invoke`);
    expect([get.status, await get.json()]).toEqual([405, refusal('PEER_METHOD')]);

    const ok = await signedPost(crm.signer, target, 'echo', invokeBody('echo', { still: 'up' }));
    expect(ok.body).toEqual({ ok: true, result: { node: 'hub', args: { still: 'up' } } });
  });

  test('dispatch failures keep their code; a crashing capability is a coded 500 without its message', async () => {
    const fail = await signedPost(crm.signer, target, 'fail', invokeBody('fail'));
    expect([fail.status, fail.body]).toEqual([
      422,
      { ok: false, error: { code: 'CAP_FAILED', message: 'this capability always fails' } },
    ]);
    const crash = await signedPost(crm.signer, target, 'crash', invokeBody('crash'));
    expect([crash.status, crash.body.error.code, crash.text.includes('secret detail')]).toEqual([
      500,
      'PEER_FAILED',
      false,
    ]);
  });

  test('twenty concurrent requests carrying one nonce: exactly one is accepted', async () => {
    const body = invokeBody('echo', { race: true });
    const headers = await crm.signer.sign(
      { to: 'hub', route: '/peer/invoke', scope: 'echo' },
      new TextEncoder().encode(body),
    );
    const answers = await Promise.all(
      Array.from({ length: 20 }, () =>
        fetch(`${target}/peer/invoke`, { method: 'POST', headers, body }).then(async (r) => [
          r.status,
          (await r.json()).error?.code ?? 'ok',
        ]),
      ),
    );
    const tally = answers.reduce<Record<string, number>>(
      (t, [s, c]) => ((t[`${s} ${c}`] = (t[`${s} ${c}`] ?? 0) + 1), t),
      {},
    );
    expect(tally).toEqual({ '200 ok': 1, '401 PEER_REPLAY': 19 });
  });

  test('the nonce is bound to the node: another node may use the same nonce', async () => {
    const nonce = toB64url(crypto.getRandomValues(new Uint8Array(16)));
    const a = await signedPost(crm.signer, target, 'echo', invokeBody('echo'), { nonce });
    const b = await signedPost(f.nodes.lan!.signer, target, 'echo', invokeBody('echo'), { nonce });
    expect([a.status, b.status]).toEqual([200, 200]);
  });
});
