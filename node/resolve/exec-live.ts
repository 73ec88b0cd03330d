/**
 * @module node/resolve/exec-live — the jobs an executor runs: each started (a model call or a
 * process group with its own environment), its record written before it counts, its time limit,
 * how it is stopped, and its record settled when it ends (a record a restart found running is
 * failed as orphaned).
 */

import { join } from 'node:path';
import { ok, type Result } from '../../lib/errors/result.ts';
import { type ExecFailure, execError } from './exec-errors.ts';
import type { ExecutorOptions, SubmitExtras } from './exec-options.ts';
import { type JobFiles, newJobId, type JobRecord, type JobState } from './jobs.ts';
import { endOrphanedJob } from './process-group.ts';
import { PROMPT_ENV, type Recipe } from './recipes.ts';
import { runModel, runProcess, type Run, type RunEnd } from './run.ts';

const RESTARTED = 'executor restarted';
/** Children see this PATH, not the executor's. */
const CHILD_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

export interface Live {
  /** Whose job it is, for the per-caller limit. */
  caller: string;
  record: JobRecord;
  run: Run;
  stop?: { state: Exclude<JobState, 'running' | 'succeeded'>; error?: string };
  settled: Promise<void>;
}

/** What the executor's parts share: its options, its job records and the jobs it runs now. */
export interface ExecContext {
  opts: ExecutorOptions;
  files: JobFiles;
  live: Map<string, Live>;
  /** Now, as an ISO timestamp. */
  iso: () => string;
}

/** A running record no live process of this executor owns: its executor died. */
export function orphan({ files, iso }: ExecContext, r: JobRecord): void {
  // The start time (or the job's id in the environment) guards against signalling a stranger.
  if (r.pid) endOrphanedJob(r.pid, r.procStart, r.job_id);
  files.settle({ ...r, state: 'failed', error: RESTARTED, endedAt: iso() });
}

/** A live job's record with its output so far. */
export const view = ({ record, run }: Live): JobRecord => ({
  ...record,
  output: run.output.text(),
  outputTruncated: run.output.truncated,
  ...(run.progress ? { progress: run.progress } : {}),
});
export const stopWith = (l: Live, stop: NonNullable<Live['stop']>) => {
  l.stop ??= stop;
  l.run.halt();
};

function settle({ files, live, iso }: ExecContext, l: Live, end: RunEnd): void {
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
}

function start(
  { opts }: ExecContext,
  recipe: Recipe,
  id: string,
  prompt: string,
  extras: SubmitExtras,
): Result<Run, ExecFailure> {
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
}

/** Starts a job of `recipe` for `caller`: its run, its record, its time limit. */
export function launch(
  ctx: ExecContext,
  recipe: Recipe,
  prompt: string,
  extras: SubmitExtras,
  caller: string,
): Result<{ job_id: string; recipe: string; state: 'running' }, ExecFailure> {
  const { files, live, iso } = ctx;
  const job_id = newJobId();
  const started = start(ctx, recipe, job_id, prompt, extras);
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
    () => stopWith(l, { state: 'failed', error: `time limit of ${recipe.timeoutMs} ms exceeded` }),
    recipe.timeoutMs,
  );
  timer.unref();
  l.settled = run.ended.then((end) => {
    clearTimeout(timer);
    settle(ctx, l, end);
  });
  return ok({ job_id, recipe: recipe.name, state: 'running' as const });
}
