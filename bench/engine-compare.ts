/**
 * @module bench/engine-compare — the task engine's CPU per SendMessage, in process (no HTTP, no
 * load generator), in two source trees side by side: each round runs one child process per tree
 * that drives the v1.0 SendMessage operation (lib/a2a/operations.ts, the same call in both trees)
 * over a JSON-file task store, 32 sends at a time, and reports its own CPU time per send. With
 * nothing else in the process, a refactor of the engine shows as a ratio that the machine's other
 * load disturbs less than it disturbs the HTTP benchmark.
 *
 * Usage: bun bench/engine-compare.ts --before <dir> [--sends 20000] [--rounds 6]
 */

import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: {
    before: { type: 'string' },
    sends: { type: 'string', default: '20000' },
    rounds: { type: 'string', default: '6' },
    child: { type: 'string' },
  },
});
const sends = Number(values.sends);

if (values.child) {
  // One tree's engine, driven in this process; prints "CPU <µs per send>".
  const tree = resolve(values.child);
  const { TaskEngine } = await import(join(tree, 'lib/a2a/engine/engine.ts'));
  // The JSON-file store moved to its own module; older trees export it from task-store.ts.
  const { existsSync } = await import('node:fs');
  const storeModule = existsSync(join(tree, 'lib/a2a/store/files-store.ts'))
    ? 'lib/a2a/store/files-store.ts'
    : 'lib/a2a/store/task-store.ts';
  const { FileTaskStore } = await import(join(tree, storeModule));
  const { v1Operations } = await import(join(tree, 'lib/a2a/operations.ts'));
  const dir = mkdtempSync(join(tmpdir(), 'lume-a2a-engine-'));
  const log = () => {};
  const store = FileTaskStore.open({ dir, log });
  const engine = new TaskEngine({
    store,
    log,
    inputModes: ['text/plain'],
    outputModes: ['text/plain'],
    agent: {
      handle(ctx: { working(): void; artifact(a: unknown, o: unknown): void; complete(): void }) {
        ctx.working();
        ctx.artifact(
          { artifactId: 'a1', name: 'echo', parts: [{ text: 'echo', mediaType: 'text/plain' }] },
          { lastChunk: true },
        );
        ctx.complete();
      },
    },
  });
  const send = v1Operations(engine, true).SendMessage;
  const caller = { kind: 'anonymous' };
  let n = 0;
  const one = () =>
    send(
      {
        message: {
          messageId: `m${n++}`,
          role: 'ROLE_USER',
          parts: [{ text: 'hello', mediaType: 'text/plain' }],
        },
      },
      false,
      caller,
    );
  const run = async (count: number) => {
    for (let i = 0; i < count; i += 32) await Promise.all(Array.from({ length: 32 }, one));
  };
  await run(2000); // warm-up
  await store.flush();
  const t0 = process.cpuUsage();
  await run(sends);
  await store.flush();
  const used = process.cpuUsage(t0);
  console.log(`CPU ${((used.user + used.system) / sends).toFixed(2)}`);
  await store.close();
  rmSync(dir, { recursive: true, force: true });
  process.exit(0);
}

if (!values.before) {
  console.error('usage: bun bench/engine-compare.ts --before <dir> [--sends 20000] [--rounds 6]');
  process.exit(2);
}
const trees = [
  { name: 'before', dir: resolve(values.before) },
  { name: 'this tree', dir: join(import.meta.dir, '..') },
];
const load0 = loadavg()[0]!;
const cpu = new Map<string, number[]>(trees.map((t) => [t.name, []]));
for (let round = 0; round < Number(values.rounds); round++) {
  // Alternate which tree goes first, so a drift in the machine's load favours neither.
  for (const t of round % 2 ? [...trees].reverse() : trees) {
    const proc = Bun.spawn(['bun', import.meta.path, '--child', t.dir, '--sends', String(sends)], {
      cwd: t.dir,
      stdout: 'pipe',
      stderr: 'inherit',
    });
    const out = await new Response(proc.stdout).text();
    await proc.exited;
    const perSend = Number(/CPU ([\d.]+)/.exec(out)?.[1]);
    cpu.get(t.name)!.push(perSend);
    console.log(`round ${round + 1} ${t.name}: ${perSend} µs CPU per send`);
  }
}
const load1 = loadavg()[0]!;
const least = (name: string) => Math.min(...cpu.get(name)!);
const median = (name: string) => {
  const xs = [...cpu.get(name)!].sort((a, b) => a - b);
  return xs[Math.floor(xs.length / 2)]!;
};
console.log(
  `\nengine CPU per SendMessage (${sends} sends a round, ${values.rounds} rounds): least before ${least('before').toFixed(2)} µs, this tree ${least('this tree').toFixed(2)} µs (ratio ${(least('this tree') / least('before')).toFixed(3)}); median before ${median('before').toFixed(2)}, this tree ${median('this tree').toFixed(2)} (ratio ${(median('this tree') / median('before')).toFixed(3)}); load average ${load0.toFixed(1)} → ${load1.toFixed(1)} on ${navigator.hardwareConcurrency} cores`,
);
