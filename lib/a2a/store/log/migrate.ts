/**
 * @module lib/a2a/store/log/migrate — a task folder in the file-per-task layout (lib/a2a/store/task-folder.ts)
 * read once into the log at start: every task file is appended as a record, the log is synced
 * and its index committed, and only then are the files and the old index removed. A crash in
 * between repeats the import at the next start (a task already in the log is not taken again);
 * foreign and unreadable files are left in place with a log line.
 */

import { existsSync, readdirSync, readFileSync, rmdirSync, statSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import type { Log } from '../../../log.ts';
import { metaOf, parseRecord } from '../task-folder.ts';
import { isTaskId } from '../task-store.ts';
import { encodeFrames, KIND_RECORD, type Outgoing } from './frame.ts';
import type { LogIndex } from './log-index.ts';
import type { Segments } from './segments.ts';

const SHARD = /^[0-9a-f]{2}$/;
const OLD_INDEX = ['index.sqlite', 'index.sqlite-wal', 'index.sqlite-shm'];
/** Records per append of the import. */
const BATCH = 1_000;

/** True when the folder holds the file-per-task layout (shard folders, task files or its index). */
export function hasFileLayout(dir: string): boolean {
  if (OLD_INDEX.some((n) => existsSync(join(dir, n)))) return true;
  return readdirSync(dir).some(
    (n) =>
      (SHARD.test(n) && statSync(join(dir, n)).isDirectory()) ||
      (n.endsWith('.json') && isTaskId(n.slice(0, -5))),
  );
}

/** The task files of the layout: the shard folders' and an older flat folder's. */
function taskFiles(dir: string): { path: string; id: string }[] {
  const out: { path: string; id: string }[] = [];
  const take = (folder: string, name: string) => {
    const path = join(folder, name);
    if (name.endsWith('.tmp')) {
      try {
        unlinkSync(path); // an interrupted replacement's; the file it replaced is intact
      } catch {}
      return;
    }
    const id = name.endsWith('.json') ? name.slice(0, -5) : '';
    if (isTaskId(id)) out.push({ path, id });
  };
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (SHARD.test(name) && statSync(path).isDirectory())
      for (const inner of readdirSync(path)) take(path, inner);
    else if (name.endsWith('.json') || name.endsWith('.tmp')) take(dir, name);
  }
  return out;
}

/** Appends a batch of imported records and indexes them. */
function appendBatch(
  segments: Segments,
  index: LogIndex,
  batch: Outgoing[],
  metas: Parameters<LogIndex['put']>[1][],
): void {
  if (!batch.length) return;
  const sizes: number[] = [];
  const at = segments.append(encodeFrames(batch, sizes));
  let off = at.off;
  for (let i = 0; i < batch.length; i++) {
    const id = batch[i]!.id;
    index.put(id, metas[i]!, { seg: at.seg, off, size: sizes[i]! }, index.locate(id));
    off += sizes[i]!;
  }
  batch.length = 0;
  metas.length = 0;
}

/**
 * Imports the file-per-task layout in `dir` into the log; answers how many tasks it took.
 * @throws the file-system error when the log cannot be written (nothing is removed then).
 */
export function migrateFiles(dir: string, segments: Segments, index: LogIndex, log: Log): number {
  const files = taskFiles(dir);
  const batch: Outgoing[] = [];
  const metas: Parameters<LogIndex['put']>[1][] = [];
  const done: string[] = [];
  let taken = 0;
  for (const { path, id } of files) {
    if (index.locate(id)) {
      done.push(path); // imported by a run a crash interrupted
      continue;
    }
    let rec: ReturnType<typeof parseRecord>;
    let json = '';
    try {
      json = readFileSync(path, 'utf8');
      rec = parseRecord(json, id);
    } catch {
      rec = undefined;
    }
    if (!rec) {
      log('warn', 'task file not imported into the log (unreadable), left in place', {
        file: path,
      });
      continue;
    }
    batch.push({ kind: KIND_RECORD, id, json });
    metas.push(metaOf(rec));
    done.push(path);
    taken++;
    if (batch.length >= BATCH) appendBatch(segments, index, batch, metas);
  }
  appendBatch(segments, index, batch, metas);
  index.advance(segments.end);
  index.commit();
  // The copies are on disk before any original goes.
  segments.syncAll();
  for (const path of done) unlinkSync(path);
  for (const n of OLD_INDEX)
    try {
      unlinkSync(join(dir, n));
    } catch {}
  for (const name of readdirSync(dir))
    if (SHARD.test(name))
      try {
        rmdirSync(join(dir, name)); // only when empty: a file left in place keeps its folder
      } catch {}
  log('info', 'task files imported into the task log', { tasks: taken, files: files.length });
  return taken;
}
