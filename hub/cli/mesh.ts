/** @module hub/mesh-cli — `bun run mesh …`: reads the environment and hands the arguments to the mesh CLI. */

import { join } from 'node:path';
import { loadFleet } from '../../lib/fleet/invoke.ts';
import { parseArgs, runMeshCli } from '../mesh/cli.ts';

const argv = process.argv.slice(2);
const { opts } = parseArgs(argv);
// The hub's address: --hub, MESH_HUB_URL, or the hub entry of the fleet file.
let hubUrl = opts.hub?.at(-1) ?? process.env.MESH_HUB_URL;
if (!hubUrl) {
  try {
    hubUrl = (await loadFleet(process.env.FLEET_FILE ?? join(import.meta.dir, '../..', 'fixtures', 'fleet.json'))).hub.url;
  } catch {
    hubUrl = 'http://127.0.0.1:4100';
  }
}

const code = await runMeshCli(argv.filter((a, i) => !(a === '--hub' || a === '--token' || argv[i - 1] === '--hub' || argv[i - 1] === '--token')), {
  out: (line) => console.log(line),
  err: (line) => console.error(line),
  lines: console,
  hubUrl,
  token: opts.token?.at(-1) ?? (process.env.MESH_TOKEN || undefined),
});
process.exit(code);
