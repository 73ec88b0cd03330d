/**
 * @module test/support/content-hash — what the suite's build caches key on and how they stay
 * small: a hash of named files (each name and its bytes), and the newest few entries of a cache
 * folder kept.
 */

import { readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';

/** A hash of `files` (paths relative to `root`, in the order given): each path, then its bytes. */
export function hashFiles(root: string, files: readonly string[]): string {
  const h = new Bun.CryptoHasher('sha256');
  for (const f of files) {
    h.update(f);
    h.update(readFileSync(join(root, f)));
  }
  return h.digest('hex');
}

/** Removes all but the `keep` newest entries of `dir` that `counts` (files or folders). */
export function keepNewest(dir: string, keep: number, counts: (name: string) => boolean): void {
  const older = readdirSync(dir)
    .filter(counts)
    .map((name) => ({ path: join(dir, name), at: statSync(join(dir, name)).mtimeMs }))
    .sort((a, b) => b.at - a.at)
    .slice(keep);
  for (const { path } of older) rmSync(path, { recursive: true, force: true });
}
