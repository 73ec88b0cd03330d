/**
 * @module lib/mesh/postgres-reads — the reads of the PostgreSQL mesh store: one message by
 * reference, history pages, what a name missed, the range a hub delivers, and counts.
 */

import { missedRows, pageRows, type HistoryQuery } from './history.ts';
import type { PostgresStoreContext } from './postgres-context.ts';
import { toRow } from './postgres-rows.ts';
import { parseRef } from './ref.ts';
import { rowToMessage } from './rows.ts';
import type { StoreReads } from './store.ts';

export function postgresReads(ctx: PostgresStoreContext): StoreReads {
  const { sql, limits, corrupt } = ctx;
  return {
    async get(ref) {
      const r = parseRef(ref);
      if (!r) return undefined;
      const [row] =
        await sql`SELECT * FROM mesh_messages WHERE project = ${r.project} AND sequence = ${r.sequence}`;
      return row ? rowToMessage(toRow(row)) : undefined;
    },

    async history(q: HistoryQuery) {
      const where = ['project = $1'];
      const params: unknown[] = [q.project];
      if (q.before !== undefined) where.push(`sequence < $${params.push(q.before)}`);
      if (q.after !== undefined) where.push(`sequence > $${params.push(q.after)}`);
      if (q.from !== undefined) where.push(`sender_name = $${params.push(q.from)}`);
      const order = q.after !== undefined ? 'ASC' : 'DESC';
      const text = `SELECT * FROM mesh_messages WHERE ${where.join(' AND ')} ORDER BY sequence ${order} LIMIT $${params.push(q.limit)}`;
      const rows = (await sql.unsafe(text, params)).map(toRow);
      return pageRows(rows, order, limits, corrupt);
    },

    async missed(project, name, since, limit) {
      const rows = await sql`
        SELECT * FROM mesh_messages WHERE project = ${project} AND sequence > ${since}
          AND ((target_kind = 'project' AND sender_name <> ${name}) OR (target_kind = 'agent' AND target_name = ${name}))
        ORDER BY sequence DESC LIMIT ${limit + 1}`;
      return missedRows(rows.map(toRow), limit, limits, corrupt);
    },

    async range(project, after, upTo, presenceIds) {
      const rows = await sql`
        SELECT * FROM mesh_messages WHERE project = ${project} AND sequence > ${after} AND sequence <= ${upTo}
          AND (target_kind = 'project' OR target_presence_id = ANY(${presenceIds}::text[]))
        ORDER BY sequence`;
      return pageRows(
        rows.map(toRow),
        'ASC',
        { historyBudgetBytes: Number.MAX_SAFE_INTEGER },
        corrupt,
      );
    },

    async count(project) {
      const [r] = await sql`SELECT count(*) AS n FROM mesh_messages WHERE project = ${project}`;
      return Number(r.n);
    },
  };
}
