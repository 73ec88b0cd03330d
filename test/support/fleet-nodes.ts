/**
 * Test support: the fleet's node files from `fixtures/fleet.json`, and every default node started
 * on port 0 with fleet keys, plus a hub-side signed client pointed at them.
 */

import { rmSync } from 'node:fs';
import { resolve } from 'node:path';
import { loadFleet, parseFleet, type Fleet } from '../../lib/config/fleet-file.ts';
import type { NodeDefinition } from '../../lib/node/node-types.ts';
import type { NodeFactory, NodeSetup } from '../../lib/node/define-node.ts';
import { loadCardKeys } from '../../lib/node/card-keys.ts';
import { importNode } from '../../lib/node/load-node.ts';
import { createPeerClient, type PeerClient } from '../../lib/peer/client.ts';
import { ensureKeys, loadPeerIdentity } from '../../lib/peer/keys.ts';
import { FIXTURES, startNode, tempDir, type TestNode } from './node.ts';

export const ROOT = resolve(import.meta.dir, '../..');
export const FLEET_FILE = `${FIXTURES}/fleet.json`;
/** The setup `bun run node` gives every node, minus the data folder. */
export const SETUP: NodeSetup = { fixturesDir: FIXTURES, fleetFile: FLEET_FILE };

/** The default fleet nodes (the conformance agent is opt-in and not part of the fleet's surface). */
export async function fleetNodeFiles(): Promise<
  { name: string; role: string; factory: NodeFactory }[]
> {
  const fleet = await loadFleet(FLEET_FILE);
  return Promise.all(
    fleet.nodes
      .filter((m) => m.default && m.name !== 'conformance')
      .map(async (m) => ({
        name: m.name,
        role: m.role,
        factory: await importNode(m.file),
      })),
  );
}

export interface RunningFleet {
  nodes: Record<string, TestNode & { def: NodeDefinition }>;
  fleet: Fleet;
  /** Signs as the hub. */
  hub: PeerClient;
  dispose(): Promise<void>;
}

/**
 * Starts every default fleet node; `extra` adds options per node (e.g. lan's file paths), which
 * each node file reads beside the setup.
 */
export async function startFleet(
  extra: Record<string, Partial<NodeSetup> & Record<string, unknown>> = {},
): Promise<RunningFleet> {
  const files = await fleetNodeFiles();
  const dataDir = tempDir();
  const doc = {
    hub: { name: 'a2a', port: 1, role: 'hub', file: 'hub/main.ts' },
    nodes: files.map((f) => ({ name: f.name, port: 1, role: f.role, file: `node/${f.name}.ts` })),
  };
  await ensureKeys(dataDir, parseFleet(doc));
  const nodes: RunningFleet['nodes'] = {};
  for (const f of files) {
    const def = f.factory({ ...SETUP, ...extra[f.name] });
    const { verifier } = await loadPeerIdentity(dataDir, f.name);
    const cardKeys = await loadCardKeys(dataDir, f.name);
    nodes[f.name] = { ...(await startNode(def, { dataDir, peer: { verifier }, cardKeys })), def };
  }
  const fleet = parseFleet({
    ...doc,
    nodes: doc.nodes.map((n) => ({ ...n, url: nodes[n.name]!.url })),
  });
  const hub = createPeerClient({ signer: (await loadPeerIdentity(dataDir, 'a2a')).signer, fleet });
  return {
    nodes,
    fleet,
    hub,
    async dispose() {
      await Promise.all(Object.values(nodes).map((n) => n.stop()));
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
