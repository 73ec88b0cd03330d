/**
 * @module lib/a2a/store/task-folder — the JSON-file task store's folder: one file per task in 256
 * folders named by two hex digits of the id's random part (`<dir>/ab/<id>.json`), so no folder grows past
 * a few thousand entries; the record format; and what start-up does with the folder: move the
 * files of an older flat folder into their shards, rebuild a missing index from the files, and
 * check the rows of the writes a crash interrupted against their files.
 */

import { mkdirSync, readdirSync, readFileSync, renameSync, statSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import type { Log } from '../../log.ts';
import { isTaskId, creatorOf, type TaskRecord } from './task-store.ts';
import type { IndexMeta, TaskIndex } from './task-index.ts';
import { readEventLog } from './event-log.ts';
import { TASK_STATES, type PushConfig, type Task } from '../types.ts';

const FORMAT = 'lume-a2a.task/1';
const STATES: ReadonlySet<string> = new Set(TASK_STATES);
const SHARD = /^[0-9a-f]{2}$/;
/** The index database and its WAL files, the only other names in the folder. */
const INDEX_FILES = new Set(['index.sqlite', 'index.sqlite-wal', 'index.sqlite-shm']);

/**
 * The folder of a task's file: two hex digits of its id's random bits, the last two for a UUIDv7
 * (its first ones are a timestamp, the same for years), the first two for a UUIDv4 of an older
 * folder (where it already lies).
 */
const shardOf = (id: string): string => (id[14] === '7' ? id.slice(-2) : id.slice(0, 2));

/** Where a task's file lives (the id must have passed `isTaskId`). */
export const taskFilePath = (dir: string, id: string): string =>
  join(dir, shardOf(id), `${id}.json`);

/** What the index keeps of a record. */
export function metaOf(rec: TaskRecord): IndexMeta {
  return {
    creator: creatorOf(rec),
    contextId: rec.task.contextId,
    state: rec.task.status.state,
    ts: Date.parse(rec.task.status.timestamp) || 0,
  };
}

/** A record as stored. */
export function encodeRecord(rec: TaskRecord): string {
  return JSON.stringify({
    format: FORMAT,
    task: rec.task,
    push: rec.push,
    ...(rec.creator ? { creator: rec.creator } : {}),
    ...(rec.events?.length ? { events: rec.events } : {}),
  });
}

/** Parses a task file; undefined when it is JSON but not one of ours. @throws SyntaxError on bad JSON. */
export function parseRecord(text: string, id: string): TaskRecord | undefined {
  const doc = JSON.parse(text) as {
    format?: unknown;
    task?: Partial<Task>;
    push?: unknown;
    creator?: unknown;
    events?: unknown;
  };
  const t = doc?.task;
  if (
    doc?.format !== FORMAT ||
    !t ||
    t.id !== id ||
    typeof t.contextId !== 'string' ||
    !t.status ||
    !STATES.has(t.status.state as string) ||
    typeof t.status.timestamp !== 'string' ||
    !Array.isArray(t.history) ||
    !Array.isArray(t.artifacts)
  )
    return undefined;
  const events = readEventLog(doc.events);
  return {
    task: t as Task,
    push: Array.isArray(doc.push) ? (doc.push as PushConfig[]) : [],
    ...(typeof doc.creator === 'string' ? { creator: doc.creator } : {}),
    ...(events ? { events } : {}),
  };
}

/** Reads and checks one file: the record, `absent`, or why it cannot be used. */
function readRecordFile(path: string, id: string): TaskRecord | 'absent' | Error {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'ENOENT' ? 'absent' : (e as Error);
  }
  try {
    return parseRecord(text, id) ?? new Error('not a task record of this format');
  } catch (e) {
    return e as Error;
  }
}

/**
 * Prepares the folder at start and answers how many task files it holds: creates the shards,
 * moves the files of a flat folder (an older version's layout) into them, rebuilds the index
 * when it is new, and repairs the rows of writes a crash interrupted. Foreign and corrupt files are skipped
 * with a log line and left in place.
 */
export function prepareFolder(dir: string, index: TaskIndex, log: Log): void {
  for (let i = 0; i < 256; i++)
    mkdirSync(join(dir, i.toString(16).padStart(2, '0')), { recursive: true, mode: 0o700 });
  if (index.needsRebuild) {
    for (let i = 0; i < 256; i++) indexShard(dir, i.toString(16).padStart(2, '0'), index, log);
    index.rebuilt();
  }
  const flat: [string, IndexMeta][] = [];
  for (const name of readdirSync(dir)) {
    if (INDEX_FILES.has(name)) continue;
    if (SHARD.test(name) && statSync(join(dir, name)).isDirectory()) continue;
    const path = join(dir, name);
    if (name.endsWith('.tmp')) {
      // Left over from a write an older version's crash interrupted; the previous file is intact.
      try {
        unlinkSync(path);
      } catch {}
      continue;
    }
    const id = name.endsWith('.json') ? name.slice(0, -5) : '';
    if (!isTaskId(id)) {
      log('warn', 'skipping foreign file in task folder', { file: name });
      continue;
    }
    const rec = readRecordFile(path, id);
    if (rec === 'absent') continue;
    if (rec instanceof Error) {
      log('warn', 'skipping corrupt task file', { file: name, error: rec.message });
      continue;
    }
    renameSync(path, taskFilePath(dir, id));
    flat.push([id, metaOf(rec)]);
  }
  if (flat.length) {
    index.putClean(flat);
    log('info', 'task files moved into sharded folders', { files: flat.length });
  }
  repairDirty(dir, index, log);
}

/** Indexes one shard's files (a rebuild); removes what interrupted writes left. */
function indexShard(dir: string, shard: string, index: TaskIndex, log: Log): void {
  const rows: [string, IndexMeta][] = [];
  for (const name of readdirSync(join(dir, shard))) {
    const path = join(dir, shard, name);
    if (name.endsWith('.tmp')) {
      try {
        unlinkSync(path);
      } catch {}
      continue;
    }
    const id = name.endsWith('.json') ? name.slice(0, -5) : '';
    if (!isTaskId(id) || shardOf(id) !== shard) {
      log('warn', 'skipping foreign file in task folder', { file: join(shard, name) });
      continue;
    }
    const rec = readRecordFile(path, id);
    if (rec === 'absent') continue;
    if (rec instanceof Error) {
      log('warn', 'skipping corrupt task file', { file: join(shard, name), error: rec.message });
      continue;
    }
    rows.push([id, metaOf(rec)]);
  }
  index.putClean(rows);
}

/**
 * The rows marked before a write that a crash interrupted: each takes what its file says; a new
 * task's file that was never completed (the client was not answered) goes with its row, and the
 * temporary files of interrupted replacements are removed.
 */
function repairDirty(dir: string, index: TaskIndex, log: Log): void {
  const dirty = index.writingIds();
  if (!dirty.length) return;
  const fixed: [string, IndexMeta][] = [];
  const gone: string[] = [];
  for (const id of dirty) {
    const path = taskFilePath(dir, id);
    const rec = readRecordFile(path, id);
    if (rec === 'absent' || rec instanceof Error) {
      gone.push(id);
      try {
        unlinkSync(path);
      } catch {}
    } else fixed.push([id, metaOf(rec)]);
  }
  const shards = new Set(dirty.map(shardOf));
  const ids = new Set(dirty);
  for (const shard of shards)
    for (const name of readdirSync(join(dir, shard))) {
      // `.<id>.json.<pid>.<seq>.tmp`, written by lib/atomic-file.ts
      if (name.endsWith('.tmp') && ids.has(name.slice(1, 37))) {
        try {
          unlinkSync(join(dir, shard, name));
        } catch {}
      }
    }
  index.remove(gone);
  index.putClean(fixed);
  log('info', 'task index repaired after a crash', { checked: dirty.length, dropped: gone.length });
}

/** The stored record of a task, or undefined (absent, unreadable: logged). */
export function readTaskFile(
  dir: string,
  id: string,
  log: Log,
): { rec: TaskRecord; bytes: number } | undefined {
  let text: string;
  try {
    text = readFileSync(taskFilePath(dir, id), 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT')
      log('warn', 'task file unreadable', { task: id, error: (e as Error).message });
    return undefined;
  }
  try {
    const rec = parseRecord(text, id);
    if (rec) return { rec, bytes: Buffer.byteLength(text, 'utf8') };
    log('warn', 'task file unreadable', { task: id, error: 'not a task record of this format' });
  } catch (e) {
    log('warn', 'task file unreadable', { task: id, error: (e as Error).message });
  }
  return undefined;
}
