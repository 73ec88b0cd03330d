/**
 * @module hub/main — the hub process: reads the environment, opens the hub's SQLite files,
 * loads the hub's peer keys (creating the fleet's keys on first start) and serves every hub
 * piece (mesh, console API, the `a2a` node) from one Bun.serve on the hub's fleet port.
 */

import { Database } from 'bun:sqlite';
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fleetFilePath, loadFleet } from '../lib/fleet/invoke.ts';
import { installCrashGuard } from '../lib/crash-guard.ts';
import { consoleLog } from '../lib/log.ts';
import { meshLimitsFromEnv } from '../lib/mesh/limits.ts';
import { limitsFromEnv } from '../lib/limits.ts';
import { ensureKeys, loadPeerIdentity } from '../lib/peer/keys.ts';
import { bindOrExit, exitIfPortTaken } from '../lib/port-check.ts';
import { createHub } from './hub.ts';
import { openMeshBackend } from './mesh/backend.ts';
import { trustWarning } from './mesh/trust.ts';

// 1. Options, read only here.
const env = process.env;
const fleet = await loadFleet(fleetFilePath({ fleetFile: env.FLEET_FILE, dataDir: resolve(env.DATA_DIR ?? './data'), root: join(import.meta.dir, '..') }));
const host = env.HOST ?? '127.0.0.1';
const port = env.PORT ? Number(env.PORT) : fleet.hub.port;
const maxPort = env.MAX_PORT ? Number(env.MAX_PORT) : port;
const dataDir = resolve(env.DATA_DIR ?? './data');
const token = env.MESH_TOKEN || undefined;
// Several hubs share one mesh when they share this PostgreSQL database; without it the mesh is a SQLite file.
const meshDatabaseUrl = env.MESH_DATABASE_URL || undefined;
const leaseMs = env.MESH_LEASE_MS ? Number(env.MESH_LEASE_MS) : undefined;
if (env.MESH_LEASE_MS && !/^[1-9][0-9]{0,8}$/.test(env.MESH_LEASE_MS)) {
  console.error(`hub: MESH_LEASE_MS must be a positive integer, got ${JSON.stringify(env.MESH_LEASE_MS.slice(0, 40))}`);
  process.exit(2);
}
const pushAllowHosts = (env.PUSH_ALLOW_HOSTS ?? '').split(',').map((h) => h.trim()).filter(Boolean);
const meshLimits = meshLimitsFromEnv(env);
if (!meshLimits.ok) {
  console.error(`hub: ${meshLimits.message}`);
  process.exit(2);
}
const limits = limitsFromEnv(env);
if (!limits.ok) {
  console.error(`hub: ${limits.message}`);
  process.exit(2);
}
// A second hub stops here, before it opens the hub's stores (a port walk binds whatever is free).
const portOwner = { name: fleet.hub.name, host, port, hint: 'stop the hub or fleet holding it, or set PORT (or MAX_PORT to walk up to a free one).' };
if (maxPort <= port) exitIfPortTaken(portOwner);
const log = consoleLog('hub', (env.LOG_LEVEL as 'debug' | 'info' | 'warn' | 'error' | undefined) ?? 'info');
installCrashGuard(log);

// 2. Storage under DATA_DIR/hub/: mesh history (or MESH_DATABASE_URL) and the call trace, SQLite files in WAL mode.
mkdirSync(join(dataDir, 'hub'), { recursive: true, mode: 0o700 });
const mesh = await openMeshBackend({ databaseUrl: meshDatabaseUrl, sqliteFile: join(dataDir, 'hub', 'mesh.sqlite'), log, ...(leaseMs ? { leaseMs } : {}) }).catch((e: Error) => {
  console.error(`hub: cannot open the mesh store: ${e.message}`);
  process.exit(2);
});
const traceDb = new Database(join(dataDir, 'hub', 'trace.sqlite'), { create: true, strict: true });

// 3. Keys: created on first start, never overwritten.
await ensureKeys(dataDir, fleet);
const identity = await loadPeerIdentity(dataDir, fleet.hub.name, { nonceCapacity: limits.value.peerNonces });

// 4. The hub and its port.
// An OpenAI-compatible endpoint, when configured, plans Ask Agent questions (the key is never logged).
const model = env.MODEL_BASE_URL && env.MODEL_NAME
  ? { baseUrl: env.MODEL_BASE_URL, model: env.MODEL_NAME, ...(env.MODEL_API_KEY ? { apiKey: env.MODEL_API_KEY } : {}) }
  : undefined;
const hub = createHub({
  fleet, dataDir, log, identity, traceDb, meshStore: mesh.store, host, meshLimits: meshLimits.value, pushAllowHosts, limits: limits.value,
  ...(mesh.cluster ? { meshCluster: mesh.cluster } : {}),
  ...(model ? { model } : {}),
  ...(token ? { meshToken: token } : {}),
  ...(env.PEER_PUBLIC_URL ? { publicUrl: env.PEER_PUBLIC_URL } : {}),
  ...(env.TASKS_DATABASE_URL ? { tasksDatabaseUrl: env.TASKS_DATABASE_URL } : {}),
});
// The hub node's task store opens before the port does (a database that cannot be reached stops the start).
await hub.node.ready();
const server = await bindOrExit(portOwner, () => hub.listen(port, maxPort));
const warning = trustWarning(host, token);
if (warning) log('warn', warning);
log('info', 'hub listening', { url: server.url, mesh: 'protocol 3', store: mesh.describe, token: token ? 'required' : 'off' });
console.log(`hub listening on ${server.url}`);

// 5. Graceful stop: presences end with hub_shutdown, streams get their final event, task files,
// the trace and the mesh's open group are committed, then the databases close; never longer than 5 s.
let stopping = false;
const stop = () => {
  if (stopping) return;
  stopping = true;
  setTimeout(() => {
    console.error('hub: stop took longer than 5 s, exiting');
    process.exit(1);
  }, 5_000).unref();
  void server
    .stop()
    .then(() => mesh.close())
    .finally(() => {
      traceDb.close();
      process.exit(0);
    });
};
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
