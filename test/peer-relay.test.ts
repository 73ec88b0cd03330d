/** The signed client and POST /peer/relay against real servers: error values, hops, loops, leaks. */

import { afterAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { parseFleet } from '../lib/config/fleet-file.ts';
import { createPeerClient } from '../lib/peer/client.ts';
import { invokeBody, signedPost, startFleet } from './support/peer.ts';

setDefaultTimeout(20_000); // per file (Bun scopes it so): real servers and processes are slow on a busy machine

const f = startFleet(['hub', 'a', 'b', 'c', 'd', 'e', 'outsider'], {
  maxHops: 4,
  unknown: ['outsider'],
  relays: ['b', 'c', 'd', 'e'],
});
afterAll(() => f.stop());
const { a, hub } = f.nodes as Record<string, NonNullable<(typeof f.nodes)[string]>>;

describe('peerFetch', () => {
  test('returns the result of the remote capability', async () => {
    expect(await a!.client.peerFetch('b', 'echo', { q: 1 })).toEqual({
      ok: true,
      result: { node: 'b', args: { q: 1 } },
    });
  });

  test('a capability failure is kind failed with its code', async () => {
    expect(await a!.client.peerFetch('b', 'fail')).toEqual({
      ok: false,
      error: {
        code: 'CAP_FAILED',
        message: 'this capability always fails',
        kind: 'failed',
        status: 422,
      },
    });
  });

  test('a refusal is kind refused with the peer code', async () => {
    const r = await f.nodes.outsider!.client.peerFetch('b', 'echo');
    expect(r).toEqual({
      ok: false,
      error: {
        code: 'PEER_UNKNOWN_NODE',
        message: expect.any(String),
        kind: 'refused',
        status: 401,
      },
    });
  });

  test('targets are fleet names, never URLs; capabilities are names', async () => {
    for (const target of ['http://127.0.0.1:1/', '../b', 'nobody']) {
      expect(await a!.client.peerFetch(target, 'echo')).toMatchObject({
        ok: false,
        error: { code: 'PEER_NO_ROUTE', kind: 'bad-call' },
      });
    }
    expect(await a!.client.peerFetch('b', 'has space')).toMatchObject({
      ok: false,
      error: { code: 'PEER_BAD_REQUEST', kind: 'bad-call' },
    });
    expect(await a!.client.peerFetch('b', 'echo', { n: 10n })).toMatchObject({
      ok: false,
      error: { code: 'PEER_BAD_REQUEST', kind: 'bad-call' },
    });
  });

  test('unreachable, timeout and a non-peer answer are distinct error values', async () => {
    const gone = Bun.serve({ port: 0, fetch: () => new Response('') });
    const goneUrl = `http://127.0.0.1:${gone.port}`;
    gone.stop(true);
    const html = Bun.serve({
      port: 0,
      hostname: '127.0.0.1',
      fetch: () => new Response('<html>hello</html>', { status: 200 }),
    });
    const fleet = parseFleet({
      hub: { name: 'hub', port: 1, role: 'x', file: 'x', url: hub!.url },
      nodes: [
        { name: 'b', port: 1, role: 'x', file: 'x', url: f.nodes.b!.url },
        { name: 'gone', port: 1, role: 'x', file: 'x', url: goneUrl },
        { name: 'html', port: html.port, role: 'x', file: 'x' },
      ],
    });
    const client = createPeerClient({ signer: a!.signer, fleet });
    try {
      expect(await client.peerFetch('gone', 'echo', {}, { timeout: 2000 })).toMatchObject({
        ok: false,
        error: { code: 'PEER_UNREACHABLE', kind: 'unreachable' },
      });
      expect(await client.peerFetch('b', 'hang', {}, { timeout: 100 })).toMatchObject({
        ok: false,
        error: { code: 'PEER_TIMEOUT', kind: 'timeout' },
      });
      expect(await client.peerFetch('html', 'echo')).toMatchObject({
        ok: false,
        error: { code: 'PEER_BAD_ANSWER', kind: 'bad-answer', status: 200 },
      });
    } finally {
      html.stop(true);
    }
  });
});

describe('POST /peer/relay', () => {
  test('one relay: a asks b to run whoami on c; c sees b as the caller', async () => {
    expect(await a!.client.peerRelay('b', ['c'], 'whoami')).toEqual({ ok: true, result: 'c' });
    expect(
      f.nodes.c!.log.lines.some((l) => l.includes('peer invoke') && l.includes('"from":"b"')),
    ).toBe(true);
  });

  test("the original principal reaches the last node, signed at every step: the hub's onBehalfOf, else the calling node", async () => {
    expect(
      await hub!.client.peerRelay('b', ['c'], 'caller', {}, { onBehalfOf: 'user:alice' }),
    ).toEqual({ ok: true, result: { node: 'c', from: 'b', onBehalfOf: 'user:alice' } });
    expect(
      await hub!.client.peerRelay('b', ['c', 'd'], 'caller', {}, { onBehalfOf: 'user:alice' }),
    ).toEqual({ ok: true, result: { node: 'd', from: 'c', onBehalfOf: 'user:alice' } });
    // A node that is neither the hub nor a relay cannot name a principal, directly or through a relay.
    for (const r of [
      await a!.client.peerRelay('b', ['c'], 'caller', {}, { onBehalfOf: 'user:alice' }),
      await a!.client.peerFetch('c', 'caller', {}, { onBehalfOf: 'user:alice' }),
    ])
      expect(r).toMatchObject({ ok: false, error: { code: 'PEER_NOT_DELEGATE', status: 403 } });
    expect(await a!.client.peerRelay('b', ['c', 'd'], 'caller')).toEqual({
      ok: true,
      result: { node: 'd', from: 'c', onBehalfOf: 'node:a' },
    });
    // A direct call is unchanged: no principal named, none invented.
    expect(await a!.client.peerFetch('c', 'caller')).toEqual({
      ok: true,
      result: { node: 'c', from: 'a', onBehalfOf: null },
    });
    // A malformed principal is refused at the relay, before anything is forwarded.
    const before = f.nodes.c!.calls.length;
    const bad = await hub!.client.peerRelay('b', ['c'], 'caller', {}, { onBehalfOf: 'alice' });
    expect(bad).toMatchObject({ ok: false, error: { code: 'PEER_BAD_REQUEST', status: 400 } });
    expect(f.nodes.c!.calls.length).toBe(before);
  });

  test('two relays: a > b > c > d', async () => {
    expect(await a!.client.peerRelay('b', ['c', 'd'], 'echo', { via: 'two hops' })).toEqual({
      ok: true,
      result: { node: 'd', args: { via: 'two hops' } },
    });
  });

  test('loops are refused: back to the caller, back to the relay, a repeated node', async () => {
    for (const route of [['a'], ['b'], ['c', 'b'], ['c', 'd', 'c']]) {
      const r = await a!.client.peerRelay('b', route, 'whoami');
      expect([route, r]).toEqual([
        route,
        {
          ok: false,
          error: expect.objectContaining({ code: 'PEER_LOOP', kind: 'failed', status: 400 }),
        },
      ]);
    }
  });

  test('a trail that already holds a route node is a loop', async () => {
    const r = await a!.client.peerRelay('b', ['c', 'd'], 'whoami', {}, { trail: ['d'] });
    expect(r).toMatchObject({ ok: false, error: { code: 'PEER_LOOP' } });
  });

  test('the hop limit holds', async () => {
    // a > b > c > d > e is four steps: allowed; a > b > c > d > e > hub is five: refused at b
    expect(await a!.client.peerRelay('b', ['c', 'd', 'e'], 'whoami')).toEqual({
      ok: true,
      result: 'e',
    });
    expect(await a!.client.peerRelay('b', ['c', 'd', 'e', 'hub'], 'whoami')).toMatchObject({
      ok: false,
      error: { code: 'PEER_HOPS', status: 400 },
    });
  });

  test('route entries must be fleet nodes; relay scope must be relay:<capability>', async () => {
    expect(await a!.client.peerRelay('b', ['evil.example'], 'whoami')).toMatchObject({
      ok: false,
      error: { code: 'PEER_BAD_REQUEST' },
    });
    expect(await a!.client.peerRelay('b', ['zed'], 'whoami')).toMatchObject({
      ok: false,
      error: { code: 'PEER_NO_ROUTE' },
    });
    expect(await a!.client.peerRelay('b', [], 'whoami')).toMatchObject({
      ok: false,
      error: { code: 'PEER_BAD_REQUEST' },
    });
    const body = JSON.stringify({ route: ['c'], capability: 'whoami', args: {}, trail: [] });
    const wrong = await signedPost(a!.signer, f.nodes.b!.url, 'whoami', body, {
      path: '/peer/relay',
    });
    expect([wrong.status, wrong.body.error.code]).toEqual([401, 'PEER_SCOPE']);
    const invoke = await signedPost(
      a!.signer,
      f.nodes.b!.url,
      'relay:whoami',
      invokeBody('whoami'),
      { path: '/peer/relay' },
    );
    expect([invoke.status, invoke.body.error.code]).toEqual([400, 'PEER_BAD_REQUEST']);
  });

  test('failures further down name the node and are never a 401 to the caller', async () => {
    expect(await a!.client.peerRelay('b', ['c'], 'fail')).toEqual({
      ok: false,
      error: {
        code: 'CAP_FAILED',
        message: 'this capability always fails',
        kind: 'failed',
        status: 422,
        at: 'c',
      },
    });
    // outsider is unknown to everyone: b refuses it directly (401); it cannot be relayed into the fleet
    expect(await f.nodes.outsider!.client.peerRelay('b', ['c'], 'whoami')).toMatchObject({
      ok: false,
      error: { code: 'PEER_UNKNOWN_NODE', kind: 'refused', status: 401 },
    });
    // a downstream timeout surfaces as 504 with the hop's name
    expect(await a!.client.peerRelay('b', ['c'], 'hang', {}, { timeout: 5000 })).toMatchObject({
      ok: false,
      error: { code: 'PEER_TIMEOUT', kind: 'failed', status: 504, at: 'c' },
    });
  });
});

describe('a refusal further down the route', () => {
  test('is answered as 502 naming the refusing node, not as 401', async () => {
    const g = startFleet(['hub', 'x', 'y', 'z'], { strangers: { z: ['y'] } });
    try {
      expect(await g.nodes.x!.client.peerRelay('y', ['z'], 'whoami')).toEqual({
        ok: false,
        error: {
          code: 'PEER_UNKNOWN_NODE',
          message: expect.any(String),
          kind: 'failed',
          status: 502,
          at: 'z',
        },
      });
      expect(await g.nodes.x!.client.peerFetch('z', 'whoami')).toEqual({ ok: true, result: 'z' });
    } finally {
      g.stop();
    }
  });
});

describe('key material never leaves a node', () => {
  test('logs and answers of everything above contain no secret or private key', async () => {
    const answers: string[] = [];
    const probe = async (p: Promise<unknown>) => answers.push(JSON.stringify(await p));
    await probe(a!.client.peerFetch('b', 'crash'));
    await probe(a!.client.peerRelay('b', ['c'], 'echo', { x: 1 }));
    for (const code of ['bad', 'replay', 'stale']) {
      const r = await signedPost(a!.signer, f.nodes.b!.url, 'echo', invokeBody('echo'), {
        edit: (h) => {
          if (code === 'bad') h.sig = 'A'.repeat(86);
          if (code === 'stale') h.ts = '1';
        },
      });
      answers.push(r.text);
    }
    const haystack = [...answers, ...Object.values(f.nodes).flatMap((n) => n.log.lines)].join('\n');
    expect(haystack.length).toBeGreaterThan(1000); // the logs did capture the traffic
    const leaked = f.secrets().filter((s) => haystack.includes(s));
    expect(leaked).toEqual([]);
  });
});
