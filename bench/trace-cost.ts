/**
 * @module bench/trace-cost — what tracing one call costs the caller, in process: `tracedCall`
 * around a call that answers at once, 32 in flight with a turn of the event loop between calls,
 * into a trace store on a file (as the hub's) and in memory, against the bare call. Prints CPU
 * µs per call (least and median of 5 runs) and the main thread's wall time per call.
 *
 * Usage: bun bench/trace-cost.ts [--tree <dir>] (another source tree, to compare two side by side)
 */

import { Database } from 'bun:sqlite';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';

const { values } = parseArgs({ options: { tree: { type: 'string' } } });
const tree = resolve(values.tree ?? join(import.meta.dir, '..'));
const { createTraceStore } = await import(join(tree, 'lib/fleet/trace.ts'));
const { tracedCall } = await import(join(tree, 'lib/fleet/traced-call.ts'));
const dir = mkdtempSync(join(tmpdir(), 'lume-a2a-trace-cost-'));
const cpu = () => {
  const u = process.cpuUsage();
  return u.user + u.system;
};
type Meter = { answerBytes?: number };
const answer = async (m: Meter) => {
  m.answerBytes = 100;
  return { ok: true as const, result: { a: 1 } };
};
const names = { from: 'a2a', to: 'scanner', capability: 'scanner.status' };
const turn = () => new Promise((r) => setImmediate(r));

async function run(call: () => Promise<unknown>, n: number): Promise<[number, number]> {
  const c0 = cpu();
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: 32 }, async () => {
      for (let i = 0; i < n / 32; i++) await call(), await turn();
    }),
  );
  return [(cpu() - c0) / n, ((performance.now() - t0) * 1000) / n];
}

async function measure(label: string, call: () => Promise<unknown>) {
  await run(call, 16_000);
  const runs: [number, number][] = [];
  for (let i = 0; i < 5; i++) runs.push(await run(call, 32_000));
  const sorted = (k: 0 | 1) => runs.map((r) => r[k]).sort((a, b) => a - b);
  console.log(
    `${label.padEnd(34)} CPU µs/call least ${sorted(0)[0]!.toFixed(1)}, median ${sorted(0)[2]!.toFixed(1)}; main thread µs/call median ${sorted(1)[2]!.toFixed(1)}`,
  );
}

await measure('bare call', () => answer({}));
for (const where of ['file', 'memory'] as const) {
  const db = new Database(where === 'file' ? join(dir, 'trace.sqlite') : ':memory:', {
    create: true,
    strict: true,
  });
  const store = createTraceStore(db);
  await measure(`traced, trace store on ${where}`, () =>
    tracedCall(store, names, answer, Date.now, { carriesSpan: true }),
  );
  store.flush();
  store.close?.();
  db.close();
}
console.log(`tree ${tree}`);
rmSync(dir, { recursive: true, force: true });
