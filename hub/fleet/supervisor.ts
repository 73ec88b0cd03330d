/**
 * @module hub/supervisor — runs the fleet's processes: starts each one, watches its /health,
 * restarts a crashed one with backoff (500 ms doubling to 30 s, reset after 30 s up), and stops
 * them all with SIGTERM (SIGKILL after a grace period). Each child's output goes to its log file.
 */

import { mkdirSync, openSync } from 'node:fs';
import { join } from 'node:path';

export interface ChildSpec {
  name: string;
  cmd: string[];
  port: number;
  /** Polled to tell `up` from `starting`. */
  healthUrl: string;
}

export type ChildState = 'starting' | 'up' | 'down' | 'stopped';

export interface ChildRow {
  name: string;
  port: number;
  pid: number | null;
  state: ChildState;
  restarts: number;
  /** When the current process started (ms), null when not running. */
  since: number | null;
}

export interface SupervisorOptions {
  cwd: string;
  env: Record<string, string | undefined>;
  logDir: string;
  /** Called whenever a row changes. */
  onChange?: (row: ChildRow) => void;
  initialBackoffMs?: number;
  maxBackoffMs?: number;
  healthEveryMs?: number;
  graceMs?: number;
}

interface Child {
  spec: ChildSpec;
  row: ChildRow;
  proc: Bun.Subprocess | null;
  backoffMs: number;
  restartTimer: ReturnType<typeof setTimeout> | null;
}

export class Supervisor {
  private readonly children: Child[];
  private stopping = false;
  private health: ReturnType<typeof setInterval> | null = null;

  constructor(specs: ChildSpec[], private readonly opts: SupervisorOptions) {
    this.children = specs.map((spec) => ({
      spec,
      row: { name: spec.name, port: spec.port, pid: null, state: 'stopped', restarts: 0, since: null },
      proc: null,
      backoffMs: opts.initialBackoffMs ?? 500,
      restartTimer: null,
    }));
  }

  rows(): ChildRow[] {
    return this.children.map((c) => ({ ...c.row }));
  }

  start(): void {
    mkdirSync(this.opts.logDir, { recursive: true });
    for (const c of this.children) this.spawn(c);
    this.health = setInterval(() => void this.checkHealth(), this.opts.healthEveryMs ?? 1000);
    void this.checkHealth();
  }

  /** Stops every child: SIGTERM, then SIGKILL for any still running after the grace period. */
  async stop(): Promise<void> {
    this.stopping = true;
    if (this.health) clearInterval(this.health);
    const running = this.children.filter((c) => c.proc);
    for (const c of this.children) if (c.restartTimer) clearTimeout(c.restartTimer);
    for (const c of running) c.proc!.kill('SIGTERM');
    const grace = setTimeout(() => running.forEach((c) => c.proc?.kill('SIGKILL')), this.opts.graceMs ?? 5000);
    await Promise.all(running.map((c) => c.proc!.exited));
    clearTimeout(grace);
  }

  private update(c: Child, patch: Partial<ChildRow>): void {
    const before = JSON.stringify(c.row);
    Object.assign(c.row, patch);
    if (JSON.stringify(c.row) !== before) this.opts.onChange?.({ ...c.row });
  }

  private spawn(c: Child): void {
    const log = openSync(join(this.opts.logDir, `${c.spec.name}.log`), 'a');
    const proc = Bun.spawn(c.spec.cmd, { cwd: this.opts.cwd, env: this.opts.env, stdout: log, stderr: log, stdin: 'ignore' });
    c.proc = proc;
    const started = Date.now();
    this.update(c, { pid: proc.pid, state: 'starting', since: started });
    void proc.exited.then(() => {
      if (c.proc !== proc) return;
      c.proc = null;
      if (this.stopping) return this.update(c, { pid: null, state: 'stopped', since: null });
      this.update(c, { pid: null, state: 'down', since: null });
      // A process that stayed up a while starts again quickly; one that keeps crashing waits longer.
      if (Date.now() - started > 30_000) c.backoffMs = this.opts.initialBackoffMs ?? 500;
      const wait = c.backoffMs;
      c.backoffMs = Math.min(c.backoffMs * 2, this.opts.maxBackoffMs ?? 30_000);
      c.restartTimer = setTimeout(() => {
        c.restartTimer = null;
        if (this.stopping) return;
        this.update(c, { restarts: c.row.restarts + 1 });
        this.spawn(c);
      }, wait);
    });
  }

  private async checkHealth(): Promise<void> {
    await Promise.all(this.children.map(async (c) => {
      if (!c.proc) return;
      const pid = c.proc.pid;
      let healthy = false;
      try {
        const res = await fetch(c.spec.healthUrl, { signal: AbortSignal.timeout(1000) });
        healthy = res.ok;
        await res.body?.cancel();
      } catch {}
      if (c.proc?.pid === pid && !this.stopping) this.update(c, { state: healthy ? 'up' : 'starting' });
    }));
  }
}
