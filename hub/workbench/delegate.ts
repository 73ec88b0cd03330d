/**
 * @module hub/workbench/delegate — task.delegate: the hub hands a job to an executor (`exec.submit` on a
 * fleet node that offers `exec.*`, `resolve` by default, over the signed channel) and keeps its
 * own task `working` with `{executor, job_id}`. Reading the task advances it lazily by asking
 * `exec.status`; canceling it cancels the job. A delegation can continue an earlier one
 * (`taskId`): the earlier turns travel with the new job, nothing is replaced. The hub is the only
 * writer of its task state, the executor never calls back, and nothing here runs the job itself.
 * This file wires the steps: hub/workbench/delegate-submit.ts, delegate-observe.ts, and the
 * record on the task, delegation-record.ts.
 */

import type { AgentContext, TaskUpdater } from '../../lib/a2a/agent.ts';
import type { Task } from '../../lib/a2a/types.ts';
import { observeJob } from './delegate-observe.ts';
import { type DelegatorDeps, submitJob } from './delegate-submit.ts';
import { type DelegateArgs, delegationOf, isRequest } from './delegation-record.ts';

export type { DelegateArgs, Delegation } from './delegation-record.ts';
export type { DelegatorDeps } from './delegate-submit.ts';

export function createDelegator(deps: DelegatorDeps) {
  const { invoker } = deps;
  return {
    /**
     * Submits a job. A name that is no executor, or a task that cannot be continued, rejects the
     * task with a code; an executor that cannot take the job leaves the task waiting for input,
     * with the reason, so continuing it retries.
     */
    submit: (ctx: AgentContext, args: DelegateArgs): Promise<void> => submitJob(deps, ctx, args),

    /** Lazy advancement on read; an executor that does not answer leaves the task working. */
    observe: (task: TaskUpdater): Promise<void> => observeJob(invoker, task),

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
    pending(task: Readonly<Task>): DelegateArgs | undefined {
      if (delegationOf(task)) return undefined;
      const request = task.metadata?.delegationRequest;
      return isRequest(request) ? request : undefined;
    },

    /** Whether the task already has a job (a further message must not start another in its place). */
    delegated: (task: Readonly<Task>): boolean => delegationOf(task) !== undefined,
  };
}

export type Delegator = ReturnType<typeof createDelegator>;
