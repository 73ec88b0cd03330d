/**
 * @module bench/durable-answers — the kill -9 check of test/durable-answers-log.test.ts at length: a
 * real scanner under mixed blocking / `returnImmediately` SendMessage load, killed with SIGKILL on
 * the arrival of an answer, `--rounds` times; after each restart every acknowledged task is read
 * back. Prints how many answers were checked, how many differ (the defect: must be 0) and how
 * many acknowledged non-final tasks the restart failed as documented (TASK_INTERRUPTED).
 *
 * Usage: bun bench/durable-answers.ts [--rounds 20] [--acks 1000] [--clients 32]
 */

import { rmSync } from 'node:fs';
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { killUnderLoad } from '../test/support/kill-under-load.ts';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '20' },
    acks: { type: 'string', default: '1000' },
    clients: { type: 'string', default: '32' },
  },
});
const opts = {
  rounds: Number(values.rounds),
  acksPerRound: Number(values.acks),
  clients: Number(values.clients),
};
const load = loadavg()[0]!.toFixed(1);
const t0 = performance.now();
const r = await killUnderLoad(opts);
rmSync(r.dataDir, { recursive: true, force: true });
const immediate = r.acks.filter((a) => a.immediate).length;
console.log(
  JSON.stringify({
    command: `bun bench/durable-answers.ts --rounds ${opts.rounds} --acks ${opts.acksPerRound} --clients ${opts.clients}`,
    date: new Date().toISOString().slice(0, 10),
    loadAverage: load,
    seconds: Math.round((performance.now() - t0) / 1000),
    kills: opts.rounds,
    answersChecked: r.acks.length,
    returnImmediately: immediate,
    blocking: r.acks.length - immediate,
    inFlightAtKills: r.cut.reduce((a, b) => a + b, 0),
    interruptedAsDocumented: r.interrupted,
    differ: r.differ.length,
  }),
);
if (r.differ.length) {
  console.error(r.differ.slice(0, 20));
  process.exit(1);
}
