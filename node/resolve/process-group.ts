/**
 * @module node/resolve/process-group — process-group helpers for the executor: a job runs as the leader of its
 * own group (pgid = pid), so one signal reaches the job and every child it started; and after a
 * crash of the executor, what is left of a job's group is found again and ended.
 */

import { readdirSync, readFileSync } from 'node:fs';
import { procStartTime, procStatFields } from '../../lib/proc-stat.ts';

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
 * Ends what a dead executor left of a job: the whole group while its leader is still the process
 * the job started (same pid and start time); otherwise the members of the group whose environment
 * names the job (`JOB_ID`): the leader has exited, a child it started lives on. Anything else
 * (a stranger that reused the pid, or a group of someone else's) is left alone.
 * Returns the pids signalled (the leader alone stands for its group).
 */
export function endOrphanedJob(
  pgid: number,
  procStart: number | undefined,
  jobId: string,
): number[] {
  if (procStart !== undefined && procStartTime(pgid) === procStart)
    return signalGroup(pgid, 'SIGKILL') ? [pgid] : [];
  const ended: number[] = [];
  for (const pid of groupMembers(pgid)) {
    if (!environNames(pid, `JOB_ID=${jobId}`)) continue;
    try {
      process.kill(pid, 'SIGKILL');
      ended.push(pid);
    } catch {}
  }
  return ended;
}

/** The live processes whose process group is `pgid` (Linux /proc; empty elsewhere). */
function groupMembers(pgid: number): number[] {
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return [];
  }
  return entries
    .filter((e) => /^\d+$/.test(e))
    .map(Number)
    .filter((pid) => Number(procStatFields(pid)?.[2]) === pgid);
}

/** Whether the process's environment holds exactly this `NAME=value` entry (own processes only). */
function environNames(pid: number, entry: string): boolean {
  try {
    return readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').includes(entry);
  } catch {
    return false;
  }
}
