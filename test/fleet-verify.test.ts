/**
 * `fleet verify`'s checks against a fleet on port 0: a healthy A2A node and a peer-only node pass
 * every check; a node whose snapshot tool answers nothing, and a stopped node, fail the right ones.
 * On loopback no token is needed for what is public: without one the comparison through the hub
 * is skipped, and the table says so.
 */

import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import { Catalog } from '../lib/catalog/catalog.ts';
import { loadPeerIdentity } from '../lib/peer/keys.ts';
import { CHECKS, verifyFleet, verifyTable } from '../hub/fleet/verify.ts';
import scanner from '../node/scanner/index.ts';
import { startFleet, type RunningFleet } from './support/fleet.ts';
import { FIXTURES, TEST_TOKEN } from './support/node.ts';

setDefaultTimeout(20_000); // per file (Bun scopes it so): real servers and processes are slow on a busy machine

let f: RunningFleet;
beforeAll(async () => {
  f = await startFleet([
    scanner({ fixturesDir: FIXTURES }),
    {
      name: 'meter',
      description: 'peer-only',
      a2a: false,
      catalog: new Catalog([
        {
          id: 'meter.read',
          name: 'Read',
          description: 'reading',
          tags: ['t'],
          keywords: [],
          readOnly: true,
          args: {},
          run: () => ({ watts: 12 }),
        },
      ]),
    },
    {
      name: 'hollow',
      description: 'answers nothing',
      catalog: new Catalog([
        {
          id: 'hollow.read',
          name: 'Read',
          description: 'nothing',
          tags: ['t'],
          keywords: [],
          readOnly: true,
          args: {},
          run: () => ({}),
        },
      ]),
    },
    {
      name: 'gone',
      description: 'stopped before the check',
      catalog: new Catalog([
        {
          id: 'gone.read',
          name: 'Read',
          description: 'x',
          tags: ['t'],
          keywords: [],
          readOnly: true,
          args: {},
          run: () => ({ x: 1 }),
        },
      ]),
    },
  ]);
  await f.kill('gone');
});
afterAll(() => f.stop());

test('every check per node, as fleet verify runs them', async () => {
  const { signer } = await loadPeerIdentity(f.dataDir, 'a2a');
  const rows = await verifyFleet({ fleet: f.fleet, signer, hubUrl: f.hubUrl, token: TEST_TOKEN });
  const failing = Object.fromEntries(
    rows.map((r) => [r.node, CHECKS.filter((c) => !r.results[c].ok)]),
  );
  expect(failing).toEqual({
    scanner: [],
    meter: [],
    hollow: ['snapshots'],
    gone: ['online', 'ready', 'card', 'signed', 'refusals', 'snapshots', 'catalogOnly', 'viaHub'],
  });
  const scan = rows[0]!.results;
  expect(scan.refusals.detail).toBe(
    'tampered → PEER_BAD_SIGNATURE, derived → PEER_DOWNGRADE, shared → PEER_DOWNGRADE',
  );
  expect(scan.viaHub.detail).toMatch(/equal$/);
  expect(verifyTable(rows)).toContain('hollow snapshots: no real fields: hollow.read');
});

test('on loopback without a token: the public checks pass, the comparison through the hub is skipped and said so', async () => {
  const { signer } = await loadPeerIdentity(f.dataDir, 'a2a');
  const nodes = f.fleet.nodes.filter((n) => n.name === 'scanner' || n.name === 'meter');
  const rows = await verifyFleet({ fleet: { ...f.fleet, nodes }, signer, hubUrl: f.hubUrl });
  expect(rows.map((r) => [r.node, r.ok])).toEqual([
    ['scanner', true],
    ['meter', true],
  ]);
  expect(rows[0]!.results.viaHub).toEqual({
    ok: true,
    skipped: true,
    detail: expect.stringContaining('skipped: no LUME_TOKEN; set LUME_TOKEN to a token'),
  });
  const table = verifyTable(rows);
  expect(table).toContain('skipped (not a failure):');
  expect(table).not.toContain('FAIL');
  expect(table.split('\n')[1]).toMatch(/^scanner .* skip\s*$/);
  // Beyond loopback the hub answers nothing without a principal: there it is a failure.
  const far = await verifyFleet({
    fleet: { ...f.fleet, nodes: nodes.slice(0, 1) },
    signer,
    hubUrl: f.hubUrl.replace('127.0.0.1', '127.0.0.1.nip.invalid'),
    timeoutMs: 500,
  });
  expect(far[0]!.results.viaHub.ok).toBe(false);
});
