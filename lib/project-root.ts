/**
 * @module lib/project-root — the folder the kit runs from: the nearest folder at or above this
 * file's that holds a package.json (the repository, or node_modules/lume-a2a when installed).
 * Found by walking up rather than by a fixed `../..`, so a module answers the same from its
 * source file and from a bundle of it (`bun build` puts modules of every depth in one file).
 */

import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** The nearest folder at or above `from` with a package.json; `from` itself when none has one. */
function findProjectRoot(from: string): string {
  for (let dir = from; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json'))) return dir;
    if (dirname(dir) === dir) return from;
  }
}

/** The project's folder (or the installed package's). */
export const PROJECT_ROOT = findProjectRoot(import.meta.dir);
