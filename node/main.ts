#!/usr/bin/env -S bun --max-http-header-size=131072
/**
 * @module node/main — starts one node: `bun run node --name scanner` (a fleet member) or
 * `bun run node --file ./path/to/node.ts` (any node file, anywhere; the package's `lume-node`
 * bin is this file). Reads the environment and wires lib/ pieces; everything else lives in
 * lib/node/serve-node.ts and the node's own file.
 */

import { createOidcVerifier } from '../lib/auth/oidc/verifier.ts';
import { PROJECT_ROOT } from '../lib/project-root.ts';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { loadFleet, type Fleet } from '../lib/config/fleet-file.ts';
import { installCrashGuard } from '../lib/crash-guard.ts';
import { consoleLog, stdoutLog } from '../lib/log.ts';
import { limitsFromEnv } from '../lib/limits.ts';
import { fleetFileOf, settingsOrExit } from '../lib/settings-or-exit.ts';
import { modelBackedNode } from '../lib/node/model-node.ts';
import { importNode } from '../lib/node/load-node.ts';
import type { MeshPresence } from '../lib/node/mesh-presence.ts';
import { printChecks, selfCheck, selfCheckReadiness } from '../lib/node/self-check.ts';
import { serveNode } from '../lib/node/serve-node.ts';
import { createOtlpExporter, otlpConfigFromEnv } from '../lib/fleet/otlp.ts';
import { isLoopbackHost } from '../lib/auth/access.ts';
import { grpcOptions, parseGrpcPort } from '../lib/a2a/grpc/port-setting.ts';
import { TokenBook } from '../lib/auth/tokens.ts';
import { ensureKeys } from '../lib/peer/keys.ts';
import { hubBase } from '../lib/fleet/join.ts';
import { bindOrExit, exitIfPortTaken } from '../lib/port-check.ts';
import { lockDataOrExit } from '../lib/data-lock.ts';
import { privateFolder } from '../lib/private-folder.ts';
import { startArgsOrExit, usage } from '../lib/node/start-args.ts';

const root = PROJECT_ROOT;
const args = startArgsOrExit();
const { joinHub, port } = args;
const settings = settingsOrExit('node');
const dataDir = settings.dataDir;
if (joinHub !== undefined && !settings.token) {
  console.error(
    "node: --join needs a token in LUME_TOKEN: make one on the hub's machine with `bun run keys token add <name>`",
  );
  process.exit(2);
}
if (joinHub !== undefined && !hubBase(joinHub)) {
  console.error(`node: --join takes the hub's base URL, http(s)://host[:port], got ${joinHub}`);
  process.exit(2);
}
const fleetFile = fleetFileOf(settings);
// Outside this repository (the package's bin) there may be no fleet file: a --file node runs alone.
// A node that joins a hub has its own fleet: itself and the hub (lib/fleet/join.ts).
const fleet: Fleet | undefined =
  joinHub === undefined && (settings.fleetFile || existsSync(fleetFile) || !args.file)
    ? await loadFleet(fleetFile)
    : undefined;
let file = args.file ? resolve(args.file) : undefined;
if (!file) {
  const member = fleet!.nodes.find((n) => n.name === args.name);
  if (!member) {
    console.error(
      `Unknown node "${args.name}". Valid names: ${fleet!.nodes.map((n) => n.name).join(', ')}\n\n${usage}`,
    );
    process.exit(2);
  }
  file = member.file;
}

const limits = limitsFromEnv(process.env);
if (!limits.ok) {
  console.error(`node: ${limits.message}`);
  process.exit(2);
}
// The gRPC port's bounds are settings (`grpc.*`), beside the limits of the environment.
const limitValues = { ...limits.value, ...settings.grpc };
// The node's A2A server spans go to an OpenTelemetry collector when OTEL_EXPORTER_OTLP_ENDPOINT is set.
const otlp = otlpConfigFromEnv(process.env);
if (!otlp.ok) {
  console.error(`node: ${otlp.message}`);
  process.exit(2);
}
const grpcPort = parseGrpcPort(args.grpcPort ?? settings.grpcPort);
if (!grpcPort.ok) {
  console.error(`node: ${grpcPort.message}`);
  process.exit(2);
}
const factory = await importNode(file, root).catch((e: Error) => {
  console.error(e.message);
  process.exit(2);
});
// The node's model (models.<node>, MODEL_*), known once its name is: the setup is built here.
const named = args.name ?? factory({ fixturesDir: resolve(root, 'fixtures'), fleetFile }).name;
const modelSettings = settings.modelFor(named);
const model = modelSettings.baseUrl
  ? {
      baseUrl: modelSettings.baseUrl,
      model: modelSettings.model,
      apiKey: modelSettings.apiKey,
    }
  : undefined;
const log = consoleLog(named, settings.logLevel, settings.logFormat);
installCrashGuard(log);
// Every node gets the same setup; resolve reads the fleet file it was started with, keeps its
// jobs under the data folder and offers the model recipe only when an endpoint is configured.
const declared = factory({
  fixturesDir: resolve(root, 'fixtures'),
  fleetFile,
  dataDir,
  limits: limitValues,
  model,
});
// A model-backed agent when a model is configured and the node (or models.<node>.agent) wants one:
// lan plans with its model, scanner only while the model answers pings, crm and the rest by keywords.
// mesh.autoConnect: the node joins the mesh project under its own name (reconnecting on drops),
// and its model, if it has one, gets the mesh tools (lib/node/mesh-presence.ts).
// The mesh's client code loads only for a node that joins it: an idle node need not hold it.
let presence: MeshPresence | undefined;
if (settings.mesh.autoConnect) {
  const { meshPresence } = await import('../lib/node/mesh-presence.ts');
  presence = meshPresence(declared.name, settings, {
    ...(fleet ? { fleetHubUrl: fleet.hub.url } : {}),
    dataDir,
    log,
  });
}
const { definition, health } = modelBackedNode(declared, {
  endpoint: model,
  agent: modelSettings.agent,
  pingMs: modelSettings.pingMs,
  log,
  // The mesh tools act as the caller whose message the model answers (docs/security.md).
  ...(presence ? { toolsFor: presence.toolsFor } : {}),
});
const spanExport = otlp.value && createOtlpExporter({ ...otlp.value, self: declared.name, log });
// The boot self-check's verdicts are part of /readyz (filled in once the node serves).
const boot = selfCheckReadiness();
// A port another process holds (a second copy of this node, a running fleet) stops the start with
// one line, before the node opens its task files (lib/port-check.ts).
const host = args.host ?? settings.hub.host;
const hint = `stop the process holding it (another copy of this node, or a running fleet), or pass --port <free port>.`;
// The port first (a second copy on the same port is told about the port), then the node's data
// folder: a second copy on another port stops here, naming the first one's pid (lib/data-lock.ts).
const ownPort = port ?? fleet?.nodes.find((n) => n.name === declared.name)?.port ?? 0;
exitIfPortTaken({ name: declared.name, host, port: ownPort, hint });
// Anonymous callers may act only on this machine: refused here with the reason, never at serve time.
if (settings.a2aOpen && !isLoopbackHost(host)) {
  console.error(
    `${declared.name}: A2A_OPEN=1 lets anonymous callers act, so it is for a loopback address only, not HOST=${host}; unset A2A_OPEN or bind 127.0.0.1`,
  );
  process.exit(2);
}
// Keys and job records live under the data folder: 0700, tightened if an older version left it open.
if (!privateFolder(dataDir))
  console.error(`${declared.name}: ${dataDir} is open to other users; chmod 700 it`);
lockDataOrExit(declared.name, join(dataDir, declared.name));
// A --name node shares the fleet's data folder: its first start makes every member's keys there.
if (fleet && args.name) await ensureKeys(dataDir, fleet);
const running = await bindOrExit({ host, hint }, () =>
  serveNode(definition, {
    readyChecks: boot.checks,
    dataDir,
    host,
    port,
    ...(fleet ? { fleet, fleetFile } : {}),
    ...(joinHub !== undefined ? { join: { hub: joinHub, token: settings.token! } } : {}),
    // Webhooks reach public addresses; loopback and private networks only when listed.
    pushAllowHosts: settings.pushAllowHosts,
    limits: limitValues,
    ...grpcOptions(grpcPort.value),
    tasksDatabaseUrl: settings.tasksDatabaseUrl,
    publicUrl: settings.publicUrl,
    ...(settings.tenants.length ? { tenants: settings.tenants } : {}),
    ...(spanExport ? { spanExport } : {}),
    // Bearer tokens of the fleet's data folder; without A2A_OPEN anonymous callers may only read.
    access: {
      tokens: TokenBook.open(dataDir, { log }),
      // Access tokens of the trusted issuers (auth.issuers, OIDC_ISSUER) are principals too.
      ...(settings.auth.issuers.length ? { oidc: createOidcVerifier(settings.auth.issuers) } : {}),
      ...(settings.a2aOpen ? { anonymous: 'all' as const } : {}),
    },
    log,
  }),
);
const name = running.node.definition.name;
// What the node prints for its reader (listening, self-check): JSON too with LOG_FORMAT=json.
const out = stdoutLog(name, settings.logFormat);
out(
  'info',
  `${name} listening on ${running.url} (card: ${running.url}/.well-known/agent-card.json${running.grpcPort ? `; gRPC on port ${running.grpcPort}` : ''})`,
  { url: running.url, grpcPort: running.grpcPort ?? null },
);
// Boot self-check: one line per check; a failure says what to do and keeps /readyz at 503.
const report = await selfCheck({
  name,
  ...(definition.a2a === false ? {} : { card: running.node.cardContent() }),
  catalog: definition.catalog,
  keysLoaded: running.node.fleet?.nodes.some((n) => n.name === name) ?? false,
  dataPaths: definition.dataPaths,
  ...(health ? { model: () => health.check() } : {}),
});
boot.record(report);
printChecks(out, name, report);
health?.start();

const mesh = presence?.mesh;
if (presence) {
  const { engineTurns } = await import('../lib/node/mesh-inbox.ts');
  presence.inbox.attach(engineTurns(running.node.engine, name, presence.trustHub));
  const joined = await presence.mesh.connect(name, settings.mesh.project, name);
  log(joined.state === 'connected' ? 'info' : 'warn', 'mesh', {
    project: settings.mesh.project,
    state: joined.state,
    code: joined.lastError?.code,
  });
}

// Graceful stop: streams get their final event, task files are flushed; never longer than 5 s.
let stopping = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, async () => {
    if (stopping) return;
    stopping = true;
    setTimeout(() => {
      console.error(`${name}: stop took longer than 5 s, exiting`);
      process.exit(1);
    }, 5_000).unref();
    health?.stop();
    await mesh?.close();
    await running.stop();
    await spanExport?.flush();
    process.exit(0);
  });
}
