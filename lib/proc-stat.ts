/**
 * @module lib/proc-stat — one reader of Linux's `/proc/<pid>/stat` for everything that looks at a
 * process: its start time (which, with the pid, names one process even after pid reuse), its
 * state, its group and its CPU time. Elsewhere (no /proc) every answer is undefined.
 */

import { readFileSync } from 'node:fs';

/**
 * The fields after the command name (which may itself hold spaces or parentheses), so index 0 is
 * stat's field 3 (state); undefined when the process is gone or there is no /proc.
 */
export function procStatFields(pid: number): string[] | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined;
  }
}

/** The process's start time in clock ticks since boot (stat field 22). */
export function procStartTime(pid: number): number | undefined {
  const start = Number(procStatFields(pid)?.[19]);
  return Number.isFinite(start) ? start : undefined;
}
