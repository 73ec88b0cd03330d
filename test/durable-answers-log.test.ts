/**
 * No answer reports a state that is not stored: a real node process (scanner, on the task log)
 * under concurrent SendMessage load, blocking and `returnImmediately` mixed, is killed with
 * SIGKILL the moment an answer arrives, three times over; after each restart (which replays the
 * lines the index had not committed) every task any answer acknowledged is read back, and none
 * reads as less than what its answer said (a task answered `completed` that reads back `failed`
 * by the restart, or not at all, is the defect). `bun bench/durable-answers.ts` runs the same
 * check at length.
 */

import { afterAll, expect, setDefaultTimeout, test } from 'bun:test';
import { existsSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { killUnderLoad } from './support/kill-under-load.ts';

setDefaultTimeout(20_000); // per file (Bun scopes it so): real servers and processes are slow on a busy machine

let dataDir: string | undefined;
afterAll(() => {
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

test('kill -9 under load on the task log: every acknowledged answer reads back as stored after the restart', async () => {
  const report = await killUnderLoad({
    rounds: 3,
    acksPerRound: 300,
    clients: 24,
  });
  dataDir = report.dataDir;
  for (const cut of report.cut) expect(cut).toBeGreaterThan(0);
  expect(report.acks.some((a) => !a.immediate)).toBe(true);
  expect(report.acks.some((a) => a.immediate)).toBe(true);
  expect(report.differ).toEqual([]);
  // The tasks lie in the log's segments, not in a file each.
  const tasks = join(report.dataDir, 'scanner', 'tasks');
  expect(readdirSync(join(tasks, 'segments')).length).toBeGreaterThan(0);
  expect(existsSync(join(tasks, 'index.sqlite'))).toBe(false);
}, 120_000);
