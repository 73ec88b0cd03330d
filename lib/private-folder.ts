/**
 * @module lib/private-folder — folders only their owner may enter (0700) and files only their owner
 * may read (0600): the data folder holds keys, logs, job records and the console's redeemed
 * tickets, so another local user must not list or read it. Made so, and an existing one (from an
 * older version, or made with a loose umask) tightened at start.
 */

import { chmodSync, mkdirSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Makes `path` (and missing parents) 0700, and tightens it when it exists looser.
 * @returns false when it stays open to others (a folder this user does not own, such as /tmp).
 * @throws Error when the folder cannot be made.
 */
export function privateFolder(path: string): boolean {
  mkdirSync(path, { recursive: true, mode: 0o700 });
  if ((statSync(path).mode & 0o077) === 0) return true;
  try {
    chmodSync(path, 0o700);
    return true;
  } catch {
    return false;
  }
}

/** `privateFolder`, and every plain file directly in it 0600 (logs, job records). */
export function privateFolderAndFiles(path: string): boolean {
  const closed = privateFolder(path);
  for (const name of readdirSync(path)) {
    const file = join(path, name);
    try {
      const s = statSync(file);
      if (s.isFile() && (s.mode & 0o077) !== 0) chmodSync(file, s.mode & 0o700);
    } catch {}
  }
  return closed;
}
