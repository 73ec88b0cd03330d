/**
 * @module node/resolve/exec-capabilities — the executor's capabilities (`exec.submit`, `exec.status`,
 * `exec.cancel`) for resolve's catalog. None is read-only, so no text message picks one and none
 * counts as a snapshot tool.
 */

import type { ArgSpec, CallContext, Capability } from '../../lib/catalog/catalog.ts';
import { ownerKey } from '../../lib/auth/principal.ts';
import { capability } from '../../lib/catalog/capability.ts';
import { ok, type Result } from '../../lib/errors/result.ts';
import { execError, type ExecFailure, type Executor } from './executor.ts';
import type { Job } from './jobs.ts';
import type { PriorTurn } from './model.ts';

const MAX_PROMPT = 4000;
/** Earlier turns of a continued delegation, as a JSON string (catalog arguments are scalars). */
const MAX_CONTEXT = 16_000;

/** `[{prompt, output}, …]` from the `context` argument, or BAD_CONTEXT. */
function priorTurns(context: string | undefined): Result<PriorTurn[] | undefined, ExecFailure> {
  if (context === undefined) return ok(undefined);
  let parsed: unknown;
  try {
    parsed = JSON.parse(context);
  } catch {
    return execError('BAD_CONTEXT', undefined, 'context');
  }
  const isTurn = (t: unknown): t is PriorTurn =>
    typeof t === 'object' &&
    t !== null &&
    typeof (t as PriorTurn).prompt === 'string' &&
    typeof (t as PriorTurn).output === 'string';
  if (!Array.isArray(parsed) || parsed.length > 20 || !parsed.every(isTurn))
    return execError('BAD_CONTEXT', undefined, 'context');
  return ok(parsed.map((t) => ({ prompt: t.prompt, output: t.output })));
}

/**
 * Who a job counts against: the principal it runs for, whatever path it came by. A fleet node
 * acting for someone (the hub delegating for a console user; the peer routes let only the hub
 * and the ring's relays name one) counts as that someone, so alice's jobs through the hub and
 * her jobs with her own token share one limit, and a node acting for itself counts as itself.
 */
function callerKey(context: CallContext | undefined): string {
  if (!context) return 'anonymous';
  return context.caller.kind === 'node' && context.onBehalfOf
    ? context.onBehalfOf
    : ownerKey(context.caller);
}

/** `executor` is undefined when the node has no data folder; the capabilities then answer EXECUTOR_UNAVAILABLE. */
export function execCapabilities(
  executor: Executor | undefined,
  recipes: readonly { name: string; description: string }[],
): Capability[] {
  const unavailable = () =>
    execError(
      'EXECUTOR_UNAVAILABLE',
      'resolve was started without a data folder, so it runs no jobs',
    );
  /** A job's answer: `{job}`, the shape exec.status and exec.cancel have always had. */
  const asJob = (r: Result<Job, ExecFailure>) => (r.ok ? ok({ job: r.result }) : r);
  const jobId = {
    type: 'string',
    description: 'The id exec.submit returned',
    required: true,
    maxLength: 64,
  } satisfies ArgSpec;
  const jobLine = ({ job }: { job: Job }) =>
    `job ${job.job_id} (${job.recipe}) ${job.state}${job.error ? `: ${job.error}` : ''}`;
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
        prompt: {
          type: 'string',
          description: `What to do, at most ${MAX_PROMPT} characters; never becomes a command argument`,
          required: true,
          maxLength: MAX_PROMPT,
        },
        recipe: {
          type: 'string',
          description: `A recipe name: ${recipes.map((r) => r.name).join(', ')}`,
          maxLength: 64,
        },
        model: {
          type: 'string',
          description: 'A model name for the model recipe (picks that recipe when none is named)',
          maxLength: 128,
        },
        context: {
          type: 'string',
          description: `Earlier turns of a continued task, a JSON list of {prompt, output} (at most 20, ${MAX_CONTEXT} characters); the model recipe sends them before the prompt`,
          maxLength: MAX_CONTEXT,
        },
      },
      run: (args, _signal, context) => {
        const prior = priorTurns(args.context);
        if (!prior.ok) return prior;
        if (!executor) return unavailable();
        return executor.submit(args.prompt, args.recipe, {
          ...(args.model !== undefined ? { model: args.model } : {}),
          ...(prior.result ? { prior: prior.result } : {}),
          caller: callerKey(context),
        });
      },
      summarize: (r) => `job ${r.job_id} running recipe ${r.recipe}`,
    }),
    capability({
      id: 'exec.status',
      name: 'Job status',
      description:
        "A job's state (running, succeeded, failed, canceled), pid, exit code, output (capped), progress and error.",
      tags: ['executor', 'jobs'],
      keywords: [],
      readOnly: false,
      args: { job_id: jobId },
      run: (args) => (executor ? asJob(executor.status(args.job_id)) : unavailable()),
      summarize: jobLine,
    }),
    capability({
      id: 'exec.cancel',
      name: 'Cancel a job',
      description:
        "Ends a running job's process and its children and marks it canceled; a finished job stays as it finished.",
      tags: ['executor', 'jobs'],
      keywords: [],
      readOnly: false,
      args: { job_id: jobId },
      run: async (args) => (executor ? asJob(await executor.cancel(args.job_id)) : unavailable()),
      summarize: jobLine,
    }),
  ];
}
