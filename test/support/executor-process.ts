/**
 * Test support, run as its own process: the resolve node with its executor on port 0, on the data
 * folder in DATA_DIR (keys made there, the hub `a2a` may call it) with the short test recipes, so a
 * test can kill it with -9 mid-job. Prints `resolve listening on <url>` once it serves.
 */

import { parseFleet } from '../../lib/config/fleet-file.ts';
import { ensureKeys, loadPeerIdentity } from '../../lib/peer/keys.ts';
import { createNode } from '../../lib/node/create-node.ts';
import resolve from '../../node/resolve/index.ts';
import { writeTestRecipes } from './executor.ts';
import { FIXTURES } from './node.ts';

const dataDir = process.env.DATA_DIR!;
await ensureKeys(
  dataDir,
  parseFleet({
    hub: { name: 'a2a', port: 1, role: 'hub', file: 'hub/main.ts' },
    nodes: [{ name: 'resolve', port: 1, role: 'resolve', file: 'node/resolve/index.ts' }],
  }),
);
const def = resolve({
  fixturesDir: FIXTURES,
  dataDir,
  recipesFile: writeTestRecipes(dataDir),
  exec: { killGraceMs: 200 },
});
const node = createNode(def, {
  dataDir,
  port: 0,
  peer: { verifier: (await loadPeerIdentity(dataDir, 'resolve')).verifier },
});
const running = await node.start();
console.log(`resolve listening on ${running.url}`);
