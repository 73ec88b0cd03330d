/**
 * @module lib/a2a/store/task-index — what an embedded store's index keeps of each task (creator,
 * context, state, status time) and the listing over it: one page of ids, newest status first,
 * from a SQLite `tasks` table (the task log's, lib/a2a/store/log/log-index.ts), so that a first
 * `ListTasks` page costs the same with a million tasks as with none.
 */

import type { Database } from 'bun:sqlite';
import type { TaskState } from '../types.ts';

/** What the index keeps of a task. */
export interface IndexMeta {
  creator: string;
  contextId: string;
  state: TaskState;
  /** Status timestamp in ms, the ListTasks sort key. */
  ts: number;
}

/** The filters of one listing (the store has checked them). */
export interface IndexQuery {
  creator: string | null;
  contextId?: string;
  state?: TaskState;
  since?: number;
  /** The cursor: rows strictly after this (ts, id) in newest-first order. */
  after?: [number, string];
  limit: number;
}

/**
 * One page of ids from a `tasks` table with `id`, `creator`, `context`, `state` and `ts` columns
 * (the task log's index), newest status first, the id breaking ties; with the
 * filter and its arguments, for the caller's count of the rows that match.
 */
export function pageOfIds(
  db: Database,
  q: IndexQuery,
): { ids: [string, number][]; filter: string; args: (string | number)[] } {
  const where: string[] = [];
  const args: (string | number)[] = [];
  if (q.creator !== null) where.push('creator = ?'), args.push(q.creator);
  if (q.contextId !== undefined) where.push('context = ?'), args.push(q.contextId);
  if (q.state !== undefined) where.push('state = ?'), args.push(q.state);
  if (q.since !== undefined) where.push('ts >= ?'), args.push(q.since);
  const filter = where.length ? ` WHERE ${where.join(' AND ')}` : '';
  const cursor = q.after ? `${filter ? ' AND' : ' WHERE'} (ts, id) < (?, ?)` : '';
  const rows = db
    .query(`SELECT id, ts FROM tasks${filter}${cursor} ORDER BY ts DESC, id DESC LIMIT ?`)
    .all(...args, ...(q.after ?? []), q.limit) as { id: string; ts: number }[];
  return { ids: rows.map((r) => [r.id, r.ts]), filter, args };
}
