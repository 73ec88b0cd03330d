/**
 * @module bench/node-compare — the node's CPU per SendMessage in two source trees, side by side in
 * one run: the benchmark node (bench/servers/node-server.ts) of this tree and of another checkout
 * (`--before <dir>`, e.g. an older commit unpacked with `git archive`), alternating round by
 * round under the same load process, so a refactor's cost is a ratio measured on the same
 * machine at the same time. Prints one line per round and the least CPU per request of each tree.
 * `--node scanner` runs the scanner node (bench/servers/scanner-server.ts) instead, asked the
 * text question of bench/side-by-side.ts.
 *
 * Usage: bun bench/node-compare.ts --before <dir> [--seconds 5] [--rounds 4] [--connections 32] [--node echo|scanner]
 */

import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { cpuMs } from './proc-cpu.ts';
import { listeningPort, runLoad, writeSendBody } from './send-body.ts';

const { values } = parseArgs({
  options: {
    before: { type: 'string' },
    seconds: { type: 'string', default: '5' },
    rounds: { type: 'string', default: '4' },
    connections: { type: 'string', default: '32' },
    node: { type: 'string', default: 'echo' },
  },
});
if (!values.before) {
  console.error('usage: bun bench/node-compare.ts --before <dir> [--seconds 5] [--rounds 4]');
  process.exit(2);
}
const root = join(import.meta.dir, '..');
const trees = [
  { name: 'before', dir: resolve(values.before) },
  { name: 'this tree', dir: root },
];
const tmp = mkdtempSync(join(tmpdir(), 'lume-a2a-compare-'));
const bodyFile = writeSendBody(tmp, 'send.json');

async function start(dir: string, round: number) {
  const server = values.node === 'scanner' ? 'scanner-server.ts' : 'node-server.ts';
  const proc = Bun.spawn(['bun', join(dir, 'bench/servers', server)], {
    cwd: dir,
    env: { ...process.env, PORT: '0', DATA_DIR: join(tmp, `data-${round}-${Date.now()}`) },
    stdout: 'pipe',
    stderr: 'inherit',
  });
  return { proc, port: await listeningPort(proc.stdout, `the node of ${dir}`) };
}

const load = (port: number, secs: number) =>
  runLoad(root, { port, connections: Number(values.connections), secs, body: bodyFile });

const load0 = loadavg()[0]!;
const cpu = new Map<string, number[]>(trees.map((t) => [t.name, []]));
for (let round = 0; round < Number(values.rounds); round++) {
  // Alternate which tree goes first, so a drift in the machine's load favours neither.
  for (const t of round % 2 ? [...trees].reverse() : trees) {
    const { proc, port } = await start(t.dir, round);
    await load(port, 2); // warm-up
    const cpu0 = cpuMs(proc.pid);
    const r = await load(port, Number(values.seconds));
    const perReq = ((cpuMs(proc.pid) - cpu0) * 1000) / Math.max(1, r.requests);
    proc.kill();
    await proc.exited;
    cpu.get(t.name)!.push(perReq);
    console.log(
      `round ${round + 1} ${t.name}: ${r.rps} req/s, ${perReq.toFixed(1)} µs CPU/req, errors ${r.errors}`,
    );
  }
}
const load1 = loadavg()[0]!;
// The least of the rounds: other load on the machine can only add to a process's CPU time.
const least = (name: string) => Math.min(...cpu.get(name)!);
const before = least('before');
const after = least('this tree');
console.log(
  `\nnode CPU per SendMessage, least of ${values.rounds} rounds: before ${before.toFixed(1)} µs, this tree ${after.toFixed(1)} µs, ratio ${(after / before).toFixed(3)}; load average ${load0.toFixed(1)} → ${load1.toFixed(1)} on ${navigator.hardwareConcurrency} cores`,
);
rmSync(tmp, { recursive: true, force: true });
