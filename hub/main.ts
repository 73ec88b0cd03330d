/**
 * @module hub/main — the hub process: reads the environment, opens the hub's SQLite files,
 * loads the hub's peer keys (creating the fleet's keys on first start) and serves every hub
 * piece (mesh, console API, the `a2a` node) from one Bun.serve on the hub's fleet port.
 */

import { createOidcVerifier } from '../lib/auth/oidc/verifier.ts';
import { PROJECT_ROOT } from '../lib/project-root.ts';
import { Database } from 'bun:sqlite';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { installCrashGuard } from '../lib/crash-guard.ts';
import { consoleLog, stdoutLog } from '../lib/log.ts';
import { ensureKeys } from '../lib/peer/keys.ts';
import { liveIdentity } from '../lib/peer/live-identity.ts';
import { writableFleetFile } from '../lib/config/fleet-file.ts';
import { loadCardKeys } from '../lib/node/card-keys.ts';
import { printChecks, selfCheck, selfCheckReadiness } from '../lib/node/self-check.ts';
import { bindOrExit, exitIfPortTaken } from '../lib/port-check.ts';
import { lockDataOrExit } from '../lib/data-lock.ts';
import { createHub } from './hub.ts';
import { grpcOptions } from '../lib/a2a/grpc/port-setting.ts';
import { openMeshBackend } from './mesh/backend.ts';
import { isProjectName } from '../lib/mesh/names.ts';
import { TokenBook } from '../lib/auth/tokens.ts';
import { fleetFileOf, fleetOrExit, settingsOrExit } from './cli/settings.ts';
import { browserOrigin, consoleLine, consoleTicketKey } from './http/tickets.ts';
import { privateFolder } from '../lib/private-folder.ts';
import { hubStartOptionsOrExit } from './cli/start-options.ts';
import { exitOnHelp } from './cli/help.ts';

exitOnHelp(`usage: bun run hub
Starts the hub (the A2A node a2a, the mesh, the console, /mcp) on its fleet port, with its data
under DATA_DIR/hub/. Settings come from lume.config.json/.yaml/.toml (or LUME_CONFIG), each
overridable by its environment variable (the README's configuration table): HOST, PORT,
MAX_PORT, DATA_DIR, FLEET_FILE, LOG_LEVEL, LOG_FORMAT=json, HUB_REQUIRE_LOGIN,
HUB_PUBLIC_ORIGIN, MESH_TOKEN, MESH_DATABASE_URL, GRPC_PORT, MODEL_*, the bounds of docs/limits.md.
bun run fleet starts the hub with every node.`);

// 1. Options, read only here: the config file (if any), overridden by the environment.
const settings = settingsOrExit('hub');
const fleet = await fleetOrExit('hub', settings);
const host = settings.hub.host;
const port = settings.hub.port ?? fleet.hub.port;
const maxPort = settings.hub.maxPort ?? port;
const dataDir = settings.dataDir;
const token = settings.hub.token;
const pushAllowHosts = settings.pushAllowHosts;
const { publicOrigins, requireLogin, meshLimits, limits, grpcPort, otlp, model } =
  hubStartOptionsOrExit(settings, fleet.hub.name);
// A second hub stops here, before it opens the hub's stores (a port walk binds whatever is free).
const portOwner = {
  name: fleet.hub.name,
  host,
  port,
  hint: 'stop the hub or fleet holding it, or set PORT (or MAX_PORT to walk up to a free one).',
};
if (maxPort <= port) exitIfPortTaken(portOwner);
const log = consoleLog('hub', settings.logLevel, settings.logFormat);
// What the hub prints for its reader (self-check, listening, console URL): JSON too with LOG_FORMAT=json.
const out = stdoutLog('hub', settings.logFormat);
installCrashGuard(log);
if (settings.file) log('info', 'configuration read', { file: settings.file });

// 2. Storage under DATA_DIR/hub/: mesh history (or MESH_DATABASE_URL) and the call trace, SQLite files in WAL mode.
// The data folder holds keys, tokens and the console's tickets: 0700, tightened if it was looser.
if (!privateFolder(dataDir)) log('warn', 'the data folder is open to other users', { dataDir });
mkdirSync(join(dataDir, 'hub'), { recursive: true, mode: 0o700 });
// One hub per data folder: a second one on another port stops here, naming the first one's pid.
lockDataOrExit('hub', join(dataDir, 'hub'));
// Several hubs share one mesh when they share this PostgreSQL database; without it the mesh is a SQLite file.
const mesh = await openMeshBackend({
  databaseUrl: settings.hub.meshDatabaseUrl,
  sqliteFile: join(dataDir, 'hub', 'mesh.sqlite'),
  log,
  leaseMs: settings.hub.meshLeaseMs,
}).catch((e: Error) => {
  console.error(`hub: cannot open the mesh store: ${e.message}`);
  process.exit(2);
});
// The mesh client's project (mesh.project, default main) exists from the start, so clients can join it.
// A name the mesh cannot hold leaves the hub not ready (a /readyz check says why) instead of "ready".
const meshProjectOk = isProjectName(settings.mesh.project);
if (meshProjectOk && !(await mesh.store.getProject(settings.mesh.project)))
  await mesh.store.createProject({
    name: settings.mesh.project,
    description: 'The default project',
  });
const traceDb = new Database(join(dataDir, 'hub', 'trace.sqlite'), { create: true, strict: true });

// 3. Keys: created on first start, never overwritten.
await ensureKeys(dataDir, fleet);
// Live: a node that joins (POST /peer/join) enters the ring without a restart.
const identity = await liveIdentity(dataDir, fleet.hub.name, {
  nonceCapacity: limits.peerNonces,
});
// Joins write the fleet file the hub read, or DATA_DIR/fleet.json when that is fixtures/fleet.json.
const fleetFile = fleetFileOf(settings);
const joins = {
  from: fleetFile,
  to: writableFleetFile(fleetFile, dataDir, PROJECT_ROOT),
  reload: () => identity.reload(),
};
const cardKeys = await loadCardKeys(dataDir, fleet.hub.name);
// Bearer tokens from `bun run keys token add`; MESH_TOKEN, if set, is one more token named `mesh`.
const tokens = TokenBook.open(dataDir, { log });
// The key of the console's one-time sign-in URLs (`bun run console-url` makes them with it too).
const consoleKey = consoleTicketKey(dataDir);

// 4. The hub and its port.
// The boot self-check's verdicts are part of /readyz (filled in once the hub serves).
const boot = selfCheckReadiness();
if (!meshProjectOk) {
  log('error', 'mesh.project is not a project name (lower-case letters, digits, dashes)', {
    project: settings.mesh.project.slice(0, 64),
  });
  boot.checks.meshProject = () =>
    'mesh.project (MESH_PROJECT) is not a project name: lower-case letters, digits and dashes';
}
const hub = createHub({
  readyChecks: boot.checks,
  fleet,
  dataDir,
  log,
  identity: { signer: identity.signer, verifier: identity.verifier, ring: () => identity.ring() },
  joins,
  cardKeys,
  traceDb,
  meshStore: mesh.store,
  host,
  meshLimits,
  meshProject: settings.mesh.project,
  pushAllowHosts,
  limits,
  tokens,
  ...(settings.auth.issuers.length ? { oidc: createOidcVerifier(settings.auth.issuers) } : {}),
  ...(settings.auth.console ? { consoleClient: settings.auth.console } : {}),
  consoleKey,
  requireLogin,
  ...(publicOrigins.length ? { publicOrigins } : {}),
  meshCluster: mesh.cluster,
  model,
  otlp,
  meshToken: token,
  publicUrl: settings.publicUrl,
  tasksDatabaseUrl: settings.tasksDatabaseUrl,
  ...(settings.tenants.length ? { tenants: settings.tenants } : {}),
  ...grpcOptions(grpcPort),
});
// The hub node's task store opens before the port does (a database that cannot be reached stops the start).
await hub.node.ready();
const server = await bindOrExit(portOwner, () => hub.listen(port, maxPort));
// Boot self-check: one line per check; a failure says what to do and keeps /readyz at 503.
const report = await selfCheck({
  name: fleet.hub.name,
  card: hub.node.card(),
  catalog: hub.catalog,
  // The hub's other capabilities ask nodes that may still be starting; this one reads local data.
  probes: ['negotiation.list'],
  keysLoaded: true,
  dataPaths: [join(dataDir, 'hub')],
  ...(hub.model ? { model: () => hub.model!.check() } : {}),
});
boot.record(report);
printChecks(out, fleet.hub.name, report);
if (hub.access.requireLogin) {
  const why = requireLogin
    ? 'HUB_REQUIRE_LOGIN'
    : token
      ? 'MESH_TOKEN is set'
      : `bound to ${host}, beyond loopback`;
  log('warn', `hub requires a principal on every route but the card, health and sign-in (${why})`);
  if (tokens.size === 0 && !token)
    log(
      'warn',
      'no access tokens exist yet: make one with `bun run keys token add <name>` to sign in',
    );
}
log('info', 'hub listening', {
  url: server.url,
  mesh: 'protocol 3',
  store: mesh.describe,
  login: hub.access.requireLogin ? 'required' : 'loopback',
  otlp: otlp ? new URL(otlp.url).origin : 'off',
});
const grpcListening = await server.grpc;
// As a local notebook server does: one URL that signs a browser in, once (docs/security.md);
// written with the listening line, so whoever reads that line has the URL too.
const consoleUrl = hub.consoleUrl(browserOrigin(host, server.port, publicOrigins));
out(
  'info',
  `hub listening on ${server.url}${grpcListening ? ` (gRPC on port ${grpcListening})` : ''}`,
  { url: String(server.url).replace(/\/$/, ''), grpcPort: grpcListening ?? null },
);
out('info', ...consoleLine(consoleUrl));

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
