/**
 * @module bench/list-page-measure — what the `ListTasks` page budget costs per task: the walk that
 * measures a task for the budget (lib/a2a/store/list-page.ts `listedSize`) against the wire
 * conversion and `JSON.stringify` the answer makes of the same task anyway, alternating the two
 * over `--rounds` in one run and printing each's µs per task and their ratio.
 *
 * Usage: bun bench/list-page-measure.ts [--calls 200000] [--rounds 3]
 */

import { parseArgs } from 'node:util';
import { listedSize } from '../lib/a2a/store/list-page.ts';
import type { Task } from '../lib/a2a/types.ts';
import { taskToV1 } from '../lib/a2a/wire/v1.ts';

const { values } = parseArgs({
  options: { calls: { type: 'string' }, rounds: { type: 'string' } },
});
const calls = Number(values.calls ?? 200_000);
const rounds = Number(values.rounds ?? 3);

// A typical finished task: four history messages and one data artifact (left out of the page).
const id = crypto.randomUUID();
const task = {
  id,
  contextId: 'ctx',
  status: {
    state: 'completed',
    timestamp: new Date().toISOString(),
    message: { messageId: 'done', role: 'agent', parts: [{ text: 'done' }] },
  },
  artifacts: [
    {
      artifactId: 'rows',
      parts: [{ data: { rows: Array.from({ length: 10 }, (_, i) => ({ i, name: `n${i}` })) } }],
    },
  ],
  history: Array.from({ length: 4 }, (_, i) => ({
    messageId: `m${i}`,
    role: i % 2 ? 'agent' : 'user',
    parts: [{ text: `hello there ${i}` }],
    taskId: id,
    contextId: 'ctx',
  })),
} as unknown as Task;

let sink = 0;
const time = (f: () => number): number => {
  const t = performance.now();
  for (let i = 0; i < calls; i++) sink += f();
  return ((performance.now() - t) * 1000) / calls;
};
for (let r = 1; r <= rounds; r++) {
  const measure = time(() => listedSize(task, false));
  const answer = time(() => JSON.stringify(taskToV1(task, false)).length);
  console.log(
    `round ${r}: measure ${measure.toFixed(2)} µs, conversion + stringify ${answer.toFixed(2)} µs, ratio ${(measure / answer).toFixed(2)}`,
  );
}
if (sink === 0) console.log('(nothing measured)');
