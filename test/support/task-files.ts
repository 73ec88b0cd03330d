/**
 * @module test/support/task-files — a task folder in the file-per-task layout of earlier versions
 * (`<dir>/<two hex digits>/<id>.json`, the record as lib/a2a/store/task-folder.ts encodes it), as
 * a node of such a version left it: what the task log imports once at its first start.
 */

import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { encodeRecord } from '../../lib/a2a/store/task-folder.ts';
import type { TaskRecord } from '../../lib/a2a/store/task-store.ts';

/** Where the layout kept a task's file: the last two hex digits of a UUIDv7, the first two of a v4. */
export function taskFilePath(dir: string, id: string): string {
  return join(dir, id[14] === '7' ? id.slice(-2) : id.slice(0, 2), `${id}.json`);
}

/** Writes each record as its own file in the layout, in `dir`. */
export function writeTaskFiles(dir: string, recs: TaskRecord[]): void {
  for (const rec of recs) {
    const path = taskFilePath(dir, rec.task.id);
    mkdirSync(join(path, '..'), { recursive: true, mode: 0o700 });
    writeFileSync(path, encodeRecord(rec), { mode: 0o600 });
  }
}
