/** @module hub/cli/mesh — `bun run mesh …`: reads the settings (config file, environment) and hands the arguments to the mesh CLI. */

import { join } from 'node:path';
import { hubUrlList } from '../../lib/mesh/http-client.ts';
import { fileConnectionMemory } from '../../lib/mesh/memory.ts';
import { parseArgs, runMeshCli } from '../mesh/cli.ts';
import { fleetOrExit, settingsOrExit } from './settings.ts';

const settings = settingsOrExit('mesh');
const argv = process.argv.slice(2);
const { opts } = parseArgs(argv);
// The hubs' addresses: --hub (repeated or comma-separated), mesh.hubUrl (MESH_HUB_URL), or the hub
// entry of the fleet file, read as the hub reads it (FLEET_FILE, else DATA_DIR/fleet.json, else fixtures).
const given = hubUrlList(...(opts.hub ?? []));
const [hubUrl, ...hubUrls] = given.length
  ? given
  : hubUrlList(settings.mesh.hubUrl ?? (await fleetOrExit('mesh', settings)).hub.url);
const { project, agentId, name, reconnectMs, rememberConnections } = settings.mesh;

const code = await runMeshCli(
  argv.filter(
    (a, i) =>
      !(a === '--hub' || a === '--token' || argv[i - 1] === '--hub' || argv[i - 1] === '--token'),
  ),
  {
    out: (line) => console.log(line),
    err: (line) => console.error(line),
    lines: console,
    hubUrl: hubUrl!,
    hubUrls,
    token: opts.token?.at(-1) ?? settings.hub.token,
    defaults: {
      project,
      agentId,
      name,
      reconnectMs,
      // Remembered connections hold resume secrets: a 0600 file under the data folder.
      ...(rememberConnections
        ? { memory: fileConnectionMemory(join(settings.dataDir, 'mesh', 'connections.json')) }
        : {}),
    },
  },
);
process.exit(code);
