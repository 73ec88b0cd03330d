/**
 * @module bench/task-store-cost — the embedded task stores' own CPU per stored task, in process (no
 * HTTP, no engine): each round runs one child process per store (the JSON files, the task log)
 * that saves `--tasks` new records of the size scanner stores, 32 per event-loop turn as a node
 * under load does (with `--updates n`, each saved n more times in later turns), and reports its CPU time per task (user
 * + system, all threads). The stores alternate round by round; the folder is the temporary
 * directory (TMPDIR; ext4 by default here).
 *
 * Usage: bun bench/task-store-cost.ts [--tasks 20000] [--rounds 4] [--updates 0]
 */

import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type { TaskState } from '../lib/a2a/types.ts';

const { values } = parseArgs({
  options: {
    tasks: { type: 'string', default: '20000' },
    rounds: { type: 'string', default: '4' },
    /** Saves after the first (a task that changes in a later turn: the file store's replace). */
    updates: { type: 'string', default: '0' },
    child: { type: 'string' },
  },
});
const TASKS = Number(values.tasks);
const UPDATES = Number(values.updates);

if (values.child) {
  const { FileTaskStore } = await import('../lib/a2a/store/files-store.ts');
  const { LogTaskStore } = await import('../lib/a2a/store/log-store.ts');
  const { newTaskId } = await import('../lib/a2a/store/task-store.ts');
  const dir = mkdtempSync(join(tmpdir(), 'lume-a2a-store-cost-'));
  const opts = { dir, log: () => {}, maxStored: TASKS * 2 };
  const store = values.child === 'log' ? LogTaskStore.open(opts) : FileTaskStore.open(opts);
  const text = 'which sector moved today? '.repeat(8);
  const cpu0 = process.cpuUsage();
  for (let i = 0; i < TASKS; i += 32) {
    const batch = Array.from({ length: Math.min(32, TASKS - i) }, () => {
      const id = newTaskId();
      const contextId = crypto.randomUUID();
      const now = new Date().toISOString();
      return {
        task: {
          id,
          contextId,
          status: { state: (UPDATES ? 'working' : 'completed') as TaskState, timestamp: now },
          artifacts: [{ artifactId: 'a1', parts: [{ data: { sectors: [{ name: 'Energy' }] } }] }],
          history: [
            { messageId: id, role: 'user' as const, parts: [{ text }], taskId: id, contextId },
          ],
        },
        push: [],
      };
    });
    await Promise.all(batch.map((r) => store.save(r)));
    for (let u = 0; u < UPDATES; u++) {
      const state: TaskState = u === UPDATES - 1 ? 'completed' : 'working';
      for (const r of batch) r.task.status = { state, timestamp: new Date().toISOString() };
      await Promise.all(batch.map((r) => store.save(r)));
    }
  }
  await store.close();
  const used = process.cpuUsage(cpu0);
  console.log(`CPU ${((used.user + used.system) / TASKS).toFixed(1)}`);
  rmSync(dir, { recursive: true, force: true });
  process.exit(0);
}

const load0 = loadavg()[0]!;
const cpu: Record<string, number[]> = { files: [], log: [] };
for (let r = 0; r < Number(values.rounds); r++)
  for (const s of r % 2 ? ['log', 'files'] : ['files', 'log']) {
    const args = ['--child', s, '--tasks', String(TASKS), '--updates', String(UPDATES)];
    const p = Bun.spawn(['bun', import.meta.path, ...args], {
      stdout: 'pipe',
      stderr: 'inherit',
    });
    const out = await new Response(p.stdout).text();
    await p.exited;
    const us = Number(/CPU ([\d.]+)/.exec(out)?.[1]);
    cpu[s]!.push(us);
    console.log(`round ${r + 1} ${s}: ${us} µs of CPU per task (${1 + UPDATES} saves)`);
  }
const least = (xs: number[]) => Math.min(...xs);
console.log(
  `\nleast of the rounds: JSON files ${least(cpu.files!)} µs, task log ${least(cpu.log!)} µs per task (${(least(cpu.files!) / least(cpu.log!)).toFixed(1)}x); load average ${load0.toFixed(1)} → ${loadavg()[0]!.toFixed(1)}, folder under ${tmpdir()}`,
);
