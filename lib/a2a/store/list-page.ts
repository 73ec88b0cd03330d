/**
 * @module lib/a2a/store/list-page — a `ListTasks` page of the embedded store (the
 * task log's): the query checked, a page of ids from its SQLite index, the records read through
 * the store's cache, and the cursor of the next page; and the byte budget a page keeps to.
 */

import { type A2AError, isA2AError } from '../errors.ts';
import type { IndexQuery } from './task-index.ts';
import { encodeToken, pageCursor, type TaskRecord } from './task-store.ts';
import type { ListTasksPage, ListTasksQuery, Task } from '../types.ts';
import { withHistoryLength } from '../types.ts';
import { LIMITS } from '../../limits.ts';

/**
 * One page: `page` answers ids from the index, `get` reads a record. The page ends early once its
 * tasks pass `budget` (docs/limits.md): a page of 100 tasks, each with up to 4 MiB of history and
 * 16 MiB of artifacts, would otherwise be built whole in memory.
 */
export function listPage(
  q: ListTasksQuery,
  creator: string | null,
  page: (iq: IndexQuery) => { ids: [string, number][]; total: number },
  get: (id: string) => TaskRecord | undefined,
  budget: number = LIMITS.taskListPageBytes,
): ListTasksPage | A2AError {
  const after = pageCursor(q.pageToken);
  if (isA2AError(after)) return after;
  const since = q.statusTimestampAfter ? Date.parse(q.statusTimestampAfter) : Number.NaN;
  const { ids, total } = page({
    creator,
    ...(q.contextId !== undefined ? { contextId: q.contextId } : {}),
    ...(q.status !== undefined ? { state: q.status } : {}),
    ...(Number.isNaN(since) ? {} : { since }),
    ...(after ? { after } : {}),
    limit: q.pageSize + 1,
  });
  const slice = ids.slice(0, q.pageSize);
  const tasks: Task[] = [];
  let used = 0;
  let last = slice[slice.length - 1];
  let cut = false;
  for (const at of slice) {
    const rec = get(at[0]);
    if (!rec) continue;
    const task = withHistoryLength(rec.task, q.historyLength);
    // Measured as read, so a page of large tasks never holds more than the budget and one task.
    used += listedSize(task, q.includeArtifacts);
    if (used > budget && tasks.length) {
      cut = true;
      break;
    }
    tasks.push(task);
    last = at;
  }
  return {
    tasks,
    // A page cut by the budget goes on after its last task, like a full one.
    nextPageToken: (cut || ids.length > q.pageSize) && last ? encodeToken(last[1], last[0]) : '',
    pageSize: q.pageSize,
    totalSize: total,
  };
}

/** About the JSON a task adds to a page (characters): its artifacts only when the page has them. */
export function listedSize(task: Task, includeArtifacts: boolean): number {
  return jsonSize(includeArtifacts ? task : { ...task, artifacts: [] });
}

/** About the length of `v` as JSON (characters; no text is built): the page budget's measure. */
function jsonSize(v: unknown): number {
  if (typeof v === 'string') return v.length + 2;
  if (typeof v !== 'object' || v === null) return 8;
  let n = 2;
  if (Array.isArray(v)) {
    for (const x of v) n += jsonSize(x) + 1;
    return n;
  }
  for (const k in v) n += k.length + 4 + jsonSize((v as Record<string, unknown>)[k]);
  return n;
}
