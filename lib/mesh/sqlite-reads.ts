/**
 * @module lib/mesh/sqlite-reads — the reads of the SQLite mesh store: one message by reference,
 * history pages, what a name missed, the range a hub delivers, and counts (committed rows only).
 */

import { pageRows, runHistory, runMissed, type HistoryQuery } from './history.ts';
import { parseRef } from './ref.ts';
import { rowToMessage, type MessageRow } from './rows.ts';
import type { SqliteStoreContext } from './sqlite-context.ts';
import type { StoreReads } from './store.ts';

export function sqliteReads(ctx: SqliteStoreContext): StoreReads {
  const { db, limits, corrupt, visible } = ctx;
  const byRef = db.query('SELECT * FROM messages WHERE project = ? AND sequence = ?');
  const inRange = db.query(
    `SELECT * FROM messages WHERE project = ?1 AND sequence > ?2 AND sequence <= ?3
       AND (target_kind = 'project' OR target_presence_id IN (SELECT value FROM json_each(?4)))
     ORDER BY sequence`,
  );
  return {
    async get(ref) {
      const r = parseRef(ref);
      const row =
        r &&
        r.sequence <= visible(r.project) &&
        (byRef.get(r.project, r.sequence) as MessageRow | null);
      return row ? rowToMessage(row) : undefined;
    },

    history: async (q: HistoryQuery) => runHistory(db, q, limits, corrupt, visible(q.project)),

    missed: async (project, name, since, limit) =>
      runMissed(db, { project, name, since, limit }, limits, corrupt, visible(project)),

    async range(project, after, upTo, presenceIds) {
      const end = Math.min(upTo, visible(project));
      const rows = inRange.all(project, after, end, JSON.stringify(presenceIds)) as MessageRow[];
      return pageRows(rows, 'ASC', { historyBudgetBytes: Number.MAX_SAFE_INTEGER }, corrupt);
    },

    count: async (project) =>
      (
        db
          .query('SELECT count(*) AS n FROM messages WHERE project = ? AND sequence <= ?')
          .get(project, visible(project)) as { n: number }
      ).n,
  };
}
