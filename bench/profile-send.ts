/**
 * @module bench/profile-send — where the microseconds of one blocking SendMessage go, per layer:
 * runs the benchmark node (bench/servers/node-server.ts) under Bun's sampling profiler
 * (`--cpu-prof`), drives it with bench/load.ts, and attributes every sample to the innermost
 * frame of this project's code on its stack (native calls count to the layer that made them;
 * samples with no project frame are the runtime's: HTTP parsing, the event loop, GC). The node's
 * CPU time per request (from /proc) is split by those shares. `--tree <dir>` profiles another
 * source tree with the same script, so two trees compare side by side.
 *
 * Usage: bun bench/profile-send.ts [--seconds 5] [--connections 32] [--tree <dir>] [--node echo|scanner]
 *          [--parts text|data] [--layer <name>] [--keep <dir>]
 */

import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { cpuMs } from './proc-cpu.ts';
import { listeningPort, SECTOR_PARTS, TEXT_PARTS, writeSendBody } from './send-body.ts';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '5' },
    connections: { type: 'string', default: '32' },
    tree: { type: 'string' },
    keep: { type: 'string' },
    top: { type: 'string', default: '25' },
    layer: { type: 'string' },
    /** `echo`: the benchmark node's echo agent and a text part; `scanner`: scanner, by default its sector.movement by a data part. */
    node: { type: 'string', default: 'echo' },
    /** The message's part: `text` ('hello'), `data` (sector.movement); default by --node. */
    parts: { type: 'string' },
  },
});
const here = join(import.meta.dir, '..');
const tree = resolve(values.tree ?? here);
const tmp = mkdtempSync(join(tmpdir(), 'lume-a2a-prof-'));
const profDir = values.keep ? resolve(values.keep) : join(tmp, 'prof');
const bodyFile = writeSendBody(
  tmp,
  'send.json',
  (values.parts ?? (values.node === 'scanner' ? 'data' : 'text')) === 'data'
    ? SECTOR_PARTS
    : TEXT_PARTS,
);

/** Layers by path inside the tree, first match wins. */
const LAYERS: [RegExp, string][] = [
  [/lib\/a2a\/(jsonrpc|rest|binding|grpc)\//, 'binding (JSON-RPC envelope, body)'],
  [
    /lib\/a2a\/(wire\/|operations|operations-v03|operation-table|traced-operations)/,
    'wire (parse params, encode)',
  ],
  [/lib\/a2a\/store\/log\/log-index\.ts/, 'store (SQLite index)'],
  [/lib\/a2a\/store\//, 'store (log: encode, append, cache)'],
  [/lib\/a2a\/(engine|agent)(\/|\.ts)/, 'engine (tasks, turn, events)'],
  [/lib\/a2a\/types\.ts/, 'engine (tasks, turn, events)'],
  [/lib\/(metrics|telemetry)\//, 'metrics and tracing'],
  [/lib\/(auth|net)\//, 'access (principal, origin)'],
  [/lib\/node\//, 'node routes'],
  [/node_modules\/elysia/, 'Elysia'],
  [/bench\/servers\//, 'agent'],
  [/lib\//, 'other project code'],
];

interface CpuNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  endTime: number;
  nodes: CpuNode[];
  samples: number[];
  timeDeltas: number[];
}

function layerOf(url: string): string | undefined {
  if (!url.includes(tree) && !url.includes('node_modules/elysia')) return undefined;
  for (const [re, name] of LAYERS) if (re.test(url)) return name;
  return undefined;
}

const port = await (async () => {
  const proc = Bun.spawn(
    [
      'bun',
      '--cpu-prof',
      '--cpu-prof-interval=500',
      `--cpu-prof-dir=${profDir}`,
      join(here, 'bench/servers/profiled.ts'),
    ],
    {
      cwd: tree,
      env: {
        ...process.env,
        PORT: '0',
        DATA_DIR: join(tmp, 'data'),
        NODE_SERVER: join(
          tree,
          `bench/servers/${values.node === 'scanner' ? 'scanner' : 'node'}-server.ts`,
        ),
      },
      stdout: 'pipe',
      stderr: 'inherit',
    },
  );
  return { proc, port: await listeningPort(proc.stdout, 'node') };
})();

async function load(secs: number) {
  const p = Bun.spawn(
    [
      'bun',
      join(here, 'bench/load.ts'),
      `http://127.0.0.1:${port.port}/a2a`,
      values.connections!,
      String(secs),
      bodyFile,
      'A2A-Version:1.0',
    ],
    { stdout: 'pipe', stderr: 'inherit' },
  );
  const out = await new Response(p.stdout).text();
  await p.exited;
  return JSON.parse(out.trim().split('\n').at(-1)!) as { requests: number; rps: number };
}

const load0 = loadavg()[0]!;
await load(2); // warm-up (in the profile too; its share is the same mix)
const cpu0 = cpuMs(port.proc.pid);
const r = await load(Number(values.seconds));
const cpuPerReq = ((cpuMs(port.proc.pid) - cpu0) * 1000) / r.requests;
port.proc.kill('SIGTERM');
await port.proc.exited;

const file = readdirSync(profDir).find((f) => f.endsWith('.cpuprofile'));
if (!file) throw new Error('no profile written');
const prof = JSON.parse(readFileSync(join(profDir, file), 'utf8')) as Profile;
const byId = new Map(prof.nodes.map((n) => [n.id, n]));
const parent = new Map<number, number>();
for (const n of prof.nodes) for (const c of n.children ?? []) parent.set(c, n.id);

const layer = new Map<string, number>();
const fn = new Map<string, number>();
let busy = 0;
// Only the samples of the last seconds of load (start-up and module loading left out): sample
// times, counted back from the profile's end, which is the node's exit right after the load.
const times: number[] = [];
let at = prof.endTime;
for (let i = prof.samples.length - 1; i >= 0; i--) {
  times[i] = at;
  at -= prof.timeDeltas[i] ?? 0;
}
const from = prof.endTime - (Number(values.seconds) + 1) * 1e6;
for (let i = 0; i < prof.samples.length; i++) {
  const leaf = byId.get(prof.samples[i]!)!;
  const dt = prof.timeDeltas[i] ?? 0;
  if (times[i]! < from || leaf.callFrame.functionName === '(idle)') continue;
  busy += dt;
  let name: string | undefined;
  for (let n: CpuNode | undefined = leaf; n; n = byId.get(parent.get(n.id) ?? -1)) {
    name = layerOf(n.callFrame.url);
    if (name) break;
  }
  name ??= 'runtime (HTTP server, event loop, GC)';
  layer.set(name, (layer.get(name) ?? 0) + dt);
  if (values.layer && !name.startsWith(values.layer)) continue;
  const f = `${leaf.callFrame.functionName || '(anonymous)'} ${leaf.callFrame.url.replace(tree, '').replace(/^.*node_modules\//, '')}:${leaf.callFrame.lineNumber + 1}`;
  fn.set(f, (fn.get(f) ?? 0) + dt);
}

const rows = [...layer].sort((a, b) => b[1] - a[1]);
console.log(
  `tree ${tree}, ${values.node} node: ${r.rps} req/s, ${cpuPerReq.toFixed(1)} µs CPU per request (all threads), load average ${load0.toFixed(1)} → ${loadavg()[0]!.toFixed(1)}`,
);
console.log('\n| layer | share of the main thread | µs per request |\n|---|---|---|');
for (const [name, t] of rows)
  console.log(
    `| ${name} | ${((100 * t) / busy).toFixed(1)}% | ${((cpuPerReq * t) / busy).toFixed(1)} |`,
  );
console.log(`\nhottest functions (self time${values.layer ? `, in ${values.layer}` : ''}):`);
for (const [f, t] of [...fn].sort((a, b) => b[1] - a[1]).slice(0, Number(values.top)))
  console.log(`  ${((100 * t) / busy).toFixed(1).padStart(5)}%  ${f}`);
if (!values.keep) rmSync(tmp, { recursive: true, force: true });
