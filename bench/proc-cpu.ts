/**
 * @module bench/proc-cpu — CPU time (user + system) of processes on Linux, read from
 * /proc/<pid>/stat, so a benchmark can report CPU per message of each process: a figure that
 * holds up on a shared, noisy machine better than throughput does.
 */

import { readdirSync } from 'node:fs';
import { procStatFields } from '../lib/proc-stat.ts';

/** Clock ticks per second of /proc's times (USER_HZ; 100 on Linux on every common architecture). */
const TICKS = 100;

/** CPU milliseconds a process has used so far (0 when it is gone). */
export function cpuMs(pid: number): number {
  const f = procStatFields(pid);
  // Fields 14 and 15 of stat (utime, stime) are 11 and 12 after the name.
  return f ? ((Number(f[11]) + Number(f[12])) * 1000) / TICKS : 0;
}

/**
 * CPU milliseconds of a process tree's root and its children: the live children's own time plus
 * what exited children left in the root's `cutime`/`cstime`. Suits PostgreSQL, whose backends are
 * children of the postmaster.
 */
export function treeCpuMs(root: number): number {
  const f = procStatFields(root);
  if (!f) return 0;
  let ticks = Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14]);
  for (const name of readdirSync('/proc')) {
    const pid = Number(name);
    if (!Number.isInteger(pid) || pid === root) continue;
    const c = procStatFields(pid);
    if (c && Number(c[1]) === root) ticks += Number(c[11]) + Number(c[12]);
  }
  return (ticks * 1000) / TICKS;
}
