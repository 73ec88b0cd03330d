/**
 * `bun run fuzz [--count N] [--seed S]`: the long fuzz, against real processes. Starts a hub and
 * the scanner and crm nodes as `bun hub/main.ts` / `bun node/main.ts` on free ports with a fresh
 * data folder, sends N hostile requests to each surface (and N frames to the mesh socket), and
 * prints what it found: answers that are a 5xx or an internal error, requests left unanswered,
 * error lines in a process's log, a process that exited, a valid request answered wrongly after.
 * Exits 1 when anything was found. The same seed sends the same bodies.
 */

import { reservePorts } from './support/ports.ts';
import { writeFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { loadFleet } from '../lib/config/fleet-file.ts';
import { ensureKeys, loadPeerIdentity } from '../lib/peer/keys.ts';
import {
  a2aTarget,
  fuzzMeshSocket,
  fuzzTarget,
  hubApiTarget,
  mcpTarget,
  meshHttpTarget,
  signInTarget,
  peerTarget,
  restTarget,
  type Finding,
  type FuzzReport,
  type Target,
} from './support/fuzz.ts';
import { TEST_AUTH, tempDir } from './support/node.ts';
import { startProcess, type ServingProcess } from './support/process.ts';

const { values } = parseArgs({
  options: {
    count: { type: 'string' },
    seed: { type: 'string' },
    help: { type: 'boolean', short: 'h' },
  },
});
if (values.help) {
  console.log('Usage: bun run fuzz [--count N (per surface, default 10000)] [--seed S]');
  process.exit(0);
}
const count = Number(values.count ?? 10_000);
const seed = Number(values.seed ?? Date.now() % 1_000_000);
if (!Number.isInteger(count) || count < 1 || !Number.isInteger(seed)) {
  console.error('--count and --seed must be whole numbers');
  process.exit(2);
}

const freePort = (): number => reservePorts(1)[0]!;

// A fleet of three real processes on free ports.
const dataDir = tempDir('lume-a2a-fuzz-');
const fleetFile = join(dataDir, 'fleet.json');
const ports = { hub: freePort(), scanner: freePort(), crm: freePort() };
writeFileSync(
  fleetFile,
  JSON.stringify({
    hub: { name: 'a2a', port: ports.hub, role: 'hub', file: 'hub/main.ts' },
    nodes: [
      { name: 'scanner', port: ports.scanner, role: 'sectors', file: 'node/scanner/index.ts' },
      { name: 'crm', port: ports.crm, role: 'customers', file: 'node/crm/index.ts' },
    ],
  }),
);
await ensureKeys(dataDir, await loadFleet(fleetFile));
const shared = { dataDir, fleetFile };
const procs: Record<string, ServingProcess> = {
  hub: await startProcess('hub/main.ts', [], { PORT: String(ports.hub) }, shared),
  scanner: await startProcess('node/main.ts', ['--name', 'scanner'], {}, shared),
  crm: await startProcess('node/main.ts', ['--name', 'crm'], {}, shared),
};
const hubSigner = (await loadPeerIdentity(dataDir, 'a2a')).signer;
const crmSigner = (await loadPeerIdentity(dataDir, 'crm')).signer;
console.log(
  `fuzzing with seed ${seed}, ${count} requests per surface; hub ${procs.hub!.url}, scanner ${procs.scanner!.url}, crm ${procs.crm!.url}`,
);

const scannerSkills = [
  { skill: 'sector.movement', args: { sector: 'semiconductors' } },
  { skill: 'stock.quote', args: { code: '600519' } },
  { skill: 'scanner.status', args: {} },
];
const hubSkills = [
  { skill: 'node.capabilities', args: {} },
  { skill: 'entity.resolve', args: { query: 'Acme' } },
  { skill: 'negotiation.list', args: {} },
];
const runs: [Target, string][] = [
  [a2aTarget('scanner /a2a', scannerSkills), procs.scanner!.url],
  [restTarget('scanner REST', scannerSkills), procs.scanner!.url],
  [peerTarget('scanner /peer', hubSigner, 'scanner', scannerSkills, 'crm'), procs.scanner!.url],
  [a2aTarget('hub /a2a', hubSkills), procs.hub!.url],
  [restTarget('hub REST', hubSkills), procs.hub!.url],
  [hubApiTarget('hub /api'), procs.hub!.url],
  [mcpTarget('hub /mcp', hubSkills), procs.hub!.url],
  [meshHttpTarget('mesh HTTP'), procs.hub!.url],
  [signInTarget('hub sign-in'), procs.hub!.url],
  [peerTarget('hub /peer', crmSigner, 'a2a', hubSkills, 'scanner'), procs.hub!.url],
];

const findings: Finding[] = [];
const rows: [string, FuzzReport][] = [];
const seenLog = Object.fromEntries(Object.keys(procs).map((k) => [k, 0]));
/** Error lines a process logged since the last look, and whether every process still runs. */
function checkProcesses(after: string): void {
  for (const [name, p] of Object.entries(procs)) {
    const log = p.log();
    const fresh = log.slice(seenLog[name]);
    seenLog[name] = log.length;
    for (const line of fresh.split('\n').filter((l) => / error /.test(l)))
      findings.push({
        target: after,
        kind: 'log',
        what: `${name} logged an error`,
        sample: line.slice(0, 300),
      });
    if (!p.alive())
      findings.push({
        target: after,
        kind: 'exit',
        what: `${name} exited`,
        sample: fresh.slice(-600),
      });
  }
}

let i = 0;
for (const [target, base] of runs) {
  const started = performance.now();
  const report = await fuzzTarget(target, base, (req) => fetch(req), count, seed + i++, 16);
  rows.push([target.name, report]);
  findings.push(...report.findings);
  checkProcesses(target.name);
  console.log(
    `${target.name.padEnd(14)} ${String(report.sent).padStart(7)} sent in ${((performance.now() - started) / 1000).toFixed(1)} s, findings ${report.findings.length}, statuses ${JSON.stringify(report.statuses)}`,
  );
  if (Object.values(procs).some((p) => !p.alive())) break;
}

if (Object.values(procs).every((p) => p.alive())) {
  await fetch(`${procs.hub!.url}/api/projects.create`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{"name":"fuzz"}',
  });
  const report = await fuzzMeshSocket(
    procs.hub!.url,
    'fuzz',
    count,
    seed + 100,
    Math.min(count, 500),
  );
  rows.push(['mesh socket', report]);
  findings.push(...report.findings);
  checkProcesses('mesh socket');
  console.log(
    `${'mesh socket'.padEnd(14)} ${String(report.sent).padStart(7)} frames, findings ${report.findings.length}, answers ${JSON.stringify(report.statuses)}`,
  );

  // Valid requests, answered correctly afterwards.
  const sent = (await (
    await fetch(`${procs.scanner!.url}/a2a`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'A2A-Version': '1.0' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'SendMessage',
        params: {
          message: {
            messageId: crypto.randomUUID(),
            role: 'ROLE_USER',
            parts: [{ data: { skill: 'scanner.status', args: {} } }],
          },
        },
      }),
    })
  ).json()) as { result?: { task?: { status?: { state?: string } } } };
  if (sent.result?.task?.status?.state !== 'TASK_STATE_COMPLETED')
    findings.push({
      target: 'after',
      kind: 'valid',
      what: 'scanner did not complete a valid task',
      sample: JSON.stringify(sent).slice(0, 300),
    });
  const invoked = (await (
    await fetch(`${procs.hub!.url}/api/local-invoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: procs.hub!.url, ...TEST_AUTH },
      body: JSON.stringify({ target: 'crm', capability: 'crm.industries', args: {} }),
    })
  ).json()) as { ok?: boolean };
  if (invoked.ok !== true)
    findings.push({
      target: 'after',
      kind: 'valid',
      what: 'the hub did not relay a valid fleet call',
      sample: JSON.stringify(invoked).slice(0, 300),
    });
  checkProcesses('after');
}

const total = rows.reduce((n, [, r]) => n + r.sent, 0);
console.log(`\n${total} hostile requests and frames, ${findings.length} finding(s).`);
for (const f of findings.slice(0, 50))
  console.log(`- [${f.target}] ${f.kind}: ${f.what}\n    ${f.sample}`);
if (findings.length > 50) console.log(`… and ${findings.length - 50} more`);
if (findings.length) {
  const file = join(process.cwd(), `fuzz-findings-${seed}.json`);
  writeFileSync(file, JSON.stringify(findings, null, 2));
  console.log(`All findings: ${file} (replay with --seed ${seed} --count ${count})`);
}
for (const p of Object.values(procs)) await p.stop();
rmSync(dataDir, { recursive: true, force: true });
process.exit(findings.length ? 1 : 0);
