/**
 * @module lib/node/fixture-file — a node's JSON data file, parsed once and re-read only when its
 * modification time changes (so editing a fixture needs no restart).
 */

import { readFileSync, statSync } from 'node:fs';

/** @throws Error when the file is missing or not JSON (a fixture bug: the surface that dispatched answers it as an internal error and logs it). */
export function jsonFixture<T>(file: string): () => T {
  let cached: { mtimeMs: number; value: T } | undefined;
  return () => {
    const { mtimeMs } = statSync(file);
    if (!cached || cached.mtimeMs !== mtimeMs)
      cached = { mtimeMs, value: JSON.parse(readFileSync(file, 'utf8')) as T };
    return cached.value;
  };
}
