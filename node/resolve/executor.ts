/**
 * @module node/resolve/executor — the executor: jobs from the recipe allow-list (run by resolve-run), their
 * state, time limit and cancel, and their records, which survive a restart that fails what was
 * running.
 */

import { join } from 'node:path';
import { fail, ok, type Err, type Failure, type Result } from '../../lib/errors/result.ts';
import { LIMITS } from '../../lib/limits.ts';
import { JobFiles, newJobId, publicJob, type Job, type JobRecord, type JobState } from './jobs.ts';
import type { ModelEndpoint, PriorTurn } from './model.ts';
import { endOrphanedJob } from './process-group.ts';
import { PROMPT_ENV, RECIPE_NAME, pickRecipe, type Recipe } from './recipes.ts';
import { runModel, runProcess, type Run, type RunEnd } from './run.ts';

/** The executor's error codes, each with the situation it names. */
const EXEC_ERRORS = Object.freeze({
  NO_RECIPE: 'no recipe matches the prompt',
  UNKNOWN_RECIPE: 'the named recipe is not on the allow-list',
  BAD_PROMPT: 'the prompt is empty',
  JOB_NOT_FOUND: 'no job with that id',
  BUSY: 'too many jobs running',
  CALLER_BUSY: 'this caller has as many jobs running as one caller may',
  SPAWN_FAILED: 'the recipe could not be started',
  EXECUTOR_UNAVAILABLE: 'the executor has no data folder',
  MODEL_NOT_APPLICABLE: 'a model name applies only to the model recipe',
  BAD_MODEL: 'not a model name',
  BAD_CONTEXT: 'context must be a JSON list of earlier {prompt, output} turns',
});
type ExecErrorCode = keyof typeof EXEC_ERRORS;
/** An executor failure, with the field of the call it concerns when there is one. */
export type ExecFailure = Failure<ExecErrorCode>;
export const execError = (code: ExecErrorCode, detail?: string, field?: string): Err<ExecFailure> =>
  fail(code, detail ?? EXEC_ERRORS[code], field);

const RESTARTED = 'executor restarted';
/** Children see this PATH, not the executor's. */
const CHILD_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

export interface ExecutorOptions {
  dataDir: string;
  recipes: readonly Recipe[];
  /** Needed only when `recipes` holds the `model` recipe. */
  model?: ModelEndpoint;
  fetch?: typeof fetch;
  now?: () => number;
  /** Between SIGTERM and SIGKILL of a group being stopped. */
  killGraceMs?: number;
  /** Jobs running at once, all callers together (default 8). */
  maxRunning?: number;
  /** Jobs one caller may have running at once (default 3), so no caller can take every slot. */
  maxRunningPerCaller?: number;
  childPath?: string;
  /** Job records kept (default LIMITS.jobMaxStored) and their age in hours (default LIMITS.jobMaxAgeHours). */
  maxJobRecords?: number;
  maxJobAgeHours?: number;
}

/** What a job may carry besides its prompt: a model for the model recipe, earlier turns of a continued delegation. */
export interface SubmitExtras {
  /** A model name for the model recipe (giving one without naming a recipe picks that recipe). */
  model?: string;
  /** Earlier turns, oldest first; the model recipe sends them before the prompt, process recipes ignore them. */
  prior?: readonly PriorTurn[];
  /** Whose job it is: the key the per-caller limit counts under (default `anonymous`). */
  caller?: string;
}

/** Model names as OpenAI-compatible servers spell them (`gpt-4o-mini`, `qwen2.5:7b`, `org/model`). */
const MODEL_NAME = /^[A-Za-z0-9][A-Za-z0-9._:/-]{0,127}$/;

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

interface Live {
  /** Whose job it is, for the per-caller limit. */
  caller: string;
  record: JobRecord;
  run: Run;
  stop?: { state: Exclude<JobState, 'running' | 'succeeded'>; error?: string };
  settled: Promise<void>;
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
  const iso = () => new Date(now()).toISOString();
  const live = new Map<string, Live>();

  /** A running record no live process of this executor owns: its executor died. */
  const orphan = (r: JobRecord) => {
    // The start time (or the job's id in the environment) guards against signalling a stranger.
    if (r.pid) endOrphanedJob(r.pid, r.procStart, r.job_id);
    files.settle({ ...r, state: 'failed', error: RESTARTED, endedAt: iso() });
  };
  for (const id of files.ids()) {
    const r = files.read(id);
    if (r?.state === 'running') orphan(r);
  }
  files.retain();

  const view = ({ record, run }: Live): JobRecord => ({
    ...record,
    output: run.output.text(),
    outputTruncated: run.output.truncated,
    ...(run.progress ? { progress: run.progress } : {}),
  });
  const stopWith = (l: Live, stop: NonNullable<Live['stop']>) => {
    l.stop ??= stop;
    l.run.halt();
  };
  const settle = (l: Live, end: RunEnd) => {
    const state: JobState =
      l.stop?.state ?? (end.failure === undefined && end.exitCode === 0 ? 'succeeded' : 'failed');
    const error = l.stop ? l.stop.error : end.failure;
    const final: JobRecord = {
      ...view(l),
      state,
      exitCode: end.exitCode,
      endedAt: iso(),
      ...(error !== undefined && state !== 'succeeded' ? { error } : {}),
    };
    // Restart recovery by another executor may have settled it first; its verdict stands.
    l.record = files.settle(final) ? final : (files.read(final.job_id) ?? final);
    live.delete(final.job_id);
  };

  const start = (
    recipe: Recipe,
    id: string,
    prompt: string,
    extras: SubmitExtras,
  ): Result<Run, ExecFailure> => {
    if (recipe.kind === 'model') {
      const request = {
        prompt,
        ...(extras.prior?.length ? { prior: extras.prior } : {}),
        ...(extras.model ? { model: extras.model } : {}),
      };
      return ok(runModel(recipe, opts.model, request, opts.fetch));
    }
    const env: Record<string, string> = {
      PATH: opts.childPath ?? CHILD_PATH,
      HOME: join(opts.dataDir, 'resolve'),
      LANG: 'C.UTF-8',
      ...recipe.env,
      JOB_ID: id,
    };
    if (recipe.prompt === 'env') env[PROMPT_ENV] = prompt;
    try {
      return ok(
        runProcess(
          recipe,
          env,
          recipe.prompt === 'stdin' ? prompt : undefined,
          opts.killGraceMs ?? 1000,
        ),
      );
    } catch (e) {
      // The spawn's own error, as Bun raises it: the one failure a throw brings here.
      return execError(
        'SPAWN_FAILED',
        `${recipe.name} could not start: ${(e as Error)?.message ?? 'unknown error'}`,
      );
    }
  };

  const executor: Executor = {
    recipes: opts.recipes,
    submit(prompt, name, extras = {}) {
      const caller = extras.caller ?? 'anonymous';
      if (!prompt.trim()) return execError('BAD_PROMPT', undefined, 'prompt');
      if (extras.model !== undefined && !MODEL_NAME.test(extras.model))
        return execError(
          'BAD_MODEL',
          `not a model name: ${JSON.stringify(extras.model.slice(0, 64))}`,
          'model',
        );
      // A model name asks for the model recipe: it picks it when no recipe is named.
      if (extras.model !== undefined && name === undefined) {
        if (!opts.recipes.some((r) => r.kind === 'model'))
          return execError(
            'UNKNOWN_RECIPE',
            `this executor has no model recipe (no model endpoint is configured); recipes: ${names()}`,
            'model',
          );
        name = 'model';
      }
      let recipe: Recipe | undefined;
      if (name !== undefined) {
        // The name is only ever compared with the allow-list; it never reaches a path or argv.
        recipe = RECIPE_NAME.test(name) ? opts.recipes.find((r) => r.name === name) : undefined;
        if (!recipe)
          return execError(
            'UNKNOWN_RECIPE',
            `unknown recipe ${JSON.stringify(name.slice(0, 64))}; recipes: ${names()}`,
            'recipe',
          );
      } else {
        recipe = pickRecipe(prompt, opts.recipes);
        if (!recipe)
          return execError(
            'NO_RECIPE',
            `no recipe matches the prompt; name one of: ${names()}`,
            'prompt',
          );
      }
      if (extras.model !== undefined && recipe.kind !== 'model')
        return execError(
          'MODEL_NOT_APPLICABLE',
          `recipe ${recipe.name} runs a process; a model name applies only to the model recipe`,
          'model',
        );
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
      const job_id = newJobId();
      const started = start(recipe, job_id, prompt, extras);
      if (!started.ok) return started;
      const run = started.result;
      const record: JobRecord = {
        job_id,
        recipe: recipe.name,
        state: 'running',
        pid: run.pid,
        exitCode: null,
        output: '',
        outputTruncated: false,
        startedAt: iso(),
        endedAt: null,
        ...(run.procStart === undefined ? {} : { procStart: run.procStart }),
      };
      try {
        files.write(record);
      } catch (e) {
        // A job without a record could never be read or cancelled: it does not run.
        run.halt();
        return execError(
          'SPAWN_FAILED',
          `job record could not be written: ${(e as Error)?.message ?? 'unknown error'}`,
        );
      }
      const l: Live = { caller, record, run, settled: Promise.resolve() };
      live.set(job_id, l);
      const timer = setTimeout(
        () =>
          stopWith(l, { state: 'failed', error: `time limit of ${recipe.timeoutMs} ms exceeded` }),
        recipe.timeoutMs,
      );
      timer.unref();
      l.settled = run.ended.then((end) => {
        clearTimeout(timer);
        settle(l, end);
      });
      return ok({ job_id, recipe: recipe.name, state: 'running' as const });
    },
    status(id) {
      const l = live.get(id);
      if (l) return ok(publicJob(view(l)));
      let r = files.read(id);
      if (r?.state === 'running') orphan(r), (r = files.read(id));
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
  const names = () => opts.recipes.map((r) => r.name).join(', ');
  return executor;
}
