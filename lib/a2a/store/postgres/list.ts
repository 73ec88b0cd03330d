/**
 * @module lib/a2a/store/postgres/list — one page of a node's tasks from the shared store:
 * the caller's own (by creator), filtered by context, state and time, newest first, with the
 * total and an opaque cursor for the next page; the page ends early past `budget` bytes of stored
 * JSON (docs/limits.md).
 */

import type { SQL } from 'bun';
import { type A2AError, isA2AError } from '../../errors.ts';
import type { ListTasksPage, ListTasksQuery, Task } from '../../types.ts';
import { withHistoryLength } from '../../types.ts';
import { encodeToken, pageCursor } from '../task-store.ts';

export async function listTasks(
  sql: SQL,
  node: string,
  q: ListTasksQuery,
  creator: string | null,
  budget: number,
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
  // The page is cut by its stored JSON in the query, so rows past the budget never reach this
  // process: `before` is what the rows ahead of a row weigh (octet_length reads the stored size).
  const rows = await sql<{ id: string; ts: string; task: string; fetched: string }[]>`
    SELECT id, ts, task, fetched FROM (
      SELECT id, ts, task, count(*) OVER () AS fetched,
        coalesce(sum(octet_length(task)) OVER (ORDER BY ts DESC, id DESC
          ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0) AS before
      FROM (SELECT id, ts, task FROM lume_a2a_tasks WHERE ${filter} ${cursor}
        ORDER BY ts DESC, id DESC LIMIT ${q.pageSize + 1}) AS page
    ) AS measured
    WHERE before = 0 OR before + octet_length(task) <= ${budget}
    ORDER BY ts DESC, id DESC`;
  const fetched = rows.length ? Number(rows[0]!.fetched) : 0;
  const page = rows.slice(0, q.pageSize);
  // More follow when the query found a row past the page, or the budget left rows out.
  const more = fetched > q.pageSize || rows.length < fetched;
  const tasks = page.map((r) => withHistoryLength(JSON.parse(r.task) as Task, q.historyLength));
  const last = page[page.length - 1];
  return {
    tasks,
    nextPageToken: more && last ? encodeToken(Number(last.ts), last.id) : '',
    pageSize: q.pageSize,
    totalSize: total,
  };
}
