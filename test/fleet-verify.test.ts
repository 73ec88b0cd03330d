/**
 * `fleet verify`'s checks against a fleet on port 0: a healthy A2A node and a peer-only node pass
 * every check; a node whose snapshot tool answers nothing, and a stopped node, fail the right ones.
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
