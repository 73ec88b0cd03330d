/**
 * @module lib/a2a/store/task-folder — a task record's stored form (`lume-a2a.task/1`): the JSON
 * the task log's lines carry and the file-per-task folder of earlier versions held (imported by
 * lib/a2a/store/log/migrate.ts), and what a store's index keeps of it.
 */

import { creatorOf, type TaskRecord } from './task-store.ts';
import type { IndexMeta } from './task-index.ts';
import { readEventLog } from './event-log.ts';
import { TASK_STATES, type PushConfig, type Task } from '../types.ts';

const FORMAT = 'lume-a2a.task/1';
const STATES: ReadonlySet<string> = new Set(TASK_STATES);
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

/** Parses a stored record; undefined when it is JSON but not one of ours. @throws SyntaxError on bad JSON. */
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
