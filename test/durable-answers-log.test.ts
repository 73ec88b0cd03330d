/**
 * The durability check of test/durable-answers.test.ts over the task log (TASK_STORE=log): a real
 * scanner under concurrent blocking and `returnImmediately` SendMessage load, killed with SIGKILL
 * the moment an answer arrives, three times; after each restart (which replays the records the
 * index had not committed) every acknowledged task reads back at least as far as its answer said.
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
    env: { TASK_STORE: 'log' },
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
