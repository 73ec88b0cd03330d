/**
 * Unary SendMessage over gRPC and over JSON-RPC on the same node, in one run: one server process
 * (bench/servers/node-server.ts: each task persisted as a JSON file), loaded in turn by
 * bench/load.ts (JSON-RPC over HTTP/1.1 fetch) and bench/load-grpc.ts (gRPC over one HTTP/2
 * connection), the same message and concurrency, rounds alternating the bindings. Beside req/s,
 * the server's CPU time per request (user + system, all threads, from /proc), which holds up on a
 * noisy machine better than throughput. Prints a table and the "A2A bindings: gRPC and JSON-RPC"
 * section; `--write` records it in docs/benchmarks.md.
 *
 * Usage: bun bench/grpc.ts [--seconds 5] [--rounds 3] [--connections 32] [--write]
 */

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { encodeMessage } from '../lib/a2a/grpc/encode.ts';
import { A2A_SCHEMA } from '../lib/a2a/proto/schema.ts';
import { cpuMs } from './proc-cpu.ts';
import { reportSection } from './report.ts';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '5' },
    rounds: { type: 'string', default: '3' },
    connections: { type: 'string', default: '32' },
    write: { type: 'boolean', default: false },
  },
});
const seconds = Number(values.seconds);
const rounds = Number(values.rounds);
const connections = Number(values.connections);
const root = join(import.meta.dir, '..');
const tmp = mkdtempSync(join(tmpdir(), 'lume-a2a-grpc-bench-'));

const request = {
  message: {
    messageId: 'bench-1',
    role: 'ROLE_USER',
    parts: [{ text: 'hello', mediaType: 'text/plain' }],
  },
};
const jsonFile = join(tmp, 'send.json');
writeFileSync(
  jsonFile,
  JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'SendMessage', params: request }),
);
const protoFile = join(tmp, 'send.bin');
writeFileSync(protoFile, encodeMessage(A2A_SCHEMA, 'lf.a2a.v1.SendMessageRequest', request));

async function startServer(
  file: string,
): Promise<{ proc: Bun.Subprocess<'ignore', 'pipe', 'inherit'>; ports: string[] }> {
  const proc = Bun.spawn(['bun', file], {
    cwd: root,
    env: { ...process.env, PORT: '0', DATA_DIR: join(tmp, 'data') },
    stdout: 'pipe',
    stderr: 'inherit',
  });
  let seen = '';
  const reader = proc.stdout.getReader();
  for (;;) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`${file} exited before listening`);
    seen += new TextDecoder().decode(value);
    const m = /LISTENING (\d+)(?: GRPC (\d+))?/.exec(seen);
    if (m && (m[2] || !file.endsWith('node-server.ts'))) {
      reader.releaseLock();
      return { proc, ports: [m[1]!, m[2] ?? m[1]!] };
    }
  }
}

const server = await startServer('bench/servers/node-server.ts');
const [httpPort, grpcPort] = server.ports;
const echo = await startServer('bench/servers/elysia-echo.ts');
const h2c = await startServer('bench/servers/h2c-echo.ts');

type Load = { rps: number; p50: number; p99: number; errors: number; requests: number };
const jsonRpcLoad = (port: string, secs: number) => [
  'bun',
  'bench/load.ts',
  `http://127.0.0.1:${port}/a2a`,
  String(connections),
  String(secs),
  jsonFile,
  'A2A-Version:1.0',
];
const grpcLoad = (port: string, secs: number) => [
  'bun',
  'bench/load-grpc.ts',
  `127.0.0.1:${port}`,
  '/lf.a2a.v1.A2AService/SendMessage',
  String(connections),
  String(secs),
  protoFile,
  '1',
  'a2a-version:1.0',
];
const bindings: { name: string; pid: number; cmd: (secs: number) => string[] }[] = [
  {
    name: 'JSON-RPC (HTTP/1.1, fetch)',
    pid: server.proc.pid,
    cmd: (secs) => jsonRpcLoad(httpPort!, secs),
  },
  {
    name: 'gRPC (HTTP/2, one connection)',
    pid: server.proc.pid,
    cmd: (secs) => grpcLoad(grpcPort!, secs),
  },
  {
    name: 'ceiling: bare Elysia JSON echo (HTTP/1.1)',
    pid: echo.proc.pid,
    cmd: (secs) => jsonRpcLoad(echo.ports[0]!, secs),
  },
  {
    name: 'ceiling: bare node:http2 gRPC answer (h2c)',
    pid: h2c.proc.pid,
    cmd: (secs) => grpcLoad(h2c.ports[0]!, secs),
  },
];
async function load(cmd: string[]): Promise<Load> {
  const proc = Bun.spawn(cmd, { cwd: root, stdout: 'pipe', stderr: 'inherit' });
  const out = await new Response(proc.stdout).text();
  await proc.exited;
  return JSON.parse(out.trim().split('\n').at(-1)!);
}

const load0 = loadavg()[0]!;
const results = new Map<string, { rps: number[]; cpu: number[]; p99: number[]; errors: number }>();
for (const b of bindings) await load(b.cmd(2)); // warm-up, both paths
for (let round = 0; round < rounds; round++) {
  for (const b of round % 2 === 0 ? bindings : [...bindings].reverse()) {
    const cpu0 = cpuMs(b.pid);
    const r = await load(b.cmd(seconds));
    const cpu = ((cpuMs(b.pid) - cpu0) * 1000) / Math.max(1, r.requests);
    const acc = results.get(b.name) ?? { rps: [], cpu: [], p99: [], errors: 0 };
    acc.rps.push(r.rps);
    acc.cpu.push(cpu);
    acc.p99.push(r.p99);
    acc.errors += r.errors;
    results.set(b.name, acc);
    console.log(
      `round ${round + 1} ${b.name}: ${r.rps} req/s, ${cpu.toFixed(1)} µs server CPU/req, p99 ${r.p99} ms, errors ${r.errors}`,
    );
  }
}
const load1 = loadavg()[0]!;
for (const p of [server.proc, echo.proc, h2c.proc]) {
  p.kill();
  await p.exited;
}
rmSync(tmp, { recursive: true, force: true });

const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
const base = results.get(bindings[0]!.name)!;
const rows = bindings.map((b) => {
  const r = results.get(b.name)!;
  return `| ${b.name} | ${Math.round(mean(r.rps))} | ${(mean(r.rps) / mean(base.rps)).toFixed(2)}x | ${Math.min(...r.cpu).toFixed(1)} | ${(Math.min(...base.cpu) / Math.min(...r.cpu)).toFixed(2)}x | ${Math.max(...r.p99).toFixed(2)} | ${r.errors} |`;
});
const date = new Date().toISOString().slice(0, 10);
reportSection(
  'A2A bindings: gRPC and JSON-RPC',
  `Command: \`TMPDIR=/dev/shm bun bench/grpc.ts --seconds ${seconds} --rounds ${rounds} --connections ${connections}${values.write ? ' --write' : ''}\` (${date}, Bun ${Bun.version}, 2 cores).

Blocking unary \`SendMessage\` (A2A 1.0) on one node process (\`bench/servers/node-server.ts\`, each task a JSON file), ${connections} requests in flight from a separate load process: JSON-RPC by \`bench/load.ts\` (raw HTTP/1.1 keep-alive sockets), gRPC by \`bench/load-grpc.ts\` (\`node:http2\`, one connection, as one gRPC channel), the same message; the two ceilings answer without the node (an Elysia JSON echo, \`bench/servers/elysia-echo.ts\`; a bare \`node:http2\` answer with grpc-status 0, \`bench/servers/h2c-echo.ts\`), each transport's cost alone. ${seconds} s per row after a 2 s warm-up of each, ${rounds} rounds alternating the order; req/s is the mean over rounds, server CPU the least. Machine load average (1 min) ${load0.toFixed(1)} at the start, ${load1.toFixed(1)} at the end, on 2 cores shared with other work.

| binding | SendMessage req/s | vs JSON-RPC | server CPU µs/req | capacity vs JSON-RPC | p99 ms (worst round) | errors |
|---|---|---|---|---|---|---|
${rows.join('\n')}`,
);
