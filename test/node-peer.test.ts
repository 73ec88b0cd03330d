/**
 * The peer channel mounted on a real node: a signed /peer/invoke from another fleet member runs
 * a capability of the node's catalog (and only those), relays pass through, and a node started
 * without keys refuses peer calls with a code.
 */

import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import { parseFleet, type Fleet } from '../lib/config/fleet-file.ts';
import { createPeerClient } from '../lib/peer/client.ts';
import { ensureKeys, loadPeerIdentity } from '../lib/peer/keys.ts';
import scanner from '../node/scanner/index.ts';
import { FIXTURES, startNode, tempDir, type TestNode } from './support/node.ts';

setDefaultTimeout(20_000); // per file (Bun scopes it so): real servers and processes are slow on a busy machine

const dataDir = tempDir();
let node: TestNode;
let bare: TestNode;
let fleet: Fleet;

beforeAll(async () => {
  // The fleet's scanner entry is pointed at the test node once its port is known.
  const doc = {
    hub: { name: 'a2a', port: 1, role: 'hub', file: 'hub/main.ts' },
    nodes: [{ name: 'scanner', port: 1, role: 'scanner', file: 'node/scanner/index.ts' }],
  };
  await ensureKeys(dataDir, parseFleet(doc));
  const self = await loadPeerIdentity(dataDir, 'scanner');
  node = await startNode(scanner({ fixturesDir: FIXTURES }), {
    dataDir,
    peer: { verifier: self.verifier },
  });
  fleet = parseFleet({ ...doc, nodes: [{ ...doc.nodes[0], url: node.url }] });
  bare = await startNode(scanner({ fixturesDir: FIXTURES }));
});
afterAll(async () => {
  await node.dispose();
  await bare.dispose();
});

test('a signed call from the hub runs a catalog capability; others are refused with codes', async () => {
  const hub = await loadPeerIdentity(dataDir, 'a2a');
  const client = createPeerClient({ signer: hub.signer, fleet });
  const ok = await client.peerFetch('scanner', 'stock.quote', { code: '688981' });
  expect(ok).toEqual({
    ok: true,
    result: {
      asOf: '2026-11-27',
      found: true,
      stock: {
        code: '688981',
        name: 'SMIC',
        changePct: 4.8,
        signals: ['volume_breakout', 'new_high'],
        sector: 'semiconductors',
      },
    },
    summary: 'SMIC (688981) 4.8%',
  });
  const unknown = await client.peerFetch('scanner', 'orders.place', {});
  expect(unknown).toMatchObject({
    ok: false,
    error: { code: 'UNKNOWN_CAPABILITY', kind: 'failed' },
  });
  const badArgs = await client.peerFetch('scanner', 'stock.quote', { code: 1 });
  expect(badArgs).toMatchObject({ ok: false, error: { code: 'BAD_ARGS', kind: 'failed' } });
  const unsigned = await fetch(`${node.url}/peer/invoke`, {
    method: 'POST',
    body: JSON.stringify({ capability: 'stock.quote', args: {} }),
  });
  expect([unsigned.status, (await unsigned.json()).error.code]).toEqual([401, 'PEER_UNSIGNED']);
});

test('a node without keys refuses peer calls with PEER_NOT_CONFIGURED and keeps serving A2A', async () => {
  const res = await fetch(`${bare.url}/peer/invoke`, { method: 'POST', body: '{}' });
  expect([res.status, (await res.json()).error.code]).toEqual([503, 'PEER_NOT_CONFIGURED']);
  expect((await fetch(`${bare.url}/.well-known/agent-card.json`)).status).toBe(200);
});
