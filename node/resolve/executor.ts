/**
 * @module node/resolve/executor — the executor: jobs from the recipe allow-list (run by resolve-run), their
 * state, time limit and cancel, and their records, which survive a restart that fails what was
 * running.
 * This file checks a submission and keeps the live jobs; the recipe is chosen by
 * node/resolve/exec-recipe.ts, jobs run by exec-live.ts, codes in exec-errors.ts.
 */

import { ok, type Result } from '../../lib/errors/result.ts';
import { LIMITS } from '../../lib/limits.ts';
import { type ExecFailure, execError } from './exec-errors.ts';
import { type ExecContext, launch, type Live, orphan, stopWith, view } from './exec-live.ts';
import { chooseRecipe } from './exec-recipe.ts';
import { JobFiles, publicJob, type Job } from './jobs.ts';
import type { Recipe } from './recipes.ts';
import type { ExecutorOptions, SubmitExtras } from './exec-options.ts';

export { execError, type ExecFailure } from './exec-errors.ts';

export type { ExecutorOptions, SubmitExtras } from './exec-options.ts';

export interface Executor {
  readonly recipes: readonly Recipe[];
  /**
   * Starts a job; `extras.caller` is the key its per-caller limit counts under (see `callerKey` in
   * exec-capabilities.ts). Fails with NO_RECIPE, UNKNOWN_RECIPE, BAD_PROMPT, BAD_MODEL,
   * MODEL_NOT_APPLICABLE, CALLER_BUSY, BUSY or SPAWN_FAILED.
   */
  submit(
    prompt: string,
    recipe?: string,
    extras?: SubmitExtras,
  ): Result<{ job_id: string; recipe: string; state: 'running' }, ExecFailure>;
  /** The job as it stands, or JOB_NOT_FOUND. */
  status(id: string): Result<Job, ExecFailure>;
  /** Resolves once the job's process group is gone; JOB_NOT_FOUND for a job it does not know. */
  cancel(id: string): Promise<Result<Job, ExecFailure>>;
  /** Cancels every running job (tests, shutdown). */
  close(): Promise<void>;
}

export function createExecutor(opts: ExecutorOptions): Executor {
  const now = opts.now ?? Date.now;
  const files = new JobFiles(
    opts.dataDir,
    {
      maxStored: opts.maxJobRecords ?? LIMITS.jobMaxStored,
      maxAgeMs: (opts.maxJobAgeHours ?? LIMITS.jobMaxAgeHours) * 3_600_000,
    },
    now,
  );
  const ctx: ExecContext = {
    opts,
    files,
    live: new Map<string, Live>(),
    iso: () => new Date(now()).toISOString(),
  };
  const { live } = ctx;
  for (const id of files.ids()) {
    const r = files.read(id);
    if (r?.state === 'running') orphan(ctx, r);
  }
  files.retain();

  const executor: Executor = {
    recipes: opts.recipes,
    submit(prompt, name, extras = {}) {
      const caller = extras.caller ?? 'anonymous';
      const chosen = chooseRecipe(opts.recipes, prompt, name, extras.model);
      if (!chosen.ok) return chosen;
      // The caller's own limit first: one caller's jobs never take the slots others need.
      const perCaller = opts.maxRunningPerCaller ?? 3;
      const mine = [...live.values()].filter((l) => l.caller === caller).length;
      if (mine >= perCaller)
        return execError(
          'CALLER_BUSY',
          `${mine} of your jobs are running (at most ${perCaller} per caller); try again when one ends`,
        );
      if (live.size >= (opts.maxRunning ?? 8))
        return execError('BUSY', `${live.size} jobs are running; try again when one ends`);
      return launch(ctx, chosen.result, prompt, extras, caller);
    },
    status(id) {
      const l = live.get(id);
      if (l) return ok(publicJob(view(l)));
      let r = files.read(id);
      if (r?.state === 'running') orphan(ctx, r), (r = files.read(id));
      if (!r)
        return execError('JOB_NOT_FOUND', `no job ${JSON.stringify(id.slice(0, 64))}`, 'job_id');
      return ok(publicJob(r));
    },
    async cancel(id) {
      const l = live.get(id);
      if (!l) return executor.status(id);
      stopWith(l, { state: 'canceled' });
      await l.settled;
      return ok(publicJob(l.record));
    },
    async close() {
      await Promise.all([...live.keys()].map((id) => executor.cancel(id)));
    },
  };
  return executor;
}
