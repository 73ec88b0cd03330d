/**
 * @module lib/mesh/history — history query rules (limit 1..500, default 50; exclusive `before`/`after`;
 * `from`; a decoded-size budget), the missed-message query behind recovery, and how rows become
 * answers (shared by both stores).
 */

import type { Database } from 'bun:sqlite';
import { fail, ok, type Result } from './errors.ts';
import { MESH_LIMITS, type MeshLimits } from './limits.ts';
import { isProjectName, isRosterName } from './names.ts';
import { parseRef } from './ref.ts';
import { rowToMessage, type MessageRow } from './rows.ts';
import type { MeshMessage } from './wire.ts';

export interface HistoryQuery {
  project: string;
  /** Sequence cursors (already checked to belong to `project`). */
  before?: number;
  after?: number;
  from?: string;
  limit: number;
}

type Limits = Pick<MeshLimits, 'historyDefaultLimit' | 'historyMaxLimit' | 'historyBudgetBytes'>;

/** Parses `project`, `before`, `after`, `from`, `limit` from plain strings (a query string or CLI flags). */
export function parseHistoryQuery(
  raw: {
    project?: string | null;
    before?: string | null;
    after?: string | null;
    from?: string | null;
    limit?: string | null;
  },
  limits: Limits = MESH_LIMITS,
): Result<HistoryQuery, 'A2A_BAD_REQUEST' | 'missing-project'> {
  if (raw.project == null || raw.project === '')
    return fail('missing-project', 'project is required');
  if (!isProjectName(raw.project))
    return fail('A2A_BAD_REQUEST', 'project is not a valid project name');
  const q: HistoryQuery = { project: raw.project, limit: limits.historyDefaultLimit };
  if (raw.before != null && raw.after != null)
    return fail('A2A_BAD_REQUEST', 'before and after cannot be combined');
  for (const key of ['before', 'after'] as const) {
    const v = raw[key];
    if (v == null) continue;
    // `after=<project>:0` reads from the first message on (sequences start at 1).
    const ref: { project: string; sequence: number } | undefined =
      key === 'after' && v === `${raw.project}:0`
        ? { project: raw.project, sequence: 0 }
        : parseRef(v);
    if (!ref)
      return fail('A2A_BAD_REQUEST', `${key} must be a message reference like ${raw.project}:12`);
    if (ref.project !== raw.project)
      return fail('A2A_BAD_REQUEST', `${key} belongs to another project`);
    q[key] = ref.sequence;
  }
  if (raw.from != null) {
    if (!isRosterName(raw.from)) return fail('A2A_BAD_REQUEST', 'from is not a valid roster name');
    q.from = raw.from;
  }
  if (raw.limit != null) {
    if (!/^-?[0-9]{1,9}$/.test(raw.limit))
      return fail('A2A_BAD_REQUEST', 'limit must be an integer');
    q.limit = Math.min(limits.historyMaxLimit, Math.max(1, Number(raw.limit)));
  }
  return ok(q);
}

/**
 * Runs a history query: walks newest-first (oldest-first with `after`) until `limit` or the decoded
 * budget is reached, then answers in ascending order. Rows whose recorded size does not add up are
 * skipped and reported through `onCorrupt`. Rows past `upTo` (committed, not yet on disk) are not read.
 */
export function runHistory(
  db: Database,
  q: HistoryQuery,
  limits: Limits = MESH_LIMITS,
  onCorrupt?: (ref: string) => void,
  upTo: number = Number.MAX_SAFE_INTEGER,
): MeshMessage[] {
  const where = ['project = ?1', 'sequence <= ?5'];
  if (q.before !== undefined) where.push('sequence < ?2');
  if (q.after !== undefined) where.push('sequence > ?2');
  if (q.from !== undefined) where.push('sender_name = ?3');
  const order = q.after !== undefined ? 'ASC' : 'DESC';
  // db.query caches the statement per SQL text; there are only eight shapes.
  const stmt = db.query(
    `SELECT * FROM messages WHERE ${where.join(' AND ')} ORDER BY sequence ${order} LIMIT ?4`,
  );
  const rows = stmt.all(
    q.project,
    q.before ?? q.after ?? null,
    q.from ?? null,
    q.limit,
    upTo,
  ) as MessageRow[];
  return pageRows(rows, order, limits, onCorrupt);
}

/** Decoded size of a message: its text and attachments. */
const sizeOf = (m: MeshMessage): number =>
  m.payload.uncompressedBytes + m.attachments.reduce((n, a) => n + a.payload.uncompressedBytes, 0);

/**
 * Walks rows in query order: skips rows whose recorded size does not add up (reported through
 * `onCorrupt`) and stops before the decoded budget is exceeded (the first readable row always fits).
 */
function walkRows(
  rows: MessageRow[],
  budgetBytes: number,
  onCorrupt?: (ref: string) => void,
): { messages: MeshMessage[]; skipped: boolean; cut: boolean } {
  const messages: MeshMessage[] = [];
  let used = 0;
  let skipped = false;
  for (const r of rows) {
    const m = rowToMessage(r);
    const size = sizeOf(m);
    if (size !== r.content_bytes) {
      onCorrupt?.(m.messageRef);
      skipped = true;
      continue;
    }
    if (used + size > budgetBytes && messages.length > 0) return { messages, skipped, cut: true };
    used += size;
    messages.push(m);
  }
  return { messages, skipped, cut: false };
}

/**
 * Turns the rows of a history query (in walk order) into its answer: stops at the decoded budget,
 * skips rows whose recorded size does not add up, answers in ascending order.
 */
export function pageRows(
  rows: MessageRow[],
  order: 'ASC' | 'DESC',
  limits: Pick<MeshLimits, 'historyBudgetBytes'> = MESH_LIMITS,
  onCorrupt?: (ref: string) => void,
): MeshMessage[] {
  const { messages } = walkRows(rows, limits.historyBudgetBytes, onCorrupt);
  return order === 'DESC' ? messages.reverse() : messages;
}

export interface MissedQuery {
  project: string;
  /** The roster name whose missed messages are wanted. */
  name: string;
  /** The last sequence the client handled; only later messages count. */
  since: number;
  limit: number;
}

export interface Missed {
  /** Ascending by sequence. */
  messages: MeshMessage[];
  /** False when older missed messages were left out (over `limit` or the decoded budget, or unreadable). */
  complete: boolean;
}

/**
 * Finds what a name missed after `since`: messages addressed to it and broadcasts by others. Walks
 * newest-first so that, past the limit or the decoded budget, the most recent ones are kept and
 * the gap is at the old end (the client pages it with `before`).
 */
export function runMissed(
  db: Database,
  q: MissedQuery,
  limits: Pick<MeshLimits, 'historyBudgetBytes'> = MESH_LIMITS,
  onCorrupt?: (ref: string) => void,
  upTo: number = Number.MAX_SAFE_INTEGER,
): Missed {
  const rows = db
    .query(
      `SELECT * FROM messages WHERE project = ?1 AND sequence > ?2 AND sequence <= ?5
         AND ((target_kind = 'project' AND sender_name <> ?3) OR (target_kind = 'agent' AND target_name = ?3))
       ORDER BY sequence DESC LIMIT ?4`,
    )
    .all(q.project, q.since, q.name, q.limit + 1, upTo) as MessageRow[];
  return missedRows(rows, q.limit, limits, onCorrupt);
}

/** Turns the rows of a missed-messages query (newest first, `limit + 1` at most) into its answer. */
export function missedRows(
  rows: MessageRow[],
  limit: number,
  limits: Pick<MeshLimits, 'historyBudgetBytes'> = MESH_LIMITS,
  onCorrupt?: (ref: string) => void,
): Missed {
  const { messages, skipped, cut } = walkRows(
    rows.slice(0, limit),
    limits.historyBudgetBytes,
    onCorrupt,
  );
  return { messages: messages.reverse(), complete: rows.length <= limit && !skipped && !cut };
}
