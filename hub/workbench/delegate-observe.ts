/**
 * @module hub/workbench/delegate-observe — a delegation advanced lazily, when its task is read:
 * the executor's `exec.status` settles the hub's task (output artifact, failure or cancel); an
 * executor that does not answer leaves it working.
 */

import type { TaskUpdater } from '../../lib/a2a/agent.ts';
import type { FleetInvoker } from '../../lib/fleet/invoke.ts';
import { delegationOf } from './delegation-record.ts';
import { isJobStatus, readFrom } from './fleet-answers.ts';

/** Lazy advancement on read; an executor that does not answer leaves the task working. */
export async function observeJob(invoker: FleetInvoker, task: TaskUpdater): Promise<void> {
  const d = delegationOf(task.task);
  if (!d) return;
  const r = await readFrom(
    invoker,
    d.executor,
    'exec.status',
    isJobStatus,
    { job_id: d.job_id },
    5_000,
  );
  if (!r.ok) return;
  const job = r.result.job;
  if (!job) return;
  if (job.progress !== undefined) task.setMetadata({ progress: job.progress });
  if (job.state === 'succeeded') {
    task.artifact(
      {
        name: 'job-output',
        parts: [
          { text: job.output ?? '', mediaType: 'text/plain' },
          {
            data: {
              job_id: job.job_id,
              recipe: job.recipe,
              exitCode: job.exitCode,
              outputTruncated: job.outputTruncated ?? false,
            },
            mediaType: 'application/json',
          },
        ],
      },
      { lastChunk: true },
    );
    task.complete();
  } else if (job.state === 'failed')
    task.fail(`Executor failed (job ${job.job_id})${job.error ? `: ${job.error}` : ''}`);
  else if (job.state === 'canceled') task.status('canceled', `Executor canceled job ${job.job_id}`);
}
