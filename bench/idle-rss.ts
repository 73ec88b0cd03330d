/**
 * @module bench/idle-rss — an idle node's resident memory: starts the scanner node as the README
 * starts it (`bun node/main.ts --name scanner`) on a fresh data folder, reads VmRSS (and its
 * anonymous and file-backed parts) from /proc 1 s after it listens, several times, and prints the
 * median against the target (< 60 MB). Beside it, to show where the memory goes, the same reading
 * of Bun serving one route, of Bun having loaded the node's modules without starting it, and of
 * the node started with JSC's JIT off (`BUN_JSC_useJIT=0`, a measure only: no start command sets
 * it). Prints the "Idle node memory" section; `--write` records it in docs/benchmarks.md.
 *
 * Usage: bun bench/idle-rss.ts [--runs 5] [--name scanner] [--write]
 */

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { reportSection } from './report.ts';
import { spawnServer } from './side-by-side-parts.ts';

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '5' },
    name: { type: 'string', default: 'scanner' },
    write: { type: 'boolean', default: false },
  },
});
const root = join(import.meta.dir, '..');
const tmp = mkdtempSync(join(tmpdir(), 'lume-a2a-rss-'));
const TARGET_MB = 60;
const runs = Number(values.runs);

/** VmRSS, RssAnon and RssFile of `pid` in MB. */
function rssOf(pid: number) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const mb = (key: string) => Number(new RegExp(`${key}:\\s+(\\d+)`).exec(status)![1]) / 1024;
  return { rss: mb('VmRSS'), anon: mb('RssAnon'), file: mb('RssFile') };
}
type Reading = ReturnType<typeof rssOf>;

// Bun serving one route; and Bun having loaded what node/main.ts loads, the node not started.
const bare = join(tmp, 'bare.ts');
writeFileSync(
  bare,
  "const s = Bun.serve({ port: 0, fetch: () => new Response('ok') });\nconsole.log(`LISTENING ${s.port}`);\n",
);
const imports = [
  ...readFileSync(join(root, 'node/main.ts'), 'utf8').matchAll(/from '(\.\.[^']+)'/g),
]
  .map((m) => join(root, 'node', m[1]!))
  .concat(join(root, `node/${values.name}/index.ts`));
const loaded = join(tmp, 'loaded.ts');
writeFileSync(
  loaded,
  `${imports.map((f) => `await import(${JSON.stringify(f)});`).join('\n')}\nsetInterval(() => {}, 60_000);\nconsole.log('LISTENING 0');\n`,
);

const node = ['bun', 'node/main.ts', '--name', values.name, '--port', '0'];
const kinds: { key: string; label: string; cmd: string[]; env?: Record<string, string> }[] = [
  { key: 'node', label: `${values.name}, idle (the target)`, cmd: node },
  { key: 'bare', label: 'Bun serving one route', cmd: ['bun', bare] },
  { key: 'loaded', label: "Bun with the node's modules loaded, not started", cmd: ['bun', loaded] },
  {
    key: 'nojit',
    label: `${values.name}, idle, JIT off (\`BUN_JSC_useJIT=0\`)`,
    cmd: node,
    env: { BUN_JSC_useJIT: '0' },
  },
];

const readings = new Map<string, Reading[]>(kinds.map((k) => [k.key, []]));
const load0 = loadavg()[0]!;
for (let i = 0; i < runs; i++) {
  // Odd runs go backwards, so no kind always follows another.
  for (const kind of i % 2 ? [...kinds].reverse() : kinds) {
    const proc = await spawnServer(root, kind.cmd, {
      DATA_DIR: mkdtempSync(join(tmp, 'data-')),
      LOG_LEVEL: 'warn',
      ...kind.env,
    });
    await Bun.sleep(1000); // not synchronisation: start-up garbage settles before the reading
    const r = rssOf(proc.proc.pid);
    readings.get(kind.key)!.push(r);
    console.log(
      `run ${i + 1}, ${kind.key}: RSS ${r.rss.toFixed(1)} MB (anonymous ${r.anon.toFixed(1)}, file-backed ${r.file.toFixed(1)})`,
    );
    proc.proc.kill();
    await proc.proc.exited;
  }
}
rmSync(tmp, { recursive: true, force: true });
const load1 = loadavg()[0]!;

const mb = (n: number) => n.toFixed(1);
/** The median reading of a kind (by RSS), and the range of its RSS. */
function medianOf(key: string) {
  const rs = [...readings.get(key)!].sort((a, b) => a.rss - b.rss);
  return { mid: rs[Math.floor(rs.length / 2)]!, low: rs[0]!.rss, high: rs.at(-1)!.rss };
}
const target = medianOf('node');
const verdict = target.mid.rss < TARGET_MB ? 'met' : 'missed';
console.log(
  `idle ${values.name} node RSS: median ${mb(target.mid.rss)} MB of ${runs} (range ${mb(target.low)}–${mb(target.high)}); target < ${TARGET_MB} MB: ${verdict}; load average ${load0.toFixed(2)} → ${load1.toFixed(2)}`,
);
const rows = kinds.map((k) => {
  const m = medianOf(k.key);
  const goal = k.key === 'node' ? `< ${TARGET_MB} MB: ${verdict}` : '';
  return `| ${k.label} | ${mb(m.mid.rss)} MB (${mb(m.low)}–${mb(m.high)}) | ${mb(m.mid.anon)} MB | ${mb(m.mid.file)} MB | ${goal} |`;
});
reportSection(
  'Idle node memory',
  `Command: \`bun bench/idle-rss.ts --runs ${runs}${values.name !== 'scanner' ? ` --name ${values.name}` : ''}\` (${new Date().toISOString().slice(0, 10)}, Bun ${Bun.version}, ${navigator.hardwareConcurrency} cores; load average ${load0.toFixed(1)} → ${load1.toFixed(1)}).

The ${values.name} node as the README starts it (\`bun node/main.ts --name ${values.name}\`, from source, no model, no mesh), a fresh data folder each run, its resident memory read from /proc 1 s after it listens; the median of ${runs} runs (range in brackets). The other rows show where the memory goes: Bun serving one route, Bun having loaded the modules node/main.ts loads (the node not started), and the node with JSC's JIT off (a measure only, no start command sets it). File-backed memory is mostly Bun's own executable, the pages of it the process has run.

| process | RSS, median (range) | anonymous | file-backed | target |
|---|---|---|---|---|
${rows.join('\n')}

The gap between the node and its JIT-off row is JSC's JIT: the baseline tier's pages of Bun's
executable (most of the file-backed difference) and the optimising tier (\`BUN_JSC_useDFGJIT=0\`
takes about 2 MB off). Start-up parses no schema text (\`a2a.proto\` ships parsed, resolved on
first use) and signs the card on its first read, so \`BUN_JSC_reportDFGCompileTimes=1 bun node/main.ts --name ${values.name}\`
lists a handful of functions only: TypeBox's hash table built when it loads (a dependency; it
engages the optimising tier on its own) and the JSON guards reading the fleet's key ring. The rest
is the modules (Elysia with TypeBox about 12 MB, \`node:http2\` for gRPC about 5 MB) and the
started servers and stores (the node less its modules-loaded row, about 10 MB).`,
);
