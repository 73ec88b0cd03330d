/**
 * @module node/resolve/run — one run of a recipe: a child process that leads its own process group
 * (stdout capped, progress lines read, stderr's tail kept) or a model call; `halt` stops it and
 * `ended` says how it ended. Job state and records are the executor's business.
 */

import { askModel, type ModelEndpoint, type ModelRequest } from './model.ts';
import { procStartTime } from '../../lib/proc-stat.ts';
import { signalGroup } from './process-group.ts';
import type { Recipe } from './recipes.ts';

export interface RunEnd {
  exitCode: number | null;
  /** Why the run failed, when it did (exit code with stderr's last line, signal, model error). */
  failure?: string;
}

export interface Run {
  pid: number | null;
  /** The process's start time, to recognise it after a restart. */
  procStart?: number;
  output: CappedOutput;
  progress?: { done: number; total: number };
  halt(): void;
  ended: Promise<RunEnd>;
}

const PROGRESS = /^progress (\d+)\/(\d+)\b/;
const STDERR_TAIL = 400;

/** The first `cap` bytes of a stream, and how many there were in all. */
class CappedOutput {
  private readonly chunks: Uint8Array[] = [];
  private bytes = 0;

  constructor(readonly cap: number) {}

  take(chunk: Uint8Array): void {
    const room = this.cap - Math.min(this.bytes, this.cap);
    if (room > 0) this.chunks.push(chunk.subarray(0, room));
    this.bytes += chunk.length;
  }

  get truncated(): boolean {
    return this.bytes > this.cap;
  }

  text(): string {
    const all = new Uint8Array(Math.min(this.bytes, this.cap));
    let at = 0;
    for (const c of this.chunks) all.set(c, at), (at += c.length);
    return new TextDecoder().decode(all);
  }
}

/**
 * Spawns `recipe.argv` without a shell, detached (setsid: pgid = pid), with exactly `env`.
 * Halting sends SIGTERM to the group, then SIGKILL after `graceMs`.
 * @throws Error when the program cannot be started.
 */
export function runProcess(
  recipe: Recipe,
  env: Record<string, string>,
  stdin: string | undefined,
  graceMs: number,
): Run {
  const proc = Bun.spawn({
    cmd: recipe.argv,
    cwd: recipe.cwd,
    env,
    detached: true,
    stdin: stdin === undefined ? 'ignore' : new Blob([stdin]),
    stdout: 'pipe',
    stderr: 'pipe',
  });
  const pid = proc.pid;
  const start = procStartTime(pid);
  let stderr = '';
  const run: Run = {
    pid,
    ...(start === undefined ? {} : { procStart: start }),
    output: new CappedOutput(recipe.maxOutputBytes),
    halt() {
      signalGroup(pid, 'SIGTERM');
      setTimeout(() => signalGroup(pid, 'SIGKILL'), graceMs).unref();
    },
    ended: Promise.resolve({ exitCode: null }),
  };
  const readOut = (async () => {
    const decoder = new TextDecoder();
    let line = '';
    for await (const chunk of chunks(proc.stdout)) {
      run.output.take(chunk);
      // Progress lines ("progress 3/10") are read from the whole stream, past the cap too.
      const lines = (line + decoder.decode(chunk, { stream: true })).split('\n');
      line = lines.pop()!.slice(-1024);
      for (const text of lines) {
        const m = PROGRESS.exec(text);
        if (m) run.progress = { done: Number(m[1]), total: Number(m[2]) };
      }
    }
  })();
  const readErr = (async () => {
    const decoder = new TextDecoder();
    for await (const chunk of chunks(proc.stderr))
      stderr = (stderr + decoder.decode(chunk, { stream: true })).slice(-STDERR_TAIL);
  })();
  run.ended = (async () => {
    await proc.exited;
    // A job ends with its main process: whatever it left in its group goes too.
    signalGroup(pid, 'SIGKILL');
    await Promise.allSettled([readOut, readErr]);
    const tail = stderr.trim().split('\n').pop()?.trim();
    const failure =
      proc.exitCode === 0
        ? undefined
        : proc.exitCode === null
          ? `killed by ${proc.signalCode ?? 'a signal'}`
          : `exited with code ${proc.exitCode}${tail ? `: ${tail}` : ''}`;
    return { exitCode: proc.exitCode, ...(failure === undefined ? {} : { failure }) };
  })();
  return run;
}

/** Sends the prompt (with earlier turns, if any) to the model endpoint; halting aborts the request. */
export function runModel(
  recipe: Recipe,
  endpoint: ModelEndpoint | undefined,
  request: ModelRequest,
  f?: typeof fetch,
): Run {
  const abort = new AbortController();
  const run: Run = {
    pid: null,
    output: new CappedOutput(recipe.maxOutputBytes),
    halt: () => abort.abort(),
    ended: Promise.resolve({ exitCode: null }),
  };
  run.ended = (async (): Promise<RunEnd> => {
    try {
      if (!endpoint) throw new Error('no model endpoint configured');
      run.output.take(new TextEncoder().encode(await askModel(endpoint, request, abort.signal, f)));
      return { exitCode: 0 };
    } catch (e) {
      return { exitCode: null, failure: (e as Error)?.message ?? 'model call failed' };
    }
  })();
  return run;
}

async function* chunks(stream: ReadableStream<Uint8Array>): AsyncGenerator<Uint8Array> {
  const reader = stream.getReader();
  while (true) {
    const { done, value } = await reader.read();
    if (done) return;
    yield value;
  }
}
