/**
 * @module lib/a2a/task-store-postgres/list — one page of a node's tasks from the shared store:
 * the caller's own (by creator), filtered by context, state and time, newest first, with the
 * total and an opaque cursor for the next page.
 */

import type { SQL } from 'bun';
import { type A2AError, isA2AError } from '../errors.ts';
import type { ListTasksPage, ListTasksQuery, Task } from '../types.ts';
import { withHistoryLength } from '../types.ts';
import { encodeToken, pageCursor } from '../task-store.ts';

export async function listTasks(
  sql: SQL,
  node: string,
  q: ListTasksQuery,
  creator: string | null,
): Promise<ListTasksPage | A2AError> {
  const after = pageCursor(q.pageToken);
  if (isA2AError(after)) return after;
  const since = q.statusTimestampAfter ? Date.parse(q.statusTimestampAfter) : null;
  const context = q.contextId ?? null;
  const state = q.status ?? null;
  const filter = sql`node = ${node}
    AND (${creator}::text IS NULL OR coalesce(creator, 'anonymous') = ${creator}::text)
    AND (${context}::text IS NULL OR context_id = ${context}::text)
    AND (${state}::text IS NULL OR state = ${state}::text)
    AND (${since}::bigint IS NULL OR ts >= ${since}::bigint)`;
  const [counted] = await sql<
    { n: string }[]
  >`SELECT count(*) AS n FROM lume_a2a_tasks WHERE ${filter}`;
  const total = Number(counted!.n);
  const cursor = after ? sql`AND (ts, id) < (${after[0]}::bigint, ${after[1]}::uuid)` : sql``;
  const rows = await sql<{ id: string; ts: string; task: string; position: string }[]>`
    SELECT id, ts, task FROM lume_a2a_tasks WHERE ${filter} ${cursor}
    ORDER BY ts DESC, id DESC LIMIT ${q.pageSize + 1}`;
  const more = rows.length > q.pageSize;
  const page = rows.slice(0, q.pageSize);
  const tasks = page.map((r) => withHistoryLength(JSON.parse(r.task) as Task, q.historyLength));
  const last = page[page.length - 1];
  return {
    tasks,
    nextPageToken: more && last ? encodeToken(Number(last.ts), last.id) : '',
    pageSize: q.pageSize,
    totalSize: total,
  };
}
