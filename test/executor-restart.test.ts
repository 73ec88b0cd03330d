/**
 * The executor restarted mid-job: the node stops while a job runs, a new one starts on the same
 * data folder, and the job reads failed with "executor restarted"; its process group is ended and
 * a job that had finished stays as it finished.
 */

import { afterAll, expect, setDefaultTimeout, test } from 'bun:test';
import { rmSync } from 'node:fs';
import { exists, running, startExecutor, type ExecutorNode } from './support/executor.ts';

setDefaultTimeout(20_000); // per file (Bun scopes it so): real servers and processes are slow on a busy machine

const started: ExecutorNode[] = [];
afterAll(async () => {
  for (const n of started) await n.stop();
  rmSync(started[0]!.dataDir, { recursive: true, force: true });
});

test('a job running when the executor stops reads failed after the restart, its processes gone', async () => {
  const first = await startExecutor();
  started.push(first);
  const finished = await first.waitFor(
    (await first.ok('exec.submit', { prompt: 'x', recipe: 'demo' })).job_id,
    (j) => j.state !== 'running',
  );
  const { job_id } = await first.ok('exec.submit', { prompt: 'x', recipe: 'slow' });
  const mid = await first.waitFor(job_id, (j) => /child \d+/.test(j.output));
  const child = Number(/child (\d+)/.exec(mid.output)![1]);
  await first.stop();

  const second = await startExecutor({ dataDir: first.dataDir });
  started.push(second);
  const after = await second.status(job_id);
  expect({ ...after, endedAt: typeof after.endedAt }).toEqual({
    ...mid,
    state: 'failed',
    error: 'executor restarted',
    endedAt: 'string',
    output: '',
    progress: undefined,
  });
  // The orphaned group was killed by the new executor; each try below is a real status call.
  for (let i = 0; i < 1000 && (running(mid.pid!) || running(child)); i++)
    await second.status(job_id);
  expect([running(mid.pid!), running(child)]).toEqual([false, false]);
  for (let i = 0; i < 1000 && exists(mid.pid!); i++) await second.status(job_id);
  // The first executor saw its child end after the restart; the record keeps the restart's verdict.
  expect((await second.status(job_id)).error).toBe('executor restarted');
  expect(await second.status(finished.job_id)).toEqual(finished);
});
