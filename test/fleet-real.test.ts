/**
 * The real fleet (every default node of fixtures/fleet.json, each from its own node file) on
 * port-0 ports with the hub, checked by the same code as `bun run fleet verify`: every node
 * passes every check.
 */

import { afterAll, beforeAll, expect, test } from 'bun:test';
import { loadPeerIdentity } from '../lib/peer/keys.ts';
import { CHECKS, verifyFleet, verifyTable } from '../hub/fleet/verify.ts';
import { realNodeDefs, startFleet, type RunningFleet } from './support/fleet.ts';

let f: RunningFleet;

beforeAll(async () => {
  // Without a data folder, as verify needs no jobs: resolve answers exec.* with EXECUTOR_UNAVAILABLE.
  f = await startFleet(await realNodeDefs(undefined, { dataDir: undefined }));
});
afterAll(() => f.stop());

test('the seven nodes: five full A2A peers and two peer-only apps', () => {
  expect(f.fleet.nodes.map((n) => n.name)).toEqual(['crm', 'scanner', 'tsm-hub', 'cicdkit', 'lan', 'talentlens', 'resolve']);
});

test('fleet verify passes on every node', async () => {
  const { signer } = await loadPeerIdentity(f.dataDir, 'a2a');
  const rows = await verifyFleet({ fleet: f.fleet, signer, hubUrl: f.hubUrl });
  const failing = rows.flatMap((r) => CHECKS.filter((c) => !r.results[c].ok).map((c) => `${r.node} ${c}: ${r.results[c].detail}`));
  expect(failing).toEqual([]);
  expect(rows.map((r) => [r.node, r.kind])).toEqual([
    ['crm', 'a2a'], ['scanner', 'a2a'], ['tsm-hub', 'peer'], ['cicdkit', 'peer'], ['lan', 'a2a'], ['talentlens', 'a2a'], ['resolve', 'a2a'],
  ]);
  expect(verifyTable(rows)).not.toContain('FAIL');
});

test('/api/fleet shows all seven online with truthful agent-backed', async () => {
  const snap = await (await fetch(`${f.hubUrl}/api/fleet`)).json();
  expect(snap.online).toBe(7);
  expect(snap.nodes.every((n: any) => n.agentBacked === false)).toBe(true);
});
