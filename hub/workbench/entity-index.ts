/**
 * @module hub/workbench/entity-index — reads what entity alignment works on: crm's companies and
 * scanner's stocks, through `fleet.invoke` (two traced calls), keeping only well-formed rows.
 */

import { isPlainObject } from '../../lib/json/guards.ts';
import { ok, type Err, type Failure, type Result } from '../../lib/errors/result.ts';
import type { FleetInvoker } from '../../lib/fleet/invoke.ts';
import { isCompanyRow, isStockRow, isString as str } from './fleet-answers.ts';

/** A crm record as entity alignment reads it. */
export interface CrmRecord {
  id: string;
  uscc: string | null;
  name: string;
  industry: string;
  city: string;
  stockCode: string | null;
}
/** A scanner stock as entity alignment reads it. */
export interface ScannerStock {
  code: string;
  name: string;
  sector: string;
}
export interface EntityIndex {
  asOf: { crm: string; scanner: string };
  companies: CrmRecord[];
  stocks: ScannerStock[];
}

/** Why entity alignment could not answer: a bad query, or a node that could not be read. */
export type EntityFailure = Err<
  Failure<'ENTITY_BAD_QUERY' | 'ENTITY_SOURCE_FAILED'> & { source?: string; cause?: string }
>;

/** Reads one list from a node; rows that are not objects make the whole answer unreadable. */
async function read(
  invoker: FleetInvoker,
  node: string,
  capability: string,
  list: string,
): Promise<{ asOf: string; rows: unknown[] } | EntityFailure> {
  const r = await invoker.invoke(node, capability, {});
  if (!r.ok)
    return {
      ok: false,
      error: {
        code: 'ENTITY_SOURCE_FAILED',
        message: `${node} ${capability}: ${r.error.message}`,
        source: node,
        cause: r.error.code,
      },
    };
  const doc = isPlainObject(r.result) ? r.result : {};
  const rows = doc[list];
  if (!Array.isArray(rows) || !rows.every((x) => typeof x === 'object' && x !== null))
    return {
      ok: false,
      error: {
        code: 'ENTITY_SOURCE_FAILED',
        message: `${node} ${capability}: the answer has no ${list} list`,
        source: node,
        cause: 'BAD_ANSWER',
      },
    };
  return { asOf: str(doc.asOf) ? doc.asOf : '', rows };
}

/** Reads crm's companies and scanner's stocks (two traced calls). */
export async function loadEntityIndex(
  invoker: FleetInvoker,
): Promise<Result<EntityIndex, EntityFailure['error']>> {
  const [crm, scanner] = await Promise.all([
    read(invoker, 'crm', 'crm.companies', 'companies'),
    read(invoker, 'scanner', 'sector.stocks', 'stocks'),
  ]);
  if ('ok' in crm) return crm;
  if ('ok' in scanner) return scanner;
  // Rows another process sent: keep only well-formed ones, never trust a field's type.
  const companies = crm.rows.filter(isCompanyRow).map((c) => ({
    id: c.id,
    uscc: str(c.uscc) ? c.uscc : null,
    name: c.name,
    industry: str(c.industry) ? c.industry : '',
    city: str(c.city) ? c.city : '',
    stockCode: str(c.stockCode) ? c.stockCode : null,
  }));
  const stocks = scanner.rows
    .filter(isStockRow)
    .map((s) => ({ code: s.code, name: s.name, sector: str(s.sector) ? s.sector : '' }));
  return ok({ asOf: { crm: crm.asOf, scanner: scanner.asOf }, companies, stocks });
}
