/**
 * @module resolve-exec-caps — the executor's capabilities (`exec.submit`, `exec.status`,
 * `exec.cancel`) for resolve's catalog. None is read-only, so no text message picks one and none
 * counts as a snapshot tool.
 */

import type { ArgSpec, Capability } from '../../lib/catalog/catalog.ts';
import { capability } from '../../lib/catalog/capability.ts';
import { execError, type Executor } from './executor.ts';
import type { Job } from './jobs.ts';

const MAX_PROMPT = 4000;

/** `executor` is undefined when the node has no data folder; the capabilities then answer EXECUTOR_UNAVAILABLE. */
export function execCapabilities(executor: Executor | undefined, recipes: readonly { name: string; description: string }[]): Capability[] {
  const exec = () => executor ?? (() => { throw execError('EXECUTOR_UNAVAILABLE', 'resolve was started without a data folder, so it runs no jobs'); })();
  const jobId = { type: 'string', description: 'The id exec.submit returned', required: true, maxLength: 64 } satisfies ArgSpec;
  const jobLine = ({ job }: { job: Job }) => `job ${job.job_id} (${job.recipe}) ${job.state}${job.error ? `: ${job.error}` : ''}`;
  return [
    capability({
      id: 'exec.submit',
      name: 'Submit a job',
      description: `Starts a job from the executor's allow-list of recipes and answers its job_id at once. The prompt picks a recipe by keyword unless recipe names one. Recipes: ${recipes.map((r) => `${r.name} (${r.description})`).join('; ')}.`,
      tags: ['executor', 'jobs'],
      examples: ['{"skill":"exec.submit","args":{"prompt":"summarise the git history"}}'],
      keywords: [],
      readOnly: false,
      args: {
        prompt: { type: 'string', description: `What to do, at most ${MAX_PROMPT} characters; never becomes a command argument`, required: true, maxLength: MAX_PROMPT },
        recipe: { type: 'string', description: `A recipe name: ${recipes.map((r) => r.name).join(', ')}`, maxLength: 64 },
      },
      run: (args) => exec().submit(args.prompt, args.recipe),
      summarize: (r) => `job ${r.job_id} running recipe ${r.recipe}`,
    }),
    capability({
      id: 'exec.status',
      name: 'Job status',
      description: 'A job\'s state (running, succeeded, failed, canceled), pid, exit code, output (capped), progress and error.',
      tags: ['executor', 'jobs'],
      keywords: [],
      readOnly: false,
      args: { job_id: jobId },
      run: (args) => ({ job: exec().status(args.job_id) }),
      summarize: jobLine,
    }),
    capability({
      id: 'exec.cancel',
      name: 'Cancel a job',
      description: 'Ends a running job\'s process and its children and marks it canceled; a finished job stays as it finished.',
      tags: ['executor', 'jobs'],
      keywords: [],
      readOnly: false,
      args: { job_id: jobId },
      run: async (args) => ({ job: await exec().cancel(args.job_id) }),
      summarize: jobLine,
    }),
  ];
}
