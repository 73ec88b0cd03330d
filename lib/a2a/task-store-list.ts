/**
 * @module lib/a2a/task-store-list — a `ListTasks` page of an embedded store (the JSON files' and the
 * task log's): the query checked, a page of ids from its SQLite index, the records read through
 * the store's cache, and the cursor of the next page.
 */

import { type A2AError, isA2AError } from './errors.ts';
import type { IndexQuery } from './task-index.ts';
import { encodeToken, pageCursor, type TaskRecord } from './task-store.ts';
import type { ListTasksPage, ListTasksQuery, Task } from './types.ts';
import { withHistoryLength } from './types.ts';

/** One page: `page` answers ids from the index, `get` reads a record. */
export function listPage(
  q: ListTasksQuery,
  creator: string | null,
  page: (iq: IndexQuery) => { ids: [string, number][]; total: number },
  get: (id: string) => TaskRecord | undefined,
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
  for (const [id] of slice) {
    const rec = get(id);
    if (rec) tasks.push(withHistoryLength(rec.task, q.historyLength));
  }
  const last = slice[slice.length - 1];
  return {
    tasks,
    nextPageToken: ids.length > q.pageSize && last ? encodeToken(last[1], last[0]) : '',
    pageSize: q.pageSize,
    totalSize: total,
  };
}
