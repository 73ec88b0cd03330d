/**
 * @module hub/workbench/delegate — task.delegate: the hub hands a job to an executor (`exec.submit` on a
 * fleet node that offers `exec.*`, `resolve` by default, over the signed channel) and keeps its
 * own task `working` with `{executor, job_id}`. Reading the task advances it lazily by asking
 * `exec.status`; canceling it cancels the job. A delegation can continue an earlier one
 * (`taskId`): the earlier turns travel with the new job, nothing is replaced. The hub is the only
 * writer of its task state, the executor never calls back, and nothing here runs the job itself.
 */

import type { AgentContext, TaskUpdater } from '../../lib/a2a/agent.ts';
import type { Task } from '../../lib/a2a/types.ts';
import { failureParts } from '../../lib/errors/as-data.ts';
import type { Failure } from '../../lib/errors/result.ts';
import type { FleetInvoker } from '../../lib/fleet/invoke.ts';
import { isJobStatus, isObject, isString, isSubmitted, readFrom } from './fleet-answers.ts';
import { ownerKey, type Principal } from '../../lib/auth/principal.ts';

/** One earlier exchange of a delegation chain: what was asked and what the job answered. */
interface Turn {
  prompt: string;
  output: string;
  job_id: string;
  taskId: string;
}

/** What the hub keeps on a delegated task, as `metadata.delegation`. */
export interface Delegation {
  executor: string;
  job_id: string;
  recipe?: string;
  model?: string;
  /** The prompt of this task's job. */
  prompt: string;
  submittedAt: string;
  /** The hub task this one continues, and the turns before this one (oldest first). */
  continues?: string;
  turns?: Turn[];
}

/** What a client asks with task.delegate (checked against the capability's specs first). */
export interface DelegateArgs {
  prompt: string;
  executor?: string;
  recipe?: string;
  model?: string;
  taskId?: string;
}

/** A fleet member as the fleet view sees it: enough to tell an executor from other nodes. */
interface MemberView {
  name: string;
  online: boolean;
  skills: { id: string }[];
}

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

/** Earlier turns sent with a continued job, at most this many and this long as JSON. */
const MAX_TURNS = 20;
const MAX_CONTEXT = 16_000;
const MAX_OUTPUT_PER_TURN = 2_000;

// The task's metadata is the hub's own, but typed as any JSON: read it through checks.
const isTurn = (t: unknown): t is Turn =>
  isObject(t) &&
  isString(t.prompt) &&
  isString(t.output) &&
  isString(t.job_id) &&
  isString(t.taskId);
const isDelegation = (d: unknown): d is Delegation =>
  isObject(d) &&
  isString(d.job_id) &&
  isString(d.executor) &&
  isString(d.prompt) &&
  (d.turns === undefined || (Array.isArray(d.turns) && d.turns.every(isTurn)));
const isRequest = (r: unknown): r is DelegateArgs =>
  isObject(r) &&
  isString(r.prompt) &&
  ['executor', 'recipe', 'model', 'taskId'].every((k) => r[k] === undefined || isString(r[k]));
const delegationOf = (task: Readonly<Task>): Delegation | undefined => {
  const d = task.metadata?.delegation;
  return isDelegation(d) ? d : undefined;
};

/** The text of a settled delegation's `job-output` artifact. */
const outputOf = (task: Readonly<Task>): string =>
  task.artifacts
    ?.find((a) => a.name === 'job-output')
    ?.parts.map((p) => ('text' in p && typeof p.text === 'string' ? p.text : ''))
    .join('') ?? '';

/** The newest turns that fit the executor's `context` argument. */
function contextOf(turns: Turn[]): string {
  let kept = turns
    .slice(-MAX_TURNS)
    .map((t) => ({ prompt: t.prompt, output: t.output.slice(0, MAX_OUTPUT_PER_TURN) }));
  while (kept.length && JSON.stringify(kept).length > MAX_CONTEXT) kept = kept.slice(1);
  return JSON.stringify(kept);
}

export function createDelegator(deps: DelegatorDeps) {
  const { invoker } = deps;
  const defaultExecutor = deps.defaultExecutor ?? 'resolve';
  const refuse = (ctx: AgentContext, failure: Failure) =>
    ctx.status('rejected', failureParts(failure));

  /** Whether `name` may run jobs: a fleet node that, when it answers, offers exec.submit. */
  async function executorProblem(name: string): Promise<Failure | undefined> {
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

  return {
    /**
     * Submits a job. A name that is no executor, or a task that cannot be continued, rejects the
     * task with a code; an executor that cannot take the job leaves the task waiting for input,
     * with the reason, so continuing it retries.
     */
    async submit(ctx: AgentContext, args: DelegateArgs): Promise<void> {
      const prompt = args.prompt.trim();
      if (!prompt)
        return ctx.requireInput('task.delegate needs a prompt: what should the executor do?');
      let turns: Turn[] = [];
      let executor = args.executor;
      if (args.taskId !== undefined) {
        const earlier = await earlierTurns(args.taskId, ctx.caller);
        if (!earlier.ok) return refuse(ctx, earlier.error);
        turns = earlier.turns;
        // A continuation goes where the earlier job ran, unless the client names another executor.
        executor ??= earlier.executor;
      }
      executor ??= defaultExecutor;
      const problem = await executorProblem(executor);
      if (problem) return refuse(ctx, problem);

      const optional = {
        ...(args.recipe ? { recipe: args.recipe } : {}),
        ...(args.model ? { model: args.model } : {}),
      };
      // The executor limits jobs per principal: the hub names the one it delegates for.
      const r = await readFrom(
        invoker,
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
    },

    /** Lazy advancement on read; an executor that does not answer leaves the task working. */
    async observe(task: TaskUpdater): Promise<void> {
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
      else if (job.state === 'canceled')
        task.status('canceled', `Executor canceled job ${job.job_id}`);
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
