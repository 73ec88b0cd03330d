/**
 * @module hub/workbench/delegate-submit — a delegation's first step: the executor checked (a fleet
 * node that offers exec.submit), the earlier turns of a continued delegation read from its task,
 * and the job submitted on behalf of the caller; the hub's task then says `working` with its job.
 */

import type { AgentContext } from '../../lib/a2a/agent.ts';
import { ownerKey, type Principal } from '../../lib/auth/principal.ts';
import { failureParts } from '../../lib/errors/as-data.ts';
import type { Failure } from '../../lib/errors/result.ts';
import {
  contextOf,
  type DelegateArgs,
  type Delegation,
  delegationOf,
  outputOf,
  type Turn,
} from './delegation-record.ts';
import { isSubmitted, readFrom } from './fleet-answers.ts';
import type { Task } from '../../lib/a2a/types.ts';
import type { FleetInvoker } from '../../lib/fleet/invoke.ts';

/** A fleet member as the fleet view sees it: enough to tell an executor from other nodes. */
interface MemberView {
  name: string;
  online: boolean;
  skills: { id: string }[];
}

/** What a delegation needs of the hub. */
export interface DelegatorDeps {
  invoker: FleetInvoker;
  /** Names of the fleet's nodes (the hub is not one). */
  nodeNames: () => string[];
  /** The fleet view's nodes, to see which offer `exec.*`. */
  members: () => Promise<MemberView[]>;
  /**
   * Reads one of the hub's own tasks as `caller` (advancing it, as any read does); undefined when
   * there is none or it is another principal's.
   */
  findTask: (id: string, caller: Principal) => Promise<Readonly<Task> | undefined>;
  /** The executor when none is named (default `resolve`). */
  defaultExecutor?: string;
}

const refuse = (ctx: AgentContext, failure: Failure) =>
  ctx.status('rejected', failureParts(failure));

/** Whether `name` may run jobs: a fleet node that, when it answers, offers exec.submit. */
async function executorProblem(deps: DelegatorDeps, name: string): Promise<Failure | undefined> {
  const names = deps.nodeNames();
  if (!names.includes(name))
    return {
      code: 'DELEGATE_UNKNOWN_EXECUTOR',
      message: `No fleet node is named ${JSON.stringify(name.slice(0, 64))}; fleet nodes: ${names.join(', ')}`,
      field: 'executor',
    };
  const member = (await deps.members().catch(() => [])).find((m) => m.name === name);
  // A node that is down may still be an executor: submitting says it is unreachable, and the task waits.
  if (member?.online && !member.skills.some((s) => s.id === 'exec.submit')) {
    const executors = (await deps.members().catch(() => []))
      .filter((m) => m.skills.some((s) => s.id === 'exec.submit'))
      .map((m) => m.name);
    return {
      code: 'DELEGATE_NOT_EXECUTOR',
      message: `${name} offers no exec.* capabilities, so it runs no jobs; executors: ${executors.join(', ') || 'none online'}`,
      field: 'executor',
    };
  }
  return undefined;
}

/** The delegation `taskId` names and the turns it carries, or why it cannot be continued. */
async function earlierTurns(
  deps: DelegatorDeps,
  taskId: string,
  caller: Principal,
): Promise<{ ok: true; executor: string; turns: Turn[] } | { ok: false; error: Failure }> {
  const task = await deps.findTask(taskId, caller);
  const d = task && delegationOf(task);
  if (!task || !d)
    return {
      ok: false,
      error: {
        code: 'DELEGATE_UNKNOWN_TASK',
        message: `No delegated hub task ${JSON.stringify(taskId.slice(0, 64))} to continue`,
        field: 'taskId',
      },
    };
  if (task.status.state === 'working' || task.status.state === 'submitted')
    return {
      ok: false,
      error: {
        code: 'DELEGATE_TASK_ACTIVE',
        message: `Task ${taskId} is still running job ${d.job_id}; continue it once it has settled`,
        field: 'taskId',
      },
    };
  return {
    ok: true,
    executor: d.executor,
    turns: [
      ...(d.turns ?? []),
      { prompt: d.prompt, output: outputOf(task), job_id: d.job_id, taskId },
    ],
  };
}

/**
 * Submits a job. A name that is no executor, or a task that cannot be continued, rejects the
 * task with a code; an executor that cannot take the job leaves the task waiting for input,
 * with the reason, so continuing it retries.
 */
export async function submitJob(
  deps: DelegatorDeps,
  ctx: AgentContext,
  args: DelegateArgs,
): Promise<void> {
  const prompt = args.prompt.trim();
  if (!prompt)
    return ctx.requireInput('task.delegate needs a prompt: what should the executor do?');
  let turns: Turn[] = [];
  let executor = args.executor;
  if (args.taskId !== undefined) {
    const earlier = await earlierTurns(deps, args.taskId, ctx.caller);
    if (!earlier.ok) return refuse(ctx, earlier.error);
    turns = earlier.turns;
    // A continuation goes where the earlier job ran, unless the client names another executor.
    executor ??= earlier.executor;
  }
  executor ??= deps.defaultExecutor ?? 'resolve';
  const problem = await executorProblem(deps, executor);
  if (problem) return refuse(ctx, problem);

  const optional = {
    ...(args.recipe ? { recipe: args.recipe } : {}),
    ...(args.model ? { model: args.model } : {}),
  };
  // The executor limits jobs per principal: the hub names the one it delegates for.
  const r = await readFrom(
    deps.invoker,
    executor,
    'exec.submit',
    isSubmitted,
    { prompt, ...optional, ...(turns.length ? { context: contextOf(turns) } : {}) },
    30_000,
    { onBehalfOf: ownerKey(ctx.caller) },
  );
  if (!r.ok) {
    ctx.setMetadata({ delegationRequest: { ...args, prompt, executor } });
    return ctx.requireInput(
      `Executor '${executor}' did not take the job (${r.error.code}: ${r.error.message}). Bring it up or change the request, then continue this task.`,
    );
  }
  const job = r.result;
  const delegation: Delegation = {
    executor,
    job_id: job.job_id,
    prompt,
    submittedAt: new Date().toISOString(),
    ...(job.recipe ? { recipe: job.recipe } : {}),
    ...(args.model ? { model: args.model } : {}),
    ...(args.taskId ? { continues: args.taskId, turns } : {}),
  };
  ctx.setMetadata({ delegation, delegationRequest: null });
  ctx.working(
    `Delegated to ${executor}: job ${job.job_id}${job.recipe ? ` (${job.recipe})` : ''}${turns.length ? `, continuing ${turns.length} earlier turn${turns.length > 1 ? 's' : ''}` : ''}`,
  );
}
