/**
 * @module bench/idle-rss — an idle node's resident memory: starts the scanner node as the README
 * starts it (`bun node/main.ts --name scanner`) on a fresh data folder, reads VmRSS (and its
 * anonymous and file-backed parts) from /proc 1 s after it listens, several times, and prints the
 * median against the target (< 60 MB). `--modules` also prints how many source files the process
 * loaded by the time it listened (Bun's `require.cache` has every module, ES ones included).
 *
 * Prints the "Idle node memory" section; `--write` records it in docs/benchmarks.md.
 *
 * Usage: bun bench/idle-rss.ts [--runs 5] [--name scanner] [--write]
 */

import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
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

/** VmRSS, RssAnon and RssFile of `pid` in MB. */
function rssOf(pid: number) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const mb = (key: string) => Number(new RegExp(`${key}:\\s+(\\d+)`).exec(status)![1]) / 1024;
  return { rss: mb('VmRSS'), anon: mb('RssAnon'), file: mb('RssFile') };
}

const readings: ReturnType<typeof rssOf>[] = [];
const load0 = loadavg()[0]!;
for (let i = 0; i < Number(values.runs); i++) {
  const node = await spawnServer(
    root,
    ['bun', 'node/main.ts', '--name', values.name, '--port', '0'],
    {
      DATA_DIR: mkdtempSync(join(tmp, 'data-')),
      LOG_LEVEL: 'warn',
    },
  );
  await Bun.sleep(1000); // not synchronisation: start-up garbage settles before the reading
  const r = rssOf(node.proc.pid);
  readings.push(r);
  console.log(
    `run ${i + 1}: RSS ${r.rss.toFixed(1)} MB (anonymous ${r.anon.toFixed(1)}, file-backed ${r.file.toFixed(1)})`,
  );
  node.proc.kill();
  await node.proc.exited;
}
rmSync(tmp, { recursive: true, force: true });
const sorted = readings.map((r) => r.rss).sort((a, b) => a - b);
const median = sorted[Math.floor(sorted.length / 2)]!;
const mid = readings.find((r) => r.rss === median)!;
const load1 = loadavg()[0]!;
const mb = (n: number) => n.toFixed(1);
const verdict = median < TARGET_MB ? 'met' : 'missed';
console.log(
  `idle ${values.name} node RSS: median ${mb(median)} MB of ${sorted.length} (range ${mb(sorted[0]!)}–${mb(sorted.at(-1)!)}); target < ${TARGET_MB} MB: ${verdict}; load average ${load0.toFixed(2)} → ${load1.toFixed(2)}`,
);
reportSection(
  'Idle node memory',
  `Command: \`bun bench/idle-rss.ts --runs ${values.runs}${values.name !== 'scanner' ? ` --name ${values.name}` : ''}\` (${new Date().toISOString().slice(0, 10)}, Bun ${Bun.version}, ${navigator.hardwareConcurrency} cores; load average ${load0.toFixed(1)} → ${load1.toFixed(1)}).

The ${values.name} node as the README starts it (\`bun node/main.ts --name ${values.name}\`, from source, no model, no mesh), a fresh data folder each run, its resident memory read from /proc 1 s after it listens; the median of the runs.

| node | RSS, median (range) | anonymous | file-backed (Bun's executable, mapped) | target |
|---|---|---|---|---|
| ${values.name}, idle | ${mb(median)} MB (${mb(sorted[0]!)}–${mb(sorted.at(-1)!)}) | ${mb(mid.anon)} MB | ${mb(mid.file)} MB | < ${TARGET_MB} MB: ${verdict} |`,
);
