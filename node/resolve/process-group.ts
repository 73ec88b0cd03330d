/**
 * @module resolve-proc — process-group helpers for the executor: a job runs as the leader of its
 * own group (pgid = pid), so one signal reaches the job and every child it started.
 */

import { readFileSync } from 'node:fs';

/** Signals the whole group; false when it no longer exists. */
export function signalGroup(pgid: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(-pgid, signal);
    return true;
  } catch {
    return false;
  }
}

/**
 * The process's start time in clock ticks since boot (/proc/<pid>/stat field 22); undefined where
 * /proc is absent or the process is gone. With the pid it names one process, even after pid reuse.
 */
export function procStartTime(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name, which may itself contain spaces or parentheses.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const start = Number(fields[19]);
    return Number.isFinite(start) ? start : undefined;
  } catch {
    return undefined;
  }
}
