/**
 * @module hub/fleet/supervisor — runs the fleet's processes: starts each one, probes its health route,
 * kills and restarts one that stops answering (a hung process) or crashes, with backoff (500 ms
 * doubling to 30 s, reset after 30 s up), and stops them all with SIGTERM (SIGKILL after a grace
 * period). Each child's output goes to its log file; each child's stdin is a pipe from here, so a
 * child sees the supervisor die (hub/fleet/exit-with-parent.ts) even when it is killed with -9.
 */

import { openSync } from 'node:fs';
import { join } from 'node:path';
import { probeHealth } from '../../lib/health.ts';
import { EXIT_PORT_TAKEN } from '../../lib/port-check.ts';
import { EXIT_DATA_LOCKED } from '../../lib/data-lock.ts';
import { privateFolderAndFiles } from '../../lib/private-folder.ts';

export interface ChildSpec {
  name: string;
  cmd: string[];
  port: number;
  /** Its liveness route (`/healthz`), probed to tell `up` from `starting` and a live process from a hung one. */
  healthUrl: string;
}

/**
 * `unresponsive`: it was up and stopped answering its health route; it is being killed and
 * restarted. `port-taken`: it exited because another process holds its port; `data-locked`: another
 * live process holds its data folder (lib/data-lock.ts); both are retried with backoff.
 */
export type ChildState =
  | 'starting'
  | 'up'
  | 'unresponsive'
  | 'down'
  | 'port-taken'
  | 'data-locked'
  | 'stopped';

export interface ChildRow {
  name: string;
  port: number;
  pid: number | null;
  state: ChildState;
  restarts: number;
  /** When the current process started (ms), null when not running. */
  since: number | null;
}

/** Whether a health route answers as healthy within `timeoutMs` (a test may pass its own). */
export type HealthProbe = (url: string, timeoutMs: number) => Promise<boolean>;

const probeLiveness: HealthProbe = async (url, timeoutMs) =>
  (await probeHealth(url, { timeoutMs })).ok;

export interface SupervisorOptions {
  cwd: string;
  env: Record<string, string | undefined>;
  logDir: string;
  /** Called whenever a row changes. */
  onChange?: (row: ChildRow) => void;
  initialBackoffMs?: number;
  maxBackoffMs?: number;
  /** How often each child's health route is probed, and how long one probe may take. */
  healthEveryMs?: number;
  healthTimeoutMs?: number;
  /** A child that was up and has not answered for this long is killed (SIGKILL) and restarted. */
  unresponsiveAfterMs?: number;
  /** A child that never answers within this long after its start is killed and restarted. */
  startTimeoutMs?: number;
  graceMs?: number;
  probe?: HealthProbe;
}

interface Child {
  spec: ChildSpec;
  row: ChildRow;
  proc: Bun.Subprocess<'pipe', number, number> | null;
  backoffMs: number;
  restartTimer: ReturnType<typeof setTimeout> | null;
  /** When the current process last answered its health probe (its start time until it does). */
  lastAnswer: number;
  answered: boolean;
}

export class Supervisor {
  private readonly children: Child[];
  private stopping = false;
  private health: ReturnType<typeof setInterval> | null = null;
  private probing = false;

  constructor(
    specs: ChildSpec[],
    private readonly opts: SupervisorOptions,
  ) {
    this.children = specs.map((spec) => ({
      spec,
      row: {
        name: spec.name,
        port: spec.port,
        pid: null,
        state: 'stopped',
        restarts: 0,
        since: null,
      },
      proc: null,
      backoffMs: opts.initialBackoffMs ?? 500,
      restartTimer: null,
      lastAnswer: 0,
      answered: false,
    }));
  }

  rows(): ChildRow[] {
    return this.children.map((c) => ({ ...c.row }));
  }

  start(): void {
    // Logs say what the fleet did (paths, names, errors): for the fleet's own user only.
    privateFolderAndFiles(this.opts.logDir);
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
    // A stopped (SIGSTOP) child would never act on SIGTERM; SIGCONT lets it.
    for (const c of running) c.proc!.kill('SIGTERM'), c.proc!.kill('SIGCONT');
    const grace = setTimeout(
      () => running.forEach((c) => c.proc?.kill('SIGKILL')),
      this.opts.graceMs ?? 5000,
    );
    await Promise.all(running.map((c) => c.proc!.exited));
    clearTimeout(grace);
  }

  private update(c: Child, patch: Partial<ChildRow>): void {
    const before = JSON.stringify(c.row);
    Object.assign(c.row, patch);
    if (JSON.stringify(c.row) !== before) this.opts.onChange?.({ ...c.row });
  }

  private spawn(c: Child): void {
    const log = openSync(join(this.opts.logDir, `${c.spec.name}.log`), 'a', 0o600);
    // stdin is a pipe nobody writes to: it closes when this process dies, however it dies.
    const proc = Bun.spawn(c.spec.cmd, {
      cwd: this.opts.cwd,
      env: this.opts.env,
      stdout: log,
      stderr: log,
      stdin: 'pipe',
    });
    c.proc = proc;
    const started = Date.now();
    c.lastAnswer = started;
    c.answered = false;
    this.update(c, { pid: proc.pid, state: 'starting', since: started });
    void proc.exited.then((code) => {
      if (c.proc !== proc) return;
      c.proc = null;
      if (this.stopping) return this.update(c, { pid: null, state: 'stopped', since: null });
      this.update(c, {
        pid: null,
        state:
          code === EXIT_PORT_TAKEN
            ? 'port-taken'
            : code === EXIT_DATA_LOCKED
              ? 'data-locked'
              : 'down',
        since: null,
      });
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
    if (this.probing) return; // a round still waiting on hung children; the next tick comes soon
    this.probing = true;
    const probe = this.opts.probe ?? probeLiveness;
    const timeout = this.opts.healthTimeoutMs ?? 1000;
    try {
      await Promise.all(
        this.children.map(async (c) => {
          const proc = c.proc;
          if (!proc || c.row.state === 'unresponsive') return;
          const healthy = await probe(c.spec.healthUrl, timeout);
          if (c.proc !== proc || this.stopping) return;
          const now = Date.now();
          if (healthy) {
            c.lastAnswer = now;
            c.answered = true;
            return this.update(c, { state: 'up' });
          }
          const limit = c.answered
            ? (this.opts.unresponsiveAfterMs ?? 3000)
            : (this.opts.startTimeoutMs ?? 30_000);
          if (now - c.lastAnswer < limit)
            return this.update(c, { state: c.answered ? 'up' : 'starting' });
          // Alive but not answering (hung, stopped, deadlocked): only SIGKILL is sure to end it.
          this.update(c, { state: 'unresponsive' });
          proc.kill('SIGKILL');
        }),
      );
    } finally {
      this.probing = false;
    }
  }
}
