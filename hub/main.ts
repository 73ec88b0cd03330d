/**
 * @module hub/main — the hub process: reads the environment, opens the hub's SQLite store and
 * serves every hub piece (today the mesh) from one Bun.serve on the hub's fleet port.
 */

import { join } from 'node:path';
import { loadFleet } from '../lib/fleet.ts';
import { consoleLog } from '../lib/log.ts';
import { openMeshDatabase } from '../lib/mesh/schema.ts';
import { createMeshStore } from '../lib/mesh/store.ts';
import { listenWithPortWalk } from './mesh/listen.ts';
import { trustWarning } from './mesh/trust.ts';
import { createMeshServer, type MeshSocketData } from './mesh-server.ts';

// 1. Options, read only here.
const env = process.env;
const fleet = await loadFleet(env.FLEET_FILE ?? join(import.meta.dir, '..', 'fixtures', 'fleet.json'));
const host = env.HOST ?? '127.0.0.1';
const port = env.PORT ? Number(env.PORT) : fleet.hub.port;
const maxPort = env.MAX_PORT ? Number(env.MAX_PORT) : port;
const dataDir = env.DATA_DIR ?? './data';
const token = env.MESH_TOKEN || undefined;
const log = consoleLog('hub', (env.LOG_LEVEL as 'debug' | 'info' | 'warn' | 'error' | undefined) ?? 'info');

// 2. Storage: one SQLite file (WAL) under DATA_DIR/hub/.
const store = createMeshStore({ db: openMeshDatabase(join(dataDir, 'hub', 'mesh.sqlite')), log });

// 3. Hub pieces. Each offers `fetch(req, server)` and answers undefined for paths that are not its own.
const mesh = createMeshServer({ store, log, token });
const pieces = [mesh.fetch];

// 4. One Bun.serve for the hub's port.
const server = listenWithPortWalk<MeshSocketData>({
  hostname: host,
  port,
  maxPort,
  async fetch(req, srv) {
    for (const piece of pieces) {
      const res = await piece(req, srv);
      if (res !== undefined) return res;
    }
    return Response.json({ error: { code: 'not-found', message: `no route for ${req.method} ${new URL(req.url).pathname}` } }, { status: 404 });
  },
  websocket: mesh.websocket,
});

const warning = trustWarning(host, token);
if (warning) log('warn', warning);
log('info', 'hub listening', { url: server.url.origin, mesh: 'protocol 3', token: token ? 'required' : 'off' });

// 5. Clean stop: presences end with hub_shutdown, pending messages are committed, then the port closes.
let stopping = false;
const stop = () => {
  if (stopping) return;
  stopping = true;
  mesh.close();
  void server.stop(true).finally(() => {
    store.close();
    process.exit(0);
  });
};
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
