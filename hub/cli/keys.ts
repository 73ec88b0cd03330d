/**
 * `bun run keys`: creates and rotates the peer channel's keys under DATA_DIR/keys/ for every member
 * of FLEET_FILE (formats in docs/peer.md). Prints file names and key ids, never key material.
 *
 *   bun run keys [init] [--force]   create the fleet secret, missing pairs and the ring
 *   bun run keys rotate <node>      new pair for <node>; the ring keeps the previous key too
 *   bun run keys retire <node>      end a rotation: drop <node>'s previous key from the ring
 *   bun run keys list               modes and key ids in the ring
 */

import { join } from 'node:path';
import { fleetFilePath, loadFleet } from '../../lib/fleet/invoke.ts';
import { ensureKeys, listKeys, retireKeys, rotateKey } from '../../lib/peer/keys.ts';

const USAGE = 'usage: bun run keys [init [--force] | rotate <node> | retire <node> | list]';
const dataDir = process.env.DATA_DIR ?? './data';
const fleetFile = fleetFilePath({ fleetFile: process.env.FLEET_FILE, dataDir, root: join(import.meta.dir, '../..') });
const [command = 'init', ...rest] = process.argv.slice(2);

async function main(): Promise<number> {
  const fleet = await loadFleet(fleetFile);
  switch (command) {
    case 'init': {
      if (rest.some((a) => a !== '--force')) break;
      const { created } = await ensureKeys(dataDir, fleet, { force: rest.includes('--force') });
      console.log(created.length ? `created in ${dataDir}/keys: ${created.join(', ')}` : `keys in ${dataDir}/keys are complete`);
      return 0;
    }
    case 'rotate': {
      if (rest.length !== 1) break;
      const r = await rotateKey(dataDir, fleet, rest[0]!);
      console.log(`${rest[0]}: new key ${r.kid}; ring holds ${r.ring.join(', ')}`);
      console.log(`restart the fleet so peers load the ring, then run: bun run keys retire ${rest[0]}`);
      return 0;
    }
    case 'retire': {
      if (rest.length !== 1) break;
      const r = await retireKeys(dataDir, fleet, rest[0]!);
      console.log(`${rest[0]}: ring keeps ${r.kept.join(', ')}${r.retired.length ? `; retired ${r.retired.join(', ')}` : ''}`);
      return 0;
    }
    case 'list': {
      if (rest.length) break;
      for (const k of await listKeys(dataDir)) console.log(`${k.node.padEnd(12)} ${k.mode.padEnd(8)} ${k.kids.join(' ')}`);
      return 0;
    }
  }
  console.error(USAGE);
  return 2;
}

main().then(
  (code) => process.exit(code),
  (e: Error) => {
    console.error(e.message); // messages name files and nodes, never key material
    process.exit(1);
  },
);
