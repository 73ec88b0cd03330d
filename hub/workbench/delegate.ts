/**
 * @module hub/delegate — task.delegate: the hub hands a job to the executor (`exec.submit` on
 * `resolve`, over the signed channel) and keeps its own task `working` with `{executor, job_id}`.
 * Reading the task advances it lazily by asking `exec.status`; canceling it cancels the job. The
 * hub is the only writer of its task state, the executor never calls back, and nothing here runs
 * the job itself.
 */

import type { AgentContext, TaskUpdater } from '../../lib/a2a/agent.ts';
import type { Task } from '../../lib/a2a/types.ts';
import type { FleetInvoker } from '../../lib/fleet/invoke.ts';
import { isJobStatus, isObject, isString, isSubmitted, readFrom } from './fleet-answers.ts';

interface Delegation {
  executor: string;
  job_id: string;
  recipe?: string;
  prompt: string;
  submittedAt: string;
}

/** A delegation request waiting for its executor: what the client asked. */
interface DelegationRequest {
  prompt: string;
  recipe?: string;
}

// The task's metadata is the hub's own, but typed as any JSON: read it through checks.
const isDelegation = (d: unknown): d is Delegation => isObject(d) && isString(d.job_id) && isString(d.executor);
const isRequest = (r: unknown): r is DelegationRequest => isObject(r) && isString(r.prompt) && (r.recipe === undefined || isString(r.recipe));
const delegationOf = (task: Readonly<Task>): Delegation | undefined => {
  const d = task.metadata?.delegation;
  return isDelegation(d) ? d : undefined;
};

export function createDelegator(invoker: FleetInvoker, executor = 'resolve') {
  return {
    /** Submits a job; an executor that cannot take it leaves the task waiting for input, with the reason. */
    async submit(ctx: AgentContext, prompt: string, recipe?: string): Promise<void> {
      if (!prompt.trim()) return ctx.requireInput('task.delegate needs a prompt: what should the executor do?');
      const r = await readFrom(invoker, executor, 'exec.submit', isSubmitted, { prompt, ...(recipe ? { recipe } : {}) }, 30_000);
      if (!r.ok) {
        ctx.setMetadata({ delegationRequest: { prompt, ...(recipe ? { recipe } : {}) } });
        return ctx.requireInput(`Executor '${executor}' did not take the job (${r.error.code}: ${r.error.message}). Bring it up or name another recipe, then continue this task.`);
      }
      const job = r.result;
      const delegation: Delegation = { executor, job_id: job.job_id, prompt, submittedAt: new Date().toISOString(), ...(job.recipe ? { recipe: job.recipe } : {}) };
      ctx.setMetadata({ delegation });
      ctx.working(`Delegated to ${executor}: job ${job.job_id}${job.recipe ? ` (${job.recipe})` : ''}`);
    },

    /** Lazy advancement on read; an executor that does not answer leaves the task working. */
    async observe(task: TaskUpdater): Promise<void> {
      const d = delegationOf(task.task);
      if (!d) return;
      const r = await readFrom(invoker, d.executor, 'exec.status', isJobStatus, { job_id: d.job_id }, 5_000);
      if (!r.ok) return;
      const job = r.result.job;
      if (!job) return;
      if (job.progress !== undefined) task.setMetadata({ progress: job.progress });
      if (job.state === 'succeeded') {
        task.artifact({
          name: 'job-output',
          parts: [{ text: job.output ?? '', mediaType: 'text/plain' }, { data: { job_id: job.job_id, recipe: job.recipe, exitCode: job.exitCode, outputTruncated: job.outputTruncated ?? false }, mediaType: 'application/json' }],
        }, { lastChunk: true });
        task.complete(`Executor succeeded (job ${job.job_id})`);
      } else if (job.state === 'failed') task.fail(`Executor failed (job ${job.job_id})${job.error ? `: ${job.error}` : ''}`);
      else if (job.state === 'canceled') task.status('canceled', `Executor canceled job ${job.job_id}`);
    },

    /** Canceling the hub task cancels the job (best effort: the hub task is canceled either way). */
    async cancel(task: Readonly<Task>): Promise<void> {
      const d = delegationOf(task);
      if (d) await invoker.invoke(d.executor, 'exec.cancel', { job_id: d.job_id }, 10_000);
    },

    /** Whether a task a restart found working is a submitted job that `observe` can still settle. */
    resumable(task: Readonly<Task>): boolean {
      return delegationOf(task) !== undefined;
    },

    /** The request an interrupted delegation was waiting to retry, if any. */
    pending(task: Readonly<Task>): DelegationRequest | undefined {
      if (delegationOf(task)) return undefined;
      const request = task.metadata?.delegationRequest;
      return isRequest(request) ? request : undefined;
    },
  };
}

export type Delegator = ReturnType<typeof createDelegator>;
