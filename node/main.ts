/**
 * @module node/main — starts one fleet node: `bun run node --name scanner [--port N] [--host H]`.
 * Reads the environment and wires lib/ pieces; everything else lives in lib/node/create-node.ts and the
 * node's own file.
 */

import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { loadFleet } from '../lib/fleet/invoke.ts';
import { consoleLog } from '../lib/log.ts';
import { createNode } from '../lib/node/create-node.ts';
import { loadNode } from '../lib/node/load-node.ts';
import { createPeerClient } from '../lib/peer/client.ts';
import { ensureKeys, loadPeerIdentity } from '../lib/peer/keys.ts';
import { bindOrExit, exitIfPortTaken } from '../lib/port-check.ts';

const root = resolve(import.meta.dir, '..');
const usage = `Usage: bun run node --name <node> [--port <port>] [--host <address>]

Starts the fleet node named in the fleet file (FLEET_FILE, default fixtures/fleet.json).
Environment: HOST (bind address, default 127.0.0.1), PORT, PEER_PUBLIC_URL (URL the card
advertises), DATA_DIR (default ./data), PUSH_ALLOW_HOSTS (extra webhook hosts, comma-separated),
MODEL_BASE_URL, MODEL_API_KEY, MODEL_NAME (an OpenAI-compatible endpoint for resolve's model recipe).`;

const { values } = parseArgs({
  options: { name: { type: 'string' }, port: { type: 'string' }, host: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
  strict: false,
});
if (values.help) {
  console.log(usage);
  process.exit(0);
}

const fleetFile = resolve(process.env.FLEET_FILE ?? resolve(root, 'fixtures/fleet.json'));
const fleet = await loadFleet(fleetFile);
const member = fleet.nodes.find((n) => n.name === values.name);
if (typeof values.name !== 'string' || !member) {
  console.error(`${values.name ? `Unknown node "${values.name}". ` : ''}Valid names: ${fleet.nodes.map((n) => n.name).join(', ')}\n\n${usage}`);
  process.exit(2);
}

const text = (v: string | boolean | undefined) => (typeof v === 'string' ? v : undefined);
const portText = text(values.port) ?? process.env.PORT;
const port = portText === undefined ? member.port : Number(portText);
if (!Number.isInteger(port) || port < 0 || port > 65535) {
  console.error(`--port must be a port number, got ${portText}`);
  process.exit(2);
}

const host = text(values.host) ?? process.env.HOST ?? '127.0.0.1';
// A second copy of a running node stops here, before it opens (and recovers) the same task files.
const portOwner = { name: member.name, host, port, hint: `stop the process holding it (another "bun run node --name ${member.name}" or a running fleet), or pass --port <free port>.` };
exitIfPortTaken(portOwner);

const dataDir = resolve(process.env.DATA_DIR ?? 'data');
const model = process.env.MODEL_BASE_URL
  ? { baseUrl: process.env.MODEL_BASE_URL, model: process.env.MODEL_NAME ?? 'gpt-4o-mini', ...(process.env.MODEL_API_KEY ? { apiKey: process.env.MODEL_API_KEY } : {}) }
  : undefined;
const log = consoleLog(member.name);
// First start creates the fleet's keys (never overwriting existing ones); see docs/peer.md.
await ensureKeys(dataDir, fleet);
const identity = await loadPeerIdentity(dataDir, member.name);
const fleetHosts = [fleet.hub, ...fleet.nodes].map((m) => new URL(m.url).hostname);
const extraHosts = (process.env.PUSH_ALLOW_HOSTS ?? '').split(',').map((h) => h.trim()).filter(Boolean);
// Every node gets the same setup; resolve reads the fleet file it was started with, keeps its
// jobs under the data folder and offers the model recipe only when an endpoint is configured.
const definition = await loadNode(member.file, { fixturesDir: resolve(root, 'fixtures'), fleetFile, dataDir, ...(model ? { model } : {}) }, root);
const node = createNode(definition, {
  dataDir,
  host,
  port,
  log,
  peer: { verifier: identity.verifier, client: createPeerClient({ signer: identity.signer, fleet, log }), fleet },
  pushAllowHosts: [...fleetHosts, ...extraHosts],
  ...(process.env.PEER_PUBLIC_URL ? { publicUrl: process.env.PEER_PUBLIC_URL } : {}),
});
const running = await bindOrExit(portOwner, () => node.start());
console.log(`${member.name} listening on ${running.url} (card: ${running.url}/.well-known/agent-card.json)`);

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, async () => {
    await running.stop();
    await definition.shutdown?.();
    process.exit(0);
  });
}
