/**
 * @module resolve-exec — the executor: runs allow-listed recipes as child processes (each the
 * leader of its own process group) or model calls, with a time limit and an output cap per
 * recipe; cancel ends the whole group; records survive a restart, which fails what was running.
 */

import { join } from 'node:path';
import { CapabilityError } from '../lib/catalog.ts';
import { JobFiles, newJobId, publicJob, type Job, type JobRecord, type JobState } from './resolve-jobs.ts';
import { askModel, type ModelEndpoint } from './resolve-model.ts';
import { procStartTime, signalGroup } from './resolve-proc.ts';
import { PROMPT_ENV, RECIPE_NAME, pickRecipe, type Recipe } from './resolve-recipes.ts';

/** The executor's error codes, each with the situation it names. */
export const EXEC_ERRORS = Object.freeze({
  NO_RECIPE: 'no recipe matches the prompt',
  UNKNOWN_RECIPE: 'the named recipe is not on the allow-list',
  BAD_PROMPT: 'the prompt is empty',
  JOB_NOT_FOUND: 'no job with that id',
  BUSY: 'too many jobs running',
  SPAWN_FAILED: 'the recipe could not be started',
  EXECUTOR_UNAVAILABLE: 'the executor has no data folder',
});
export type ExecErrorCode = keyof typeof EXEC_ERRORS;
export const execError = (code: ExecErrorCode, detail?: string) => new CapabilityError(code, detail ?? EXEC_ERRORS[code]);

export const RESTARTED = 'executor restarted';
/** Children see this PATH, not the executor's. */
const CHILD_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';
const PROGRESS = /^progress (\d+)\/(\d+)\b/;
const STDERR_TAIL = 400;

export interface ExecutorOptions {
  dataDir: string;
  recipes: readonly Recipe[];
  /** Needed only when `recipes` holds the `model` recipe. */
  model?: ModelEndpoint;
  fetch?: typeof fetch;
  now?: () => number;
  /** Between SIGTERM and SIGKILL of a group being stopped. */
  killGraceMs?: number;
  maxRunning?: number;
  childPath?: string;
}

export interface Executor {
  readonly recipes: readonly Recipe[];
  /** @throws CapabilityError NO_RECIPE, UNKNOWN_RECIPE, BAD_PROMPT, BUSY, SPAWN_FAILED */
  submit(prompt: string, recipe?: string): { job_id: string; recipe: string; state: 'running' };
  /** @throws CapabilityError JOB_NOT_FOUND */
  status(id: string): Job;
  /** Resolves once the job's process group is gone. @throws CapabilityError JOB_NOT_FOUND */
  cancel(id: string): Promise<Job>;
  /** Cancels every running job (tests, shutdown). */
  close(): Promise<void>;
}

interface Live {
  record: JobRecord;
  chunks: Uint8Array[];
  bytes: number;
  stderr: string;
  cap: number;
  stop?: { state: Exclude<JobState, 'running' | 'succeeded'>; error?: string };
  halt(): void;
  done: Promise<void>;
}

export function createExecutor(opts: ExecutorOptions): Executor {
  const files = new JobFiles(opts.dataDir);
  const now = opts.now ?? Date.now;
  const iso = () => new Date(now()).toISOString();
  const grace = opts.killGraceMs ?? 1000;
  const live = new Map<string, Live>();

  /** A running record no live process of this executor owns: its executor died. */
  const orphan = (r: JobRecord) => {
    // The start time guards against signalling a stranger that reused the pid.
    if (r.pid && r.procStart !== undefined && procStartTime(r.pid) === r.procStart) signalGroup(r.pid, 'SIGKILL');
    files.settle({ ...r, state: 'failed', error: RESTARTED, endedAt: iso() });
  };
  for (const id of files.ids()) {
    const r = files.read(id);
    if (r?.state === 'running') orphan(r);
  }

  const output = (l: Live) => {
    const all = new Uint8Array(Math.min(l.bytes, l.cap));
    let at = 0;
    for (const c of l.chunks) (all.set(c, at), (at += c.length));
    return new TextDecoder().decode(all);
  };
  const take = (l: Live, chunk: Uint8Array) => {
    const room = l.cap - Math.min(l.bytes, l.cap);
    if (room > 0) l.chunks.push(chunk.subarray(0, room));
    l.bytes += chunk.length;
  };
  const view = (l: Live): JobRecord => ({ ...l.record, output: output(l), outputTruncated: l.bytes > l.cap });

  const stopWith = (l: Live, stop: NonNullable<Live['stop']>) => {
    l.stop ??= stop;
    l.halt();
  };
  const settle = (l: Live, exitCode: number | null, failure?: string) => {
    const state: JobState = l.stop?.state ?? (failure === undefined && exitCode === 0 ? 'succeeded' : 'failed');
    const error = l.stop ? l.stop.error : failure;
    const final: JobRecord = { ...view(l), state, exitCode, endedAt: iso(), ...(error !== undefined && state !== 'succeeded' ? { error } : {}) };
    if (!files.settle(final)) l.record = files.read(final.job_id) ?? final;
    else l.record = final;
    live.delete(final.job_id);
  };

  const startProcess = (recipe: Recipe, record: JobRecord, prompt: string): Live => {
    const env: Record<string, string> = { PATH: opts.childPath ?? CHILD_PATH, HOME: join(opts.dataDir, 'resolve'), LANG: 'C.UTF-8', ...recipe.env, JOB_ID: record.job_id };
    if (recipe.prompt === 'env') env[PROMPT_ENV] = prompt;
    let proc: Bun.Subprocess<Blob | 'ignore', 'pipe', 'pipe'>;
    try {
      proc = Bun.spawn({
        cmd: recipe.argv, cwd: recipe.cwd, env, detached: true,
        stdin: recipe.prompt === 'stdin' ? new Blob([prompt]) : 'ignore', stdout: 'pipe', stderr: 'pipe',
      });
    } catch (e) {
      throw execError('SPAWN_FAILED', `${recipe.name} could not start: ${(e as Error)?.message ?? 'unknown error'}`);
    }
    const pid = proc.pid;
    const l: Live = {
      record: { ...record, pid, ...withDefined('procStart', procStartTime(pid)) },
      chunks: [], bytes: 0, stderr: '', cap: recipe.maxOutputBytes,
      halt: () => {
        signalGroup(pid, 'SIGTERM');
        setTimeout(() => signalGroup(pid, 'SIGKILL'), grace).unref();
      },
      done: Promise.resolve(),
    };
    const readOut = (async () => {
      const decoder = new TextDecoder();
      let line = '';
      for await (const chunk of chunks(proc.stdout)) {
        take(l, chunk);
        // Progress lines ("progress 3/10") are read from the whole stream, past the cap too.
        const lines = (line + decoder.decode(chunk, { stream: true })).split('\n');
        line = lines.pop()!.slice(-1024);
        for (const text of lines) {
          const m = PROGRESS.exec(text);
          if (m) l.record.progress = { done: Number(m[1]), total: Number(m[2]) };
        }
      }
    })();
    const readErr = (async () => {
      const decoder = new TextDecoder();
      for await (const chunk of chunks(proc.stderr)) l.stderr = (l.stderr + decoder.decode(chunk, { stream: true })).slice(-STDERR_TAIL);
    })();
    l.done = (async () => {
      await proc.exited;
      // A job ends with its main process: whatever it left in its group goes too.
      signalGroup(pid, 'SIGKILL');
      await Promise.allSettled([readOut, readErr]);
      const tail = l.stderr.trim().split('\n').pop()?.trim();
      const failure = proc.exitCode === 0 ? undefined
        : proc.exitCode === null ? `killed by ${proc.signalCode ?? 'a signal'}`
        : `exited with code ${proc.exitCode}${tail ? `: ${tail}` : ''}`;
      settle(l, proc.exitCode, failure);
    })();
    return l;
  };

  const startModel = (recipe: Recipe, record: JobRecord, prompt: string): Live => {
    const abort = new AbortController();
    const l: Live = { record, chunks: [], bytes: 0, stderr: '', cap: recipe.maxOutputBytes, halt: () => abort.abort(), done: Promise.resolve() };
    l.done = (async () => {
      try {
        if (!opts.model) throw new Error('no model endpoint configured');
        take(l, new TextEncoder().encode(await askModel(opts.model, prompt, abort.signal, opts.fetch)));
        settle(l, 0);
      } catch (e) {
        settle(l, null, (e as Error)?.message ?? 'model call failed');
      }
    })();
    return l;
  };

  const executor: Executor = {
    recipes: opts.recipes,
    submit(prompt, name) {
      if (!prompt.trim()) throw execError('BAD_PROMPT');
      let recipe: Recipe | undefined;
      if (name !== undefined) {
        // The name is only ever compared with the allow-list; it never reaches a path or argv.
        recipe = RECIPE_NAME.test(name) ? opts.recipes.find((r) => r.name === name) : undefined;
        if (!recipe) throw execError('UNKNOWN_RECIPE', `unknown recipe ${JSON.stringify(name.slice(0, 64))}; recipes: ${names()}`);
      } else {
        recipe = pickRecipe(prompt, opts.recipes);
        if (!recipe) throw execError('NO_RECIPE', `no recipe matches the prompt; name one of: ${names()}`);
      }
      if (live.size >= (opts.maxRunning ?? 8)) throw execError('BUSY', `${live.size} jobs are running; try again when one ends`);
      const record: JobRecord = {
        job_id: newJobId(), recipe: recipe.name, state: 'running', pid: null, exitCode: null,
        output: '', outputTruncated: false, startedAt: iso(), endedAt: null,
      };
      const l = (recipe.kind === 'model' ? startModel : startProcess)(recipe, record, prompt);
      try {
        files.write(l.record);
      } catch (e) {
        // A job without a record could never be read or cancelled: it does not run.
        l.halt();
        throw execError('SPAWN_FAILED', `job record could not be written: ${(e as Error)?.message ?? 'unknown error'}`);
      }
      live.set(record.job_id, l);
      const timer = setTimeout(() => stopWith(l, { state: 'failed', error: `time limit of ${recipe.timeoutMs} ms exceeded` }), recipe.timeoutMs);
      timer.unref();
      l.done.finally(() => clearTimeout(timer));
      return { job_id: record.job_id, recipe: recipe.name, state: 'running' };
    },
    status(id) {
      const l = live.get(id);
      if (l) return publicJob(view(l));
      let r = files.read(id);
      if (r?.state === 'running') (orphan(r), (r = files.read(id)));
      if (!r) throw execError('JOB_NOT_FOUND', `no job ${JSON.stringify(id.slice(0, 64))}`);
      return publicJob(r);
    },
    async cancel(id) {
      const l = live.get(id);
      if (!l) return executor.status(id);
      stopWith(l, { state: 'canceled' });
      await l.done;
      return publicJob(l.record);
    },
    async close() {
      await Promise.all([...live.keys()].map((id) => executor.cancel(id)));
    },
  };
  const names = () => opts.recipes.map((r) => r.name).join(', ');
  return executor;
}

async function* chunks(stream: ReadableStream<Uint8Array>): AsyncGenerator<Uint8Array> {
  const reader = stream.getReader();
  while (true) {
    const { done, value } = await reader.read();
    if (done) return;
    yield value;
  }
}

function withDefined<K extends string, V>(key: K, v: V | undefined): { [P in K]?: V } {
  return (v === undefined ? {} : { [key]: v }) as { [P in K]?: V };
}
