/**
 * @module node/main — starts one fleet node: `bun run node --name scanner [--port N] [--host H]`.
 * Reads the environment and wires lib/ pieces; everything else lives in lib/node/create-node.ts and the
 * node's own file.
 */

import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { loadSettings, type Settings } from '../lib/config.ts';
import { loadFleet } from '../lib/fleet/invoke.ts';
import { installCrashGuard } from '../lib/crash-guard.ts';
import { consoleLog } from '../lib/log.ts';
import { createMeshClient } from '../lib/mesh/client.ts';
import { modelBackedNode } from '../lib/model/agent.ts';
import { createNode } from '../lib/node/create-node.ts';
import { loadNode } from '../lib/node/load-node.ts';
import { createPeerClient } from '../lib/peer/client.ts';
import { ensureKeys, loadPeerIdentity } from '../lib/peer/keys.ts';

const root = resolve(import.meta.dir, '..');
const usage = `Usage: bun run node --name <node> [--port <port>] [--host <address>]

Starts the fleet node named in the fleet file (FLEET_FILE, default fixtures/fleet.json).
Settings come from lume.config.json/.yaml/.toml (or LUME_CONFIG), each overridable by its
environment variable: HOST, PORT, PEER_PUBLIC_URL, DATA_DIR, PUSH_ALLOW_HOSTS, LOG_LEVEL,
MODEL_BASE_URL, MODEL_NAME, MODEL_API_KEY, MODEL_AGENT, MODEL_PING_MS (or MODEL_<NODE>_…).
The README's configuration table lists them all.`;

const { values } = parseArgs({
  options: { name: { type: 'string' }, port: { type: 'string' }, host: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
  strict: false,
});
if (values.help) {
  console.log(usage);
  process.exit(0);
}

let settings: Settings;
try {
  settings = loadSettings({ env: process.env, cwd: process.cwd() });
} catch (e) {
  console.error(`node: ${(e as Error).message}`);
  process.exit(2);
}
const fleetFile = settings.fleetFile ?? resolve(root, 'fixtures/fleet.json');
const fleet = await loadFleet(fleetFile);
const member = fleet.nodes.find((n) => n.name === values.name);
if (typeof values.name !== 'string' || !member) {
  console.error(`${values.name ? `Unknown node "${values.name}". ` : ''}Valid names: ${fleet.nodes.map((n) => n.name).join(', ')}\n\n${usage}`);
  process.exit(2);
}

const text = (v: string | boolean | undefined) => (typeof v === 'string' ? v : undefined);
// A node's own port: --port, then PORT (the config file's hub.port is the hub's, not a node's).
const portText = text(values.port) ?? (process.env.PORT || undefined);
const port = portText === undefined ? member.port : Number(portText);
if (!Number.isInteger(port) || port < 0 || port > 65535) {
  console.error(`--port must be a port number, got ${portText}`);
  process.exit(2);
}

const dataDir = settings.dataDir;
const modelSettings = settings.modelFor(member.name);
const model = modelSettings.baseUrl
  ? { baseUrl: modelSettings.baseUrl, model: modelSettings.model, ...(modelSettings.apiKey ? { apiKey: modelSettings.apiKey } : {}) }
  : undefined;
const log = consoleLog(member.name, settings.logLevel);
installCrashGuard(log);
// First start creates the fleet's keys (never overwriting existing ones); see docs/peer.md.
await ensureKeys(dataDir, fleet);
const identity = await loadPeerIdentity(dataDir, member.name);
// Webhooks reach public addresses; loopback and private networks only when listed here.
const pushAllowHosts = settings.pushAllowHosts;
// Every node gets the same setup; resolve reads the fleet file it was started with, keeps its
// jobs under the data folder and offers the model recipe only when an endpoint is configured.
const declared = await loadNode(member.file, { fixturesDir: resolve(root, 'fixtures'), fleetFile, dataDir, ...(model ? { model } : {}) }, root);
// A model-backed agent when a model is configured and the node (or models.<node>.agent) wants one:
// lan plans with its model, scanner only while the model answers pings, crm and the rest by keywords.
const { definition, health } = modelBackedNode(declared, {
  ...(model ? { endpoint: model } : {}), ...(modelSettings.agent ? { agent: modelSettings.agent } : {}), pingMs: modelSettings.pingMs, log,
});
const node = createNode(definition, {
  dataDir,
  host: text(values.host) ?? settings.hub.host,
  port,
  log,
  peer: { verifier: identity.verifier, client: createPeerClient({ signer: identity.signer, fleet, log }), fleet },
  pushAllowHosts,
  ...(settings.publicUrl ? { publicUrl: settings.publicUrl } : {}),
});
const running = await node.start();
console.log(`${member.name} listening on ${running.url} (card: ${running.url}/.well-known/agent-card.json)`);
health?.start();

// mesh.autoConnect: the node joins the mesh project under its own name (reconnecting on drops).
const mesh = settings.mesh.autoConnect
  ? createMeshClient({ hubUrl: settings.mesh.hubUrl ?? fleet.hub.url, log, reconnectMs: settings.mesh.reconnectMs, ...(settings.hub.token ? { token: settings.hub.token } : {}) })
  : undefined;
if (mesh) {
  const joined = await mesh.connect(member.name, settings.mesh.project, member.name);
  log(joined.state === 'connected' ? 'info' : 'warn', 'mesh', { project: settings.mesh.project, state: joined.state, code: joined.lastError?.code });
}

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, async () => {
    health?.stop();
    await mesh?.close();
    await running.stop();
    await definition.shutdown?.();
    process.exit(0);
  });
}
