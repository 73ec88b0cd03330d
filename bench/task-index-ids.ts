/**
 * @module bench/task-index-ids — the JSON-file store's SQLite index (lib/a2a/store/task-index.ts) with
 * random task ids (UUIDv4) and time-ordered ones (UUIDv7, what newTaskId makes now): CPU per
 * task of a mark and its clean, `--batch` tasks per event-loop turn (one commit each), on an
 * index that already holds `--prefill` rows, alternating the two kinds over `--rounds`.
 *
 * Usage: bun bench/task-index-ids.ts [--tasks 30000] [--batch 12] [--prefill 100000] [--rounds 2]
 */

import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { TaskIndex } from '../lib/a2a/store/task-index.ts';

const { values } = parseArgs({
  options: {
    tasks: { type: 'string', default: '30000' },
    batch: { type: 'string', default: '12' },
    prefill: { type: 'string', default: '100000' },
    rounds: { type: 'string', default: '2' },
  },
});
const tasks = Number(values.tasks);
const batch = Number(values.batch);
const kinds = { v4: () => crypto.randomUUID(), v7: () => Bun.randomUUIDv7() };
const meta = () => ({
  creator: 'anonymous',
  contextId: crypto.randomUUID(),
  state: 'completed' as const,
  ts: Date.now(),
});

async function run(kind: keyof typeof kinds): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), 'lume-a2a-index-'));
  const index = new TaskIndex(join(dir, 'index.sqlite'));
  const id = kinds[kind];
  index.putClean(Array.from({ length: Number(values.prefill) }, () => [id(), meta()] as const));
  const t0 = process.cpuUsage();
  for (let i = 0; i < tasks; i += batch) {
    const ids = Array.from({ length: batch }, id);
    await Promise.all(ids.map((x) => index.mark(x, meta())));
    for (const x of ids) index.clean(x);
  }
  index.close();
  const used = process.cpuUsage(t0);
  rmSync(dir, { recursive: true, force: true });
  return (used.user + used.system) / tasks;
}

const load0 = loadavg()[0]!;
const cpu: Record<string, number[]> = { v4: [], v7: [] };
for (let r = 0; r < Number(values.rounds); r++)
  for (const k of (r % 2 ? ['v7', 'v4'] : ['v4', 'v7']) as (keyof typeof kinds)[])
    cpu[k]!.push(await run(k));
const least = (k: string) => Math.min(...cpu[k]!).toFixed(1);
console.log(
  `index CPU per task (mark + clean, ${batch} per commit, ${values.prefill} rows before): UUIDv4 ${least('v4')} µs, UUIDv7 ${least('v7')} µs (least of ${values.rounds} rounds; load average ${load0.toFixed(1)} → ${loadavg()[0]!.toFixed(1)})`,
);
