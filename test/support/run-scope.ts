/**
 * Test support: what one `bun test` run leaves behind. The preload (setup.ts) gives the run its own
 * temporary folder and points `TMPDIR` at it, so every temp folder the suite or its child
 * processes make lands there; at the end the folder must be empty and no process may still
 * carry it in its environment (`TMPDIR`, or a `HOME`/`DATA_DIR` under it). Linux's /proc is read
 * for processes; elsewhere only folders are checked.
 */

import {
  accessSync,
  constants,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Where the run's folder goes: a memory file system when the machine has one (Linux's /dev/shm),
 * else the OS temp directory. The suite's stores fsync as they promise; on a disk each fsync is a
 * wait of its own, and a kill -9 test needs the write to have happened, not to have reached a disk.
 * `TMPDIR` set by the caller wins.
 */
function runParent(): string {
  if (process.env.TMPDIR) return tmpdir();
  try {
    accessSync('/dev/shm', constants.W_OK);
    return '/dev/shm';
  } catch {
    return tmpdir();
  }
}

/** Chosen once, before a scope routes `TMPDIR` to itself (a worker opens one scope per file). */
const PARENT = runParent();

/**
 * Removes the scopes of test processes that are gone. A `--parallel` worker is ended without its
 * hooks running, so the (empty) scope it opened for a next file stays; the next run sweeps it.
 */
function sweepScopesOfGoneProcesses(): void {
  let names: string[] = [];
  try {
    names = readdirSync(PARENT);
  } catch {}
  for (const name of names) {
    const pid = Number(/^lume-a2a-run-(\d+)-/.exec(name)?.[1]);
    if (!pid || pid === process.pid || alive(pid)) continue;
    rmSync(join(PARENT, name), { recursive: true, force: true });
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Makes the run's folder (named with this process's id) and routes `os.tmpdir()` (here and in children) to it. */
export function openRunScope(): string {
  sweepScopesOfGoneProcesses();
  const root = mkdtempSync(join(PARENT, `lume-a2a-run-${process.pid}-`));
  process.env.TMPDIR = root;
  return root;
}

/**
 * A folder that lives as long as this process, for what outlives one file's scope (a worker's
 * shared browser): beside the scopes, named like them, so a later run sweeps it once the process
 * is gone.
 */
export function processFolder(name: string): string {
  const dir = join(PARENT, `lume-a2a-run-${process.pid}-${name}`);
  mkdirSync(dir, { recursive: true });
  return dir;
}

export interface Leftover {
  pid: number;
  command: string;
}

/** Live processes other than this one whose environment names `root` (a zombie is not live). */
export function processesOf(root: string): Leftover[] {
  let pids: string[];
  try {
    pids = readdirSync('/proc').filter((n) => /^\d+$/.test(n) && Number(n) !== process.pid);
  } catch {
    return [];
  }
  const out: Leftover[] = [];
  for (const pid of pids) {
    try {
      const env = readFileSync(`/proc/${pid}/environ`, 'utf8');
      if (!env.split('\0').some((kv) => kv.includes(root))) continue;
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      if (stat.slice(stat.lastIndexOf(')') + 2)[0] === 'Z') continue;
      out.push({
        pid: Number(pid),
        command: readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim(),
      });
    } catch {
      // gone meanwhile, or not ours to read
    }
  }
  return out;
}

/**
 * Checks the run's folder and processes, then removes and ends whatever is left (so one faulty
 * test does not leave the machine dirty), and describes what was left; empty when nothing was.
 * A process that is already exiting gets a bounded moment to finish first.
 */
export async function closeRunScope(root: string): Promise<string[]> {
  let procs = processesOf(root);
  for (let i = 0; i < 100 && procs.length; i++) {
    await Bun.sleep(20);
    procs = processesOf(root);
  }
  let entries: string[] = [];
  try {
    entries = readdirSync(root);
  } catch {}
  for (const p of procs) {
    for (const target of [-p.pid, p.pid]) {
      try {
        process.kill(target, 'SIGKILL');
      } catch {}
    }
  }
  rmSync(root, { recursive: true, force: true });
  return [
    ...entries.map((e) => `temp entry ${e}`),
    ...procs.map((p) => `process ${p.pid}: ${p.command}`),
  ];
}
