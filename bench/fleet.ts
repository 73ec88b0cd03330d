/**
 * The hub's fleet.invoke round trip (hub -> node -> hub, signed and traced into SQLite) in each
 * signing mode (pairwise, the default between ring members; ed25519; derived; shared) against a
 * direct unsigned call to the same node and capability, in one run with alternating rounds; and
 * the time `/api/fleet`'s aggregation takes over 100 nodes started in this process. Prints the
 * figures and the "Fleet" section; `--write` records it in docs/benchmarks.md.
 *
 * Usage: bun bench/fleet.ts [--seconds 5] [--rounds 3] [--connections 32] [--paths direct,pairwise] [--no-aggregate] [--write]
 *
 * `--paths` runs only the named paths (pairwise, memtrace, nosink, ed25519, derived, shared,
 * untraced; to profile one: `bun --cpu-prof bench/fleet.ts --paths pairwise`); BENCH_PROFILE_DIR=<dir>
 * runs the node under Bun's profiler, writing its profile there. The trace files go to the
 * temporary folder (TMPDIR=/dev/shm puts them on tmpfs, to tell the disk's share).
 */

import { Database } from 'bun:sqlite';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Catalog } from '../lib/catalog/catalog.ts';
import { createFleetInvoker } from '../lib/fleet/invoke.ts';
import { parseFleet } from '../lib/config/fleet-file.ts';
import { createNode } from '../lib/node/create-node.ts';
import { createPeerClient } from '../lib/peer/client.ts';
import { ensureKeys, loadPeerIdentity } from '../lib/peer/keys.ts';
import { PEER_HEADER, parseSignature, type PeerMode } from '../lib/peer/signature.ts';
import type { PeerSigner } from '../lib/peer/signer.ts';
import { createTraceStore, type TraceStore } from '../lib/fleet/trace.ts';
import { createFleetView } from '../hub/fleet/view.ts';
import { reportSection } from './report.ts';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '5' },
    rounds: { type: 'string', default: '3' },
    connections: { type: 'string', default: '32' },
    paths: { type: 'string' },
    'no-aggregate': { type: 'boolean', default: false },
    write: { type: 'boolean', default: false },
  },
});
const seconds = Number(values.seconds);
const rounds = Number(values.rounds);
const connections = Number(values.connections);
const tmp = mkdtempSync(join(tmpdir(), 'lume-a2a-fleetbench-'));
/** The machine's load average when the run starts (other work on it weighs on every figure). */
const load = (() => {
  try {
    return `load average ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(', ')} (1, 5, 15 min) on ${navigator.hardwareConcurrency} cores`;
  } catch {
    return 'not known';
  }
})();

// 1. A scanner node in its own process, and the hub's invokers here. `a2a` is the hub (an Ed25519
// ring member: pairwise by default, ed25519 when asked); `a2a-hmac` and `a2a-shared` are callers
// whose ring entries say `derived` and `shared`.
const doc = {
  hub: { name: 'a2a', port: 0, role: 'hub', file: 'hub/main.ts' },
  nodes: [
    { name: 'scanner', port: 0, role: 'scanner', file: 'node/scanner/index.ts' },
    { name: 'a2a-hmac', port: 0, role: 'caller', file: 'x' },
    { name: 'a2a-shared', port: 0, role: 'caller', file: 'x' },
  ],
};
await ensureKeys(tmp, parseFleet(doc));
const ringFile = join(tmp, 'keys', 'ring.json');
const ring = JSON.parse(readFileSync(ringFile, 'utf8'));
ring.nodes['a2a-hmac'] = { mode: 'derived', keys: [] };
ring.nodes['a2a-shared'] = { mode: 'shared', keys: [] };
writeFileSync(ringFile, JSON.stringify(ring));
const profile = process.env.BENCH_PROFILE_DIR
  ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROFILE_DIR}`]
  : [];
const proc = Bun.spawn(['bun', ...profile, 'bench/servers/fleet-node.ts'], {
  cwd: join(import.meta.dir, '..'),
  env: { ...process.env, DATA_DIR: tmp },
  stdout: 'pipe',
  stderr: 'inherit',
});
const reader = proc.stdout.getReader();
let seen = '';
let port = 0;
while (!port) {
  const { value, done } = await reader.read();
  if (done) throw new Error('bench node exited');
  seen += new TextDecoder().decode(value);
  port = Number(/LISTENING (\d+)/.exec(seen)?.[1] ?? 0);
}
const url = `http://127.0.0.1:${port}`;
const fleet = parseFleet({ ...doc, nodes: [{ ...doc.nodes[0]!, url }] });

/**
 * A fresh trace store (its own SQLite file on disk, as the hub's is) for each run of a traced
 * path, so no path pays for rows another one left and every run starts alike.
 */
let traceFiles = 0;
function freshTrace(inMemory = false): { trace: TraceStore; close(): void } {
  const file = join(tmp, `trace-${++traceFiles}.sqlite`);
  const db = new Database(inMemory ? ':memory:' : file, { create: true, strict: true });
  const trace = createTraceStore(db);
  return {
    trace,
    close() {
      trace.close();
      db.close();
      for (const f of [file, `${file}-wal`, `${file}-shm`, `${file}.log`])
        rmSync(f, { force: true });
    },
  };
}

/** Holds a signer to one mode (only the `ed25519` row needs it: by default a ring member signs pairwise). */
function heldTo(signer: PeerSigner, mode: PeerMode): PeerSigner {
  return {
    node: signer.node,
    modes: signer.modes,
    sign: (target, body, opts = {}) => signer.sign(target, body, { ...opts, mode }),
  };
}
type Path = 'pairwise' | 'memtrace' | 'nosink' | 'ed25519' | 'derived' | 'shared' | 'untraced';
// `untraced` is the hub's peer client alone (pairwise, no trace row), to tell signing from tracing;
// `nosink` is fleet.invoke with its span and traceparent but a trace sink that keeps nothing, to
// tell the store from the rest of the trace.
const ALL_PATHS: { path: Path; caller: string; mode: PeerMode; held?: boolean; label: string }[] = [
  {
    path: 'pairwise',
    caller: 'a2a',
    mode: 'pairwise',
    label: 'fleet.invoke, pairwise (the default between ring members), traced',
  },
  {
    path: 'memtrace',
    caller: 'a2a',
    mode: 'pairwise',
    label: 'fleet.invoke, pairwise, traced into an in-memory SQLite database',
  },
  {
    path: 'nosink',
    caller: 'a2a',
    mode: 'pairwise',
    label: 'fleet.invoke, pairwise, span and traceparent but a trace sink that keeps nothing',
  },
  {
    path: 'ed25519',
    caller: 'a2a',
    mode: 'ed25519',
    held: true,
    label: 'fleet.invoke, ed25519, traced',
  },
  { path: 'derived', caller: 'a2a-hmac', mode: 'derived', label: 'fleet.invoke, derived, traced' },
  { path: 'shared', caller: 'a2a-shared', mode: 'shared', label: 'fleet.invoke, shared, traced' },
  { path: 'untraced', caller: 'a2a', mode: 'pairwise', label: 'peerFetch, pairwise, no trace' },
];
const chosen = values.paths?.split(',');
const PATHS = chosen ? ALL_PATHS.filter((p) => chosen.includes(p.path)) : ALL_PATHS;
/** Per path: starts one run (a fresh trace store when traced) and gives its call and its clean-up. */
const starts: Record<Path, () => { call: () => Promise<boolean>; close(): void }> = {} as never;
for (const p of PATHS) {
  const own = (await loadPeerIdentity(tmp, p.caller)).signer;
  const signer = p.held ? heldTo(own, p.mode) : own;
  // Each path signs in the mode it is named for: checked once here, not on every call.
  const probe = await signer.sign(
    { to: 'scanner', route: '/peer/invoke', scope: 'scanner.status' },
    new Uint8Array(0),
  );
  const signed = parseSignature(probe[PEER_HEADER]!);
  if (!signed.ok || signed.result.mode !== p.mode)
    throw new Error(`${p.path} calls would be signed as ${probe[PEER_HEADER]}`);
  const client = createPeerClient({ signer, fleet });
  starts[p.path] =
    p.path === 'untraced'
      ? () => ({
          call: async () => (await client.peerFetch('scanner', 'scanner.status', {})).ok,
          close() {},
        })
      : () => {
          let ids = 0;
          const store =
            p.path === 'nosink'
              ? { trace: { record: () => ({ id: ++ids }) }, close() {} }
              : freshTrace(p.path === 'memtrace');
          const invoker = createFleetInvoker({ self: p.caller, client, trace: store.trace });
          return {
            call: async () => (await invoker.invoke('scanner', 'scanner.status')).ok,
            close: store.close,
          };
        };
}

const cpuOf = (u: { user: number; system: number }) => u.user + u.system;
const nodeCpu = async () =>
  cpuOf((await (await fetch(`${url}/cpu`)).json()) as { user: number; system: number });

/** Calls per second and p99 latency, plus CPU µs per call in this (calling) process and in the node. */
async function run(
  call: () => Promise<boolean>,
): Promise<{ rps: number; p99: number; callerCpu: number; nodeCpu: number }> {
  const cpu0 = cpuOf(process.cpuUsage());
  const node0 = await nodeCpu();
  const latencies: number[] = [];
  const deadline = performance.now() + seconds * 1000;
  const start = performance.now();
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (performance.now() < deadline) {
        const t0 = performance.now();
        if (!(await call())) throw new Error('call failed');
        latencies.push(performance.now() - t0);
      }
    }),
  );
  const rps = Math.round(latencies.length / ((performance.now() - start) / 1000));
  const callerCpu = (cpuOf(process.cpuUsage()) - cpu0) / latencies.length;
  const nodeCpuPerCall = ((await nodeCpu()) - node0) / latencies.length;
  latencies.sort((a, b) => a - b);
  return {
    rps,
    p99: +latencies[Math.floor(latencies.length * 0.99)]!.toFixed(2),
    callerCpu,
    nodeCpu: nodeCpuPerCall,
  };
}
const body = JSON.stringify({ capability: 'scanner.status', args: {} });
const direct = async () => {
  const res = await fetch(`${url}/plain/invoke`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-peer-scope': 'scanner.status' },
    body,
  });
  return ((await res.json()) as { ok: boolean }).ok;
};
type Key = 'direct' | Path;
const KEYS: Key[] = ['direct', ...PATHS.map((p) => p.path)];
const start = (k: Key) => (k === 'direct' ? { call: direct, close() {} } : starts[k]());
async function measure(k: Key) {
  const s = start(k);
  try {
    return await run(s.call);
  } finally {
    s.close();
  }
}

for (const k of KEYS) await measure(k); // warm-up every path
const runs = Object.fromEntries(KEYS.map((k) => [k, []])) as unknown as Record<
  Key,
  Awaited<ReturnType<typeof run>>[]
>;
// Each path against the direct run of its own round, so load that comes and goes on the machine
// weighs on both sides of a ratio alike.
const ratios = Object.fromEntries(PATHS.map((p) => [p.path, []])) as unknown as Record<
  Path,
  number[]
>;
for (let r = 0; r < rounds; r++) {
  // Alternate the order: odd rounds run the paths backwards, so no path always follows another.
  for (const k of r % 2 ? [...KEYS].reverse() : KEYS) runs[k].push(await measure(k));
  for (const p of PATHS) ratios[p.path].push(runs[p.path].at(-1)!.rps / runs.direct.at(-1)!.rps);
  const show = (k: Key) => {
    const x = runs[k].at(-1)!;
    const ratio = k === 'direct' ? '' : ` = ${Math.round(ratios[k].at(-1)! * 100)}%`;
    return `${k} ${x.rps}/s${ratio} (CPU µs/call: caller ${x.callerCpu.toFixed(0)}, node ${x.nodeCpu.toFixed(0)})`;
  };
  console.log(`round ${r + 1}: ${KEYS.map(show).join(' · ')}`);
}
proc.kill();
await proc.exited; // a profiled node writes its profile as it exits
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
const rps = Object.fromEntries(
  Object.entries(runs).map(([k, v]) => [k, Math.round(mean(v.map((r) => r.rps)))]),
) as Record<Key, number>;
const p99 = (k: Key) => Math.max(...runs[k].map((r) => r.p99));
// CPU per call: the least of the rounds, since other load on the machine can only add to it.
const cpu = (k: Key) => {
  const caller = Math.min(...runs[k].map((r) => r.callerCpu));
  const node = Math.min(...runs[k].map((r) => r.nodeCpu));
  return { caller, node, total: caller + node };
};
const capacity = (k: Path) => Math.round((cpu('direct').total / cpu(k).total) * 100);
/** The mean of the per-round ratios to the direct call, in percent, and their range. */
const share = (k: Path) => Math.round(mean(ratios[k]) * 100);
const spread = (k: Path) =>
  `${Math.round(Math.min(...ratios[k]) * 100)}–${Math.round(Math.max(...ratios[k]) * 100)}%`;
const TARGET: Partial<Record<Path, number>> = { pairwise: 75 };
console.log(
  `\nof the direct call, per mode: ${PATHS.map((p) => `${p.path} ${share(p.path)}% (rounds ${spread(p.path)})`).join(' · ')}`,
);

const cpuText = (k: Key) => {
  const c = cpu(k);
  return `${c.caller.toFixed(0)} + ${c.node.toFixed(0)} = ${c.total.toFixed(0)}`;
};
const table = [
  '| path | calls/s | of direct (rounds) | p99 ms (worst round) | CPU µs/call, caller + node | capacity of direct | target (of direct) |',
  '|---|---|---|---|---|---|---|',
  `| direct, unsigned | ${rps.direct} | 100% | ${p99('direct')} | ${cpuText('direct')} | 100% | |`,
  ...PATHS.map(({ path, label }) => {
    const goal = TARGET[path];
    const verdict =
      goal === undefined ? '' : `>= ${goal}%: ${share(path) >= goal ? 'met' : 'missed'}`;
    return `| ${label} | ${rps[path]} | ${share(path)}% (${spread(path)}) | ${p99(path)} | ${cpuText(path)} | ${capacity(path)}% | ${verdict} |`;
  }),
].join('\n');
if (values['no-aggregate']) {
  console.log(`\n${table}`);
  rmSync(tmp, { recursive: true, force: true });
  process.exit(0);
}

// 2. Aggregating 100 nodes.
const many = [];
for (let i = 0; i < 100; i++) {
  const node = createNode(
    {
      name: `n${i}`,
      description: `node ${i}`,
      catalog: new Catalog([
        {
          id: `n${i}.status`,
          name: 'status',
          description: 'status',
          tags: ['bench'],
          keywords: [],
          readOnly: true,
          args: {},
          run: () => ({ i }),
        },
      ]),
    },
    { dataDir: join(tmp, 'many'), port: 0 },
  );
  many.push(await node.start());
}
const bigFleet = parseFleet({
  hub: doc.hub,
  nodes: many.map((m, i) => ({
    name: `n${i}`,
    port: m.port,
    role: 'bench',
    file: 'x',
    url: m.url,
  })),
});
const view = createFleetView({ fleet: bigFleet, ttlMs: 0, timeoutMs: 5000 });
const times: number[] = [];
for (let i = 0; i < 5; i++) {
  const t0 = performance.now();
  const snap = await view.snapshot();
  times.push(performance.now() - t0);
  if (snap.online !== 100) throw new Error(`only ${snap.online} of 100 online`);
}
for (const m of many) await m.stop();
times.sort((a, b) => a - b);
const aggMedian = Math.round(times[2]!);
console.log(
  `\n${table}\n\n/api/fleet over 100 nodes: median ${aggMedian} ms (worst ${Math.round(times[4]!)} ms)`,
);

reportSection(
  'Fleet',
  `Command: \`bun bench/fleet.ts --seconds ${seconds} --rounds ${rounds} --connections ${connections}\` (${new Date().toISOString().slice(0, 10)}, Bun ${Bun.version}, ${navigator.hardwareConcurrency} cores).

The hub's \`fleet.invoke('scanner', 'scanner.status')\` in each signing mode (signed by the caller, verified by the node, answer parsed, a trace row appended to the trace log and moved into SQLite in WAL mode on disk) against a direct unsigned POST of the same capability to the same node process (the same dispatch behind a pass-through verifier), ${connections} in flight, ${seconds} s per run, ${rounds} rounds; every round runs every path once, odd rounds in reverse order. Each traced run writes to a fresh trace file of its own, so no path pays for rows another left. "of direct" is the mean of the per-round ratios, each path against the direct run of its own round (the range across rounds in brackets). The caller and the benchmark share this process; the node runs in its own. Machine load at the start: ${load}.

${table}

"CPU µs/call" is the CPU time of the calling process (the benchmark) and of the node process per call, the least of the rounds; its ratio to the direct call is the capacity ratio, less sensitive to other load on the machine than calls/s. \`pairwise\` costs one HMAC to sign and one to verify, like \`derived\`, with keys agreed between the hub's and the node's Ed25519 identities; the "no trace" row is the same call without the trace row (and without the span it runs in), the "keeps nothing" row the traced call with a sink that stores nothing, and the "in-memory" row the same traced call with its trace database in memory instead of a file, to separate the costs. \`ed25519\` costs one signature (node:crypto, about 20 µs) and one verification (about 55 µs of CPU) per call, more than the whole direct call. The trace adds a row per call, appended to the trace log in groups (at most 20 ms or 512 rows per \`write\`) and moved into SQLite once a second (or at 8,192 waiting rows, or on a read); the trace table has no index on trace ids, whose random keys made every commit rewrite pages all over the index.

\`/api/fleet\` aggregation (health + card of every node, in parallel) over **100 nodes** started in the benchmark process: median **${aggMedian} ms** of 5 (worst ${Math.round(times[4]!)} ms; target: under one second).`,
);
rmSync(tmp, { recursive: true, force: true });
process.exit(0);
