/**
 * @module lib/data-lock — one process per data folder: a node or the hub takes `<folder>/process.lock`
 * (its pid inside) before it opens its stores, so a second copy started on another port stops at
 * once with one line naming the folder and the holder's pid, and the exit code `EXIT_DATA_LOCKED`.
 * A lock left by a process that is gone (kill -9, power loss) is taken over.
 */

import { lstatSync, mkdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { procStartTime } from './proc-stat.ts';

/** Exit code of a process whose data folder another live process holds (75 is EX_TEMPFAIL). */
export const EXIT_DATA_LOCKED = 75;

/** The lock file's name inside the data folder. */
export const LOCK_FILE = 'process.lock';

export type DataLock =
  | { ok: true; path: string; release(): void }
  | { ok: false; path: string; holder: number };

/** The holder written in a lock file: `<pid>\n<start ticks>\n`; undefined when unreadable or torn. */
function readHolder(path: string): { pid: number; ticks?: string } | undefined {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    // A dangling symlink cannot be created over (EEXIST) nor read (ENOENT): it holds nobody.
    try {
      if (lstatSync(path).isSymbolicLink()) return { pid: 0 };
    } catch {}
    return undefined;
  }
  const [pid, ticks] = text.split('\n');
  if (!pid || !/^[1-9][0-9]{0,9}$/.test(pid)) return { pid: 0 };
  return { pid: Number(pid), ...(ticks ? { ticks } : {}) };
}

/** Whether the holder is a live process other than this one (a pid of ours is a lock left by our own earlier life). */
function alive(holder: { pid: number; ticks?: string }): boolean {
  if (holder.pid <= 0 || holder.pid === process.pid) return false;
  try {
    process.kill(holder.pid, 0);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EPERM') return false; // ESRCH: no such process
  }
  // The start time tells a reused pid from the holder (ticks are written as their decimal digits).
  const now = procStartTime(holder.pid);
  return !(holder.ticks && now !== undefined && String(now) !== holder.ticks);
}

const body = () => `${process.pid}\n${procStartTime(process.pid) ?? ''}\n`;

/** Creates `path` holding our pid; false when it exists already. */
function createExclusive(path: string): boolean {
  try {
    writeFileSync(path, body(), { flag: 'wx', mode: 0o600 });
    return true;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw e;
  }
}

/** Removes a lock file if it still names `pid` (ours, or a process that died mid-takeover). */
function removeIfHeldBy(path: string, pid: number): void {
  try {
    if (readHolder(path)?.pid === pid) unlinkSync(path);
  } catch {
    // already gone
  }
}

/**
 * Takes the folder's lock (creating the folder, mode 0700). A stale lock is replaced under a
 * second exclusive file (`process.lock.takeover`), so two processes finding the same stale lock
 * cannot both take it: the one holding the takeover re-reads the lock before replacing it.
 * The lock is removed when this process exits normally; after a kill it stays and is stale.
 * @throws on file-system errors other than the lock being held (a folder that cannot be written)
 */
function acquireDataLock(folder: string): DataLock {
  mkdirSync(folder, { recursive: true, mode: 0o700 });
  const path = join(folder, LOCK_FILE);
  const takeover = `${path}.takeover`;
  for (let attempt = 0; attempt < 20; attempt++) {
    if (createExclusive(path)) return held(path);
    const holder = readHolder(path);
    if (!holder) continue; // removed in between: try to create it again
    if (alive(holder)) return { ok: false, path, holder: holder.pid };
    if (!createExclusive(takeover)) {
      const other = readHolder(takeover);
      if (other && !alive(other)) removeIfHeldBy(takeover, other.pid);
      continue; // someone else is taking it over: look again
    }
    try {
      const now = readHolder(path);
      if (!now || (now.pid === holder.pid && now.ticks === holder.ticks)) {
        if (now) unlinkSync(path);
        if (createExclusive(path)) return held(path);
      }
    } finally {
      removeIfHeldBy(takeover, process.pid);
    }
  }
  const holder = readHolder(path);
  return { ok: false, path, holder: holder?.pid ?? 0 };
}

function held(path: string): DataLock {
  const release = () => removeIfHeldBy(path, process.pid);
  process.once('exit', release);
  return {
    ok: true,
    path,
    release() {
      process.off('exit', release);
      release();
    },
  };
}

/** The one line a process prints when its data folder is held. */
function dataLockedLine(name: string, folder: string, holder: number): string {
  return `${name}: the data folder ${folder} is in use by process ${holder} (another copy of ${name}); stop it, or give this one its own DATA_DIR.`;
}

/** Takes the lock, or prints `dataLockedLine` and exits with `EXIT_DATA_LOCKED` (no stack trace). */
export function lockDataOrExit(name: string, folder: string): DataLock & { ok: true } {
  let lock: DataLock;
  try {
    lock = acquireDataLock(folder);
  } catch (e) {
    console.error(`${name}: cannot lock the data folder ${folder}: ${(e as Error).message}`);
    process.exit(2);
  }
  if (lock.ok) return lock;
  console.error(dataLockedLine(name, folder, lock.holder));
  process.exit(EXIT_DATA_LOCKED);
}
