/** @module hub/cli/mesh — `bun run mesh …`: reads the settings (config file, environment) and hands the arguments to the mesh CLI. */

import { join } from 'node:path';
import { loadFleet } from '../../lib/fleet/invoke.ts';
import { fileConnectionMemory } from '../../lib/mesh/memory.ts';
import { parseArgs, runMeshCli } from '../mesh/cli.ts';
import { settingsOrExit } from './settings.ts';

const settings = settingsOrExit('mesh');
const argv = process.argv.slice(2);
const { opts } = parseArgs(argv);
// The hub's address: --hub, mesh.hubUrl (MESH_HUB_URL), or the hub entry of the fleet file.
let hubUrl = opts.hub?.at(-1) ?? settings.mesh.hubUrl;
if (!hubUrl) {
  try {
    hubUrl = (await loadFleet(settings.fleetFile ?? join(import.meta.dir, '../..', 'fixtures', 'fleet.json'))).hub.url;
  } catch {
    hubUrl = 'http://127.0.0.1:4100';
  }
}
const { project, agentId, name, reconnectMs, rememberConnections } = settings.mesh;

const code = await runMeshCli(argv.filter((a, i) => !(a === '--hub' || a === '--token' || argv[i - 1] === '--hub' || argv[i - 1] === '--token')), {
  out: (line) => console.log(line),
  err: (line) => console.error(line),
  lines: console,
  hubUrl,
  token: opts.token?.at(-1) ?? settings.hub.token,
  defaults: {
    project, agentId, name, reconnectMs,
    // Remembered connections hold resume secrets: a 0600 file under the data folder.
    ...(rememberConnections ? { memory: fileConnectionMemory(join(settings.dataDir, 'mesh', 'connections.json')) } : {}),
  },
});
process.exit(code);
