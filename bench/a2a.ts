/**
 * SendMessage throughput and p99 latency at 32 connections, in one run: our node (each task
 * appended to its task log), a bare Elysia JSON echo (the framework's ceiling), and the official
 * @a2a-js/sdk server (Express, in-memory store, an equivalent agent) on Bun and on Node. Each
 * server's CPU time per request (user + system, all its threads, from /proc) is measured beside
 * its rate: less sensitive to other load on the machine than requests/s. Also the resident memory
 * of an idle node. Prints a table and the "A2A node" section; `--write` records it in
 * docs/benchmarks.md. Task files go to the temporary directory (TMPDIR).
 *
 * Usage: bun bench/a2a.ts [--seconds 10] [--rounds 2] [--connections 32] [--stores log] [--write]
 */

import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Catalog } from '../lib/catalog/catalog.ts';
import { createNode } from '../lib/node/create-node.ts';
import { cpuMs } from './proc-cpu.ts';
import { reportSection } from './report.ts';
import { runLoad, SECTOR_PARTS, writeSendBody } from './send-body.ts';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '10' },
    rounds: { type: 'string', default: '2' },
    connections: { type: 'string', default: '32' },
    write: { type: 'boolean', default: false },
    /** The embedded task stores our nodes run on, side by side: files, log or both. */
    stores: { type: 'string', default: 'log' },
  },
});
const stores = values.stores.split(',').filter((s) => s === 'files' || s === 'log');
const storeName = (s: string) => (s === 'log' ? 'task log' : `TASK_STORE=${s}`);
const seconds = Number(values.seconds);
const rounds = Number(values.rounds);
const connections = Number(values.connections);
const root = join(import.meta.dir, '..');
const tmp = mkdtempSync(join(tmpdir(), 'lume-a2a-bench-'));

interface Target {
  name: string;
  cmd: string[];
  /** The request body, when not the echo's text message. */
  body?: string;
  env?: Record<string, string>;
}
const dataBodyFile = writeSendBody(tmp, 'send-data.json', SECTOR_PARTS);
const targets: Target[] = [
  ...stores.map((s) => ({
    name: `lume-a2a node (Bun, ${storeName(s)})`,
    cmd: ['bun', 'bench/servers/node-server.ts'],
    env: { TASK_STORE: s },
  })),
  ...stores.map((s) => ({
    name: `scanner node, data part \`sector.movement\` (Bun, ${storeName(s)})`,
    cmd: ['bun', 'bench/servers/scanner-server.ts'],
    body: dataBodyFile,
    env: { TASK_STORE: s },
  })),
  { name: 'bare Elysia JSON echo (Bun)', cmd: ['bun', 'bench/servers/elysia-echo.ts'] },
  { name: '@a2a-js/sdk server (Bun, in-memory)', cmd: ['bun', 'bench/servers/sdk-server.mjs'] },
  { name: '@a2a-js/sdk server (Node, in-memory)', cmd: ['node', 'bench/servers/sdk-server.mjs'] },
];

const bodyFile = writeSendBody(tmp, 'send.json');

async function startServer(
  cmd: string[],
  env: Record<string, string> = {},
): Promise<{ proc: Bun.Subprocess<'ignore', 'pipe', 'inherit'>; port: number }> {
  const proc = Bun.spawn(cmd, {
    cwd: root,
    env: { ...process.env, PORT: '0', DATA_DIR: join(tmp, `data-${Date.now()}`), ...env },
    stdout: 'pipe',
    stderr: 'inherit',
  });
  const reader = proc.stdout.getReader();
  let seen = '';
  while (true) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`${cmd.join(' ')} exited before listening`);
    seen += new TextDecoder().decode(value);
    const m = /(?:LISTENING |listening on http:\/\/\S+:)(\d+)/.exec(seen);
    if (m) {
      reader.releaseLock();
      return { proc, port: Number(m[1]) };
    }
  }
}

const load = (port: number, secs: number, body = bodyFile) =>
  runLoad(root, { port, connections, secs, body });

function rssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Math.round(Number(/VmRSS:\s+(\d+)/.exec(status)![1]) / 1024);
}

/** CPU time a process has used so far (user + system, all threads), in µs. */
const cpuMicros = (pid: number) => cpuMs(pid) * 1000;

const load0 = loadavg()[0]!;
const results = new Map<string, { rps: number[]; p99: number[]; cpu: number[]; errors: number }>();
for (let round = 0; round < rounds; round++) {
  for (const t of targets) {
    const { proc, port } = await startServer(t.cmd, t.env);
    await load(port, 2, t.body); // warm-up
    const cpu0 = cpuMicros(proc.pid);
    const r = await load(port, seconds, t.body);
    const cpu = (cpuMicros(proc.pid) - cpu0) / Math.max(1, r.requests);
    proc.kill();
    await proc.exited;
    const acc = results.get(t.name) ?? { rps: [], p99: [], cpu: [], errors: 0 };
    acc.rps.push(r.rps);
    acc.p99.push(r.p99);
    acc.cpu.push(cpu);
    acc.errors += r.errors;
    results.set(t.name, acc);
    console.log(
      `round ${round + 1} ${t.name}: ${r.rps} req/s, ${cpu.toFixed(1)} µs CPU/req, p50 ${r.p50} ms, p99 ${r.p99} ms, errors ${r.errors}`,
    );
  }
}
const load1 = loadavg()[0]!;

// Memory of an idle scanner node, as `bun run node` starts it.
const idle = await startServer(['bun', 'node/main.ts', '--name', 'scanner', '--port', '0'], {});
await Bun.sleep(1000); // let start-up garbage settle before reading the resident size
const idleRss = rssMb(idle.proc.pid);
idle.proc.kill();

// Real streaming: an agent reporting progress every 500 ms for two seconds; when does each event arrive?
const progressNode = createNode(
  {
    name: 'progress',
    description: 'Reports progress every 500 ms',
    catalog: new Catalog([
      {
        id: 'bench.progress',
        name: 'progress',
        description: 'progress',
        tags: ['bench'],
        keywords: [],
        readOnly: true,
        args: {},
        run: () => ({}),
      },
    ]),
    agent: {
      async handle(ctx) {
        for (let step = 1; step <= 4; step++) {
          ctx.working(`step ${step} of 4`);
          await Bun.sleep(500);
        }
        ctx.complete('done');
      },
    },
  },
  { dataDir: join(tmp, 'progress'), port: 0 },
);
const progress = await progressNode.start();
const t0 = performance.now();
const streamRes = await fetch(`${progress.url}/a2a`, {
  method: 'POST',
  headers: { 'Content-Type': 'application/json', 'A2A-Version': '1.0' },
  body: JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'SendStreamingMessage',
    params: { message: { messageId: 'p1', role: 'ROLE_USER', parts: [{ text: 'go' }] } },
  }),
});
const arrivals: string[] = [];
const decoder = new TextDecoder();
const streamReader = streamRes.body!.getReader();
for (let r = await streamReader.read(); !r.done; r = await streamReader.read()) {
  for (const frame of decoder
    .decode(r.value)
    .split('\n\n')
    .filter((f) => f.startsWith('data: '))) {
    const result = JSON.parse(frame.slice(6)).result;
    const what = result.task
      ? 'task'
      : `${result.statusUpdate.status.state.replace('TASK_STATE_', '').toLowerCase()}`;
    arrivals.push(`${what} +${Math.round(performance.now() - t0)} ms`);
  }
}
await progress.stop();
console.log(`\nstreaming arrivals: ${arrivals.join(', ')}`);

const mean = (xs: number[]) => Math.round(xs.reduce((a, b) => a + b, 0) / xs.length);
// CPU per request: the least of the rounds, since other load on the machine can only add to it.
const leastCpu = (name: string) => Math.min(...results.get(name)!.cpu);
const sdk = targets.find((t) => t.name.startsWith('@a2a-js/sdk server (Bun'))!.name;
const sdkBun = mean(results.get(sdk)!.rps);
const sdkBunCpu = leastCpu(sdk);
const rows = targets.map((t) => {
  const r = results.get(t.name)!;
  const cpu = leastCpu(t.name);
  return `| ${t.name} | ${mean(r.rps)} | ${(mean(r.rps) / sdkBun).toFixed(2)}x | ${cpu.toFixed(1)} | ${(sdkBunCpu / cpu).toFixed(2)}x | ${Math.max(...r.p99).toFixed(2)} | ${r.errors} |`;
});
const table = [
  '| server | SendMessage req/s | vs SDK on Bun | server CPU µs/req | capacity vs SDK on Bun | p99 ms (worst round) | errors |',
  '|---|---|---|---|---|---|---|',
  ...rows,
].join('\n');
console.log(`\n${table}\n\nidle scanner node: ${idleRss} MB resident`);

reportSection(
  'A2A node',
  `Command: \`${process.env.TMPDIR ? `TMPDIR=${process.env.TMPDIR} ` : ''}bun bench/a2a.ts --seconds ${seconds} --rounds ${rounds} --connections ${connections}${values.stores !== 'log' ? ` --stores ${values.stores}` : ''}${values.write ? ' --write' : ''}\` (${new Date().toISOString().slice(0, 10)}, Bun ${Bun.version}, Node ${(await Bun.$`node --version`.text()).trim()}, ${navigator.hardwareConcurrency} cores).

Blocking \`SendMessage\` (A2A 1.0) at ${connections} connections from a separate load process (\`bench/load.ts\`), ${seconds} s per target after a 2 s warm-up, ${rounds} rounds alternating the targets; req/s is the mean over rounds. Every server but scanner runs the same agent: working, one artifact, completed; scanner answers a data part \`{skill: sector.movement}\` through its catalog (a real result: its sectors ranked), compared with the SDK's echo. Our node appends every task changed in a turn to a segment with one write (answered after it, the index committed in groups), under \`${tmpdir()}\`; the SDK server keeps tasks in memory. "Server CPU µs/req" is the server process's CPU time (user + system, all threads) per request, the least of the rounds; "capacity" is the SDK server's CPU per request over this one's, requests per core compared. Machine load average (1 min) ${load0.toFixed(1)} at the start, ${load1.toFixed(1)} at the end of the rounds, on ${navigator.hardwareConcurrency} cores shared with other work.

${table}

Idle \`scanner\` node (\`bun run node --name scanner\`), resident memory 1 s after start: **${idleRss} MB**.

Streaming is real: an agent that reports \`working\` every 500 ms for two seconds, then completes, streamed over \`SendStreamingMessage\`; arrival time of each frame at the client: ${arrivals.join(', ')}.`,
);
rmSync(tmp, { recursive: true, force: true });
