#!/usr/bin/env bun
/**
 * @module node/main — starts one node: `bun run node --name scanner` (a fleet member) or
 * `bun run node --file ./path/to/node.ts` (any node file, anywhere; the package's `lume-node`
 * bin is this file). Reads the environment and wires lib/ pieces; everything else lives in
 * lib/node/serve-node.ts and the node's own file.
 */

import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { fleetFilePath, loadFleet, type Fleet } from '../lib/fleet/invoke.ts';
import { installCrashGuard } from '../lib/crash-guard.ts';
import { consoleLog } from '../lib/log.ts';
import { limitsFromEnv } from '../lib/limits.ts';
import { importNode } from '../lib/node/load-node.ts';
import { serveNode } from '../lib/node/serve-node.ts';
import { bindOrExit } from '../lib/port-check.ts';

const root = resolve(import.meta.dir, '..');
const usage = `Usage: bun run node --name <node> [--port <port>] [--host <address>]
       bun run node --file <node file> [--port <port>] [--host <address>]

--name starts the node the fleet file names (FLEET_FILE; else DATA_DIR/fleet.json when
"bun run fleet add" wrote one; else fixtures/fleet.json).
--file starts the node a file declares (its default export is defineNode(...)); when the fleet
file names that node, it takes the fleet's port and the signed peer channel, otherwise it runs
alone on --port (default: a free port) with the peer channel off.
Environment: HOST (bind address, default 127.0.0.1), PORT, PEER_PUBLIC_URL (URL the card
advertises), DATA_DIR (default ./data), PUSH_ALLOW_HOSTS (non-public webhook hosts, addresses or CIDR ranges allowed, comma-separated),
MODEL_BASE_URL, MODEL_API_KEY, MODEL_NAME (an OpenAI-compatible endpoint for resolve's model recipe),
TASKS_DATABASE_URL (postgres://…: keep the node's tasks in PostgreSQL, shared by every process of
the node that names it; unset = JSON files under DATA_DIR; see docs/scale-out.md),
and the bounds of docs/limits.md (SSE_QUEUE_BYTES, TASK_CACHE_BYTES, TASK_HISTORY_MESSAGES, …).`;

const { values } = parseArgs({
  options: { name: { type: 'string' }, file: { type: 'string' }, port: { type: 'string' }, host: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
  strict: false,
});
const text = (v: string | boolean | undefined) => (typeof v === 'string' ? v : undefined);
if (values.help || (!text(values.name) && !text(values.file))) {
  console.log(usage);
  process.exit(values.help ? 0 : 2);
}

const dataDir = resolve(process.env.DATA_DIR ?? 'data');
const fleetFile = fleetFilePath({ fleetFile: process.env.FLEET_FILE, dataDir, root });
// Outside this repository (the package's bin) there may be no fleet file: a --file node runs alone.
const fleet: Fleet | undefined = process.env.FLEET_FILE || existsSync(fleetFile) || !text(values.file) ? await loadFleet(fleetFile) : undefined;
let file = text(values.file) ? resolve(text(values.file)!) : undefined;
if (!file) {
  const member = fleet!.nodes.find((n) => n.name === values.name);
  if (!member) {
    console.error(`Unknown node "${values.name}". Valid names: ${fleet!.nodes.map((n) => n.name).join(', ')}\n\n${usage}`);
    process.exit(2);
  }
  file = member.file;
}

const portText = text(values.port) ?? process.env.PORT;
const port = portText === undefined ? undefined : Number(portText);
if (port !== undefined && (!Number.isInteger(port) || port < 0 || port > 65535)) {
  console.error(`--port must be a port number, got ${portText}`);
  process.exit(2);
}

const model = process.env.MODEL_BASE_URL
  ? { baseUrl: process.env.MODEL_BASE_URL, model: process.env.MODEL_NAME ?? 'gpt-4o-mini', ...(process.env.MODEL_API_KEY ? { apiKey: process.env.MODEL_API_KEY } : {}) }
  : undefined;
const limits = limitsFromEnv(process.env);
if (!limits.ok) {
  console.error(`node: ${limits.message}`);
  process.exit(2);
}
const factory = await importNode(file, root).catch((e: Error) => {
  console.error(e.message);
  process.exit(2);
});
// Webhooks reach public addresses; loopback and private networks only when listed here.
const pushAllowHosts = (process.env.PUSH_ALLOW_HOSTS ?? '').split(',').map((h) => h.trim()).filter(Boolean);
// Every node gets the same setup; resolve reads the fleet file it was started with, keeps its
// jobs under the data folder and offers the model recipe only when an endpoint is configured.
// A port another process holds (a second copy of this node, a running fleet) stops the start with
// one line, before the node opens its task files (lib/port-check.ts).
const host = text(values.host) ?? process.env.HOST ?? '127.0.0.1';
const hint = `stop the process holding it (another copy of this node, or a running fleet), or pass --port <free port>.`;
const running = await bindOrExit({ host, hint }, () => serveNode(factory, {
  dataDir,
  host,
  ...(port !== undefined ? { port } : {}),
  ...(fleet ? { fleet } : {}),
  pushAllowHosts,
  limits: limits.value,
  setup: { fixturesDir: resolve(root, 'fixtures'), fleetFile, ...(model ? { model } : {}) },
  ...(process.env.TASKS_DATABASE_URL ? { tasksDatabaseUrl: process.env.TASKS_DATABASE_URL } : {}),
  ...(process.env.PEER_PUBLIC_URL ? { publicUrl: process.env.PEER_PUBLIC_URL } : {}),
  // The node's name is known once its file built it: the log and the crash guard start there.
  logFor: (name) => {
    const log = consoleLog(name);
    installCrashGuard(log);
    return log;
  },
}));
const name = running.node.definition.name;
console.log(`${name} listening on ${running.url} (card: ${running.url}/.well-known/agent-card.json)`);

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
    await running.stop();
    process.exit(0);
  });
}
