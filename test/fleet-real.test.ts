/**
 * The real fleet (every default node of fixtures/fleet.json, each from its own node file) on
 * port-0 ports with the hub, checked by the same code as `bun run fleet verify`: every node
 * passes every check.
 */

import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import { loadPeerIdentity } from '../lib/peer/keys.ts';
import { CHECKS, verifyFleet, verifyTable } from '../hub/fleet/verify.ts';
import type { NodeDefinition } from '../lib/node/node-types.ts';
import { fixtureFleet, realNodeDefs, startFleet, type RunningFleet } from './support/fleet.ts';
import { TEST_TOKEN } from './support/node.ts';

setDefaultTimeout(20_000); // per file (Bun scopes it so): real servers and processes are slow on a busy machine

let f: RunningFleet;
let defs: NodeDefinition[];
const { defaults } = await fixtureFleet();

beforeAll(async () => {
  // Without a data folder, as verify needs no jobs: resolve answers exec.* with EXECUTOR_UNAVAILABLE.
  f = await startFleet((defs = await realNodeDefs(undefined, { dataDir: undefined })));
});
afterAll(() => f.stop());

test('the default nodes of the fleet file, each from its own node file', () => {
  expect(f.fleet.nodes.map((n) => n.name)).toEqual(defaults);
  expect(defs.map((d) => d.name)).toEqual(defaults);
});

test('fleet verify passes on every node', async () => {
  const { signer } = await loadPeerIdentity(f.dataDir, 'a2a');
  const rows = await verifyFleet({ fleet: f.fleet, signer, hubUrl: f.hubUrl, token: TEST_TOKEN });
  const failing = rows.flatMap((r) =>
    CHECKS.filter((c) => !r.results[c].ok).map((c) => `${r.node} ${c}: ${r.results[c].detail}`),
  );
  expect(failing).toEqual([]);
  // A node is checked as what its file declares: a full A2A peer, or a peer-channel-only app.
  expect(rows.map((r) => [r.node, r.kind])).toEqual(
    defs.map((d) => [d.name, d.a2a === false ? 'peer' : 'a2a']),
  );
  expect(verifyTable(rows)).not.toContain('FAIL');
});

test('/api/fleet shows every default node online with truthful agent-backed', async () => {
  const snap = await (await fetch(`${f.hubUrl}/api/fleet`)).json();
  expect(snap.online).toBe(defaults.length);
  expect(snap.nodes.every((n: any) => n.agentBacked === false)).toBe(true);
});
