/**
 * @module hub/cli/fleet — `bun run fleet`: starts the hub and every default node as separate
 * processes (creating the fleet's keys on first start), shows a live status table, restarts a
 * crashed or hung node with backoff, and stops everything on Ctrl-C or SIGTERM. The children stop
 * too when this process is killed outright; a port already taken stops it at once with one line.
 * `bun run fleet verify [node …]`: checks a running fleet node by node; exits non-zero on any failure.
 * `bun run fleet add <name> --url <base-url> [--kid <key id>] [--role <text>]`: registers a node
 * that runs elsewhere (hub/fleet/add.ts). `bun run fleet remove <name>`: drops one (added so, or
 * joined with `lume-node --join`) from the fleet file and the ring (hub/fleet/remove.ts).
 */

import { PROJECT_ROOT } from '../../lib/project-root.ts';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { installCrashGuard } from '../../lib/crash-guard.ts';
import { consoleLog, logFormatOf, stdoutLog } from '../../lib/log.ts';
import { ensureKeys, loadPeerIdentity } from '../../lib/peer/keys.ts';
import { printChecks } from '../../lib/node/self-check.ts';
import { exitIfPortTaken } from '../../lib/port-check.ts';
import { addRemoteNode, addTarget } from '../fleet/add.ts';
import { writableFleetFile } from '../../lib/config/fleet-file.ts';
import { removeRemoteNode } from '../fleet/remove.ts';
import { fleetChildren, fleetMembers } from '../fleet/children.ts';
import { fleetSelfCheck } from '../fleet/self-check.ts';
import { Supervisor, type ChildRow } from '../fleet/supervisor.ts';
import { verifyFleet, verifyTable } from '../fleet/verify.ts';
import { fleetFileOf, fleetOrExit, settingsOrExit } from './settings.ts';
import { browserOrigin, consoleLine, newConsoleUrl } from '../http/tickets.ts';
import { privateFolder } from '../../lib/private-folder.ts';
import { exitOnHelp } from './help.ts';

exitOnHelp(`usage: bun run fleet [start | verify [node …] | add <name> --url <base-url> | remove <name>]
  start (the default)   the hub and every default node, a live status table, restarts with backoff
  verify [node …]       checks a running fleet node by node; exits non-zero on any failure
  add <name> --url <base-url> [--kid <key id>] [--role <text>]
                        registers a node that runs elsewhere
  remove <name>         drops a node added or joined so from the fleet file and the ring`);

const root = PROJECT_ROOT;
const env = process.env;
const settings = settingsOrExit('fleet');
const dataDir = settings.dataDir;
const fleetFile = fleetFileOf(settings);
const fleet = await fleetOrExit('fleet', settings);
const command = process.argv[2] ?? 'start';

if (command === 'add') {
  const { values, positionals } = parseArgs({
    args: process.argv.slice(3),
    options: { url: { type: 'string' }, kid: { type: 'string' }, role: { type: 'string' } },
    allowPositionals: true,
  });
  if (positionals.length !== 1 || !values.url) {
    console.error(
      'usage: bun run fleet add <name> --url <base-url> [--kid <key id>] [--role <text>]',
    );
    process.exit(2);
  }
  // Adding the fleet's hub means it runs elsewhere: no key pair is made for it here.
  if (positionals[0] !== fleet.hub.name) await ensureKeys(dataDir, fleet);
  const added = await addRemoteNode({
    name: positionals[0]!,
    url: values.url,
    from: fleetFile,
    to: addTarget(settings.fleetFile, dataDir),
    dataDir,
    ...(values.kid ? { kid: values.kid } : {}),
    ...(values.role ? { role: values.role } : {}),
  });
  if (!added.ok) {
    console.error(`${added.error.code}: ${added.error.message}`);
    process.exit(1);
  }
  console.log(
    `added ${added.result.name} at ${added.result.url} (key ${added.result.kid}) to ${added.result.file}`,
  );
  process.exit(0);
}

if (command === 'remove') {
  const name = process.argv[3];
  if (!name || process.argv.length !== 4) {
    console.error('usage: bun run fleet remove <name>');
    process.exit(2);
  }
  const removed = await removeRemoteNode({
    name,
    from: fleetFile,
    to: writableFleetFile(fleetFile, dataDir, root),
    dataDir,
  });
  if (!removed.ok) {
    console.error(`${removed.error.code}: ${removed.error.message}`);
    process.exit(1);
  }
  console.log(`removed ${name} from ${removed.result.file} and its key from the ring`);
  process.exit(0);
}

if (command === 'verify') {
  await ensureKeys(dataDir, fleet);
  const { signer } = await loadPeerIdentity(dataDir, fleet.hub.name);
  // The nodes `bun run fleet` starts; others (the conformance agent) are checked only when asked by name.
  const named = process.argv.slice(3);
  const nodes = fleet.nodes.filter((n) => (named.length ? named.includes(n.name) : n.default));
  const strangers = named.filter((name) => !fleet.nodes.some((n) => n.name === name));
  if (strangers.length) {
    console.error(
      `fleet verify: not in the fleet: ${strangers.join(', ')} (members: ${fleet.nodes.map((n) => n.name).join(', ') || 'none'})`,
    );
    process.exit(2);
  }
  // The comparison through the hub's API needs a bearer token (bun run keys token add <name>).
  const rows = await verifyFleet({
    fleet: { ...fleet, nodes },
    signer,
    hubUrl: fleet.hub.url,
    ...(settings.token ? { token: settings.token } : {}),
  });
  console.log(verifyTable(rows));
  process.exit(rows.every((r) => r.ok) ? 0 : 1);
}
if (command !== 'start') {
  console.error(
    'usage: bun run fleet [start | verify [node …] | add <name> --url <base-url> | remove <name>]',
  );
  process.exit(2);
}

// Children run in the checkout: they read the same config file, named absolutely.
const childEnv = {
  ...env,
  DATA_DIR: dataDir,
  FLEET_FILE: fleetFile,
  PORT: undefined,
  ...(settings.file ? { LUME_CONFIG: settings.file } : {}),
};
const members = fleetMembers(fleet);

// A second fleet (or anything else on a member's port) stops here, before any child starts.
const host = settings.hub.host;
for (const m of members)
  exitIfPortTaken({
    name: 'fleet',
    host,
    port: m.port,
    hint: `${m.name} cannot start. Is a fleet already running? Stop it (Ctrl-C where it runs) or change the ports in ${fleetFile}.`,
  });

const live = process.stdout.isTTY === true;
// The boot self-check: one line per check; a failure says what to do and nothing starts.
const checks = await fleetSelfCheck({
  fleet,
  fleetFile,
  members,
  dataDir,
  root,
  loadKeys: async () => (
    await ensureKeys(dataDir, fleet), loadPeerIdentity(dataDir, fleet.hub.name)
  ),
});
// What the fleet prints for its reader: JSON too with LOG_FORMAT=json (the live table is for a terminal).
const out = stdoutLog('fleet', logFormatOf(process.env.LOG_FORMAT));
printChecks(out, 'fleet', checks);
if (checks.some((c) => c.status === 'fail')) process.exit(1);

// One console URL for the whole fleet, as a notebook server prints one (the hub writes none to its log file).
const consoleLink = newConsoleUrl(
  dataDir,
  fleet.hub.name,
  browserOrigin(host, fleet.hub.port, settings.hub.publicOrigins),
);
if (!live) out('info', ...consoleLine(consoleLink));
// Keys, logs and job records live under the data folder: the fleet's own user's only.
if (!privateFolder(dataDir)) out('warn', `${dataDir} is open to other users: chmod 700 it`);

const supervisor = new Supervisor(fleetChildren(fleet, root), {
  cwd: root,
  env: childEnv,
  logDir: join(dataDir, 'logs'),
  onChange: render,
  ...settings.fleet,
});

function render(changed: ChildRow): void {
  if (!live) {
    // Not a terminal: one line per change, easy to follow in a log or a test.
    out(
      'info',
      `${changed.name} ${changed.state} port=${changed.port} pid=${changed.pid ?? '-'} restarts=${changed.restarts}`,
      {
        node: changed.name,
        state: changed.state,
        port: changed.port,
        pid: changed.pid ?? null,
        restarts: changed.restarts,
      },
    );
    return;
  }
  const rows = supervisor.rows();
  const now = Date.now();
  const lines = rows.map((r) => [
    r.name,
    String(r.port),
    String(r.pid ?? '-'),
    r.state,
    String(r.restarts),
    r.since ? `${Math.round((now - r.since) / 1000)}s` : '-',
  ]);
  const head = ['node', 'port', 'pid', 'state', 'restarts', 'up'];
  const widths = head.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i]!.length)));
  const fmt = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i]!)).join('  ');
  process.stdout.write(
    `\x1b[H\x1b[2J${fmt(head)}\n${lines.map(fmt).join('\n')}\n\nhub ${fleet.hub.url}/ · logs ${join(dataDir, 'logs')} · Ctrl-C stops all\nconsole (opens once; bun run console-url prints another): ${consoleLink}\n`,
  );
}

// The supervisor must outlive any one bug: it is what restarts everything else.
installCrashGuard(consoleLog('fleet', 'info', logFormatOf(process.env.LOG_FORMAT)));
supervisor.start();
if (live) setInterval(() => render(supervisor.rows()[0]!), 1000);

let stopping = false;
async function shutdown(): Promise<void> {
  if (stopping) return;
  stopping = true;
  await supervisor.stop();
  out('info', 'fleet stopped');
  process.exit(0);
}
process.on('SIGINT', () => void shutdown());
process.on('SIGTERM', () => void shutdown());
