/**
 * @module hub/workbench/entity-candidates — what an entity query can point at: a crm record
 * (confirmed by a valid USCC or not, and why not) or a scanner stock no crm record carries.
 */

import { checkUscc } from '../../lib/domain/uscc.ts';
import type { CrmRecord, EntityIndex, ScannerStock } from './entity-index.ts';

/** A company confirmed by a valid USCC. */
export interface Entity {
  uscc: string;
  name: string;
  crmId: string;
  industry: string;
  city: string;
  stockCode: string | null;
  /** The scanner's name for the stock, when the scanner lists it. */
  stockName: string | null;
}

/** Something a query points at: a crm record (confirmed or not) or a scanner stock no crm record carries. */
export interface EntityCandidate {
  crmId: string | null;
  uscc: string | null;
  usccValid: boolean;
  name: string;
  industry: string | null;
  stockCode: string | null;
  stockName: string | null;
  onScanner: boolean;
  matchedBy: ('uscc' | 'code' | 'name')[];
  /** Why this candidate is not a confirmed entity; absent when it is. */
  unconfirmed?: string;
}

/** Why a crm record is not a confirmed entity; undefined when its USCC is valid. */
const why = (c: CrmRecord): string | undefined => {
  if (c.uscc === null) return `${c.id} has no USCC on record`;
  const check = checkUscc(c.uscc);
  return check.ok ? undefined : `${c.id}'s USCC ${c.uscc} fails: ${check.code} (${check.message})`;
};

export function fromRecord(ix: EntityIndex, c: CrmRecord): EntityCandidate {
  const stock = c.stockCode ? ix.stocks.find((s) => s.code === c.stockCode) : undefined;
  const unconfirmed = why(c);
  return {
    crmId: c.id,
    uscc: c.uscc,
    usccValid: unconfirmed === undefined,
    name: c.name,
    industry: c.industry,
    stockCode: c.stockCode,
    stockName: stock?.name ?? null,
    onScanner: stock !== undefined,
    matchedBy: [],
    ...(unconfirmed ? { unconfirmed } : {}),
  };
}

export function fromStock(s: ScannerStock): EntityCandidate {
  return {
    crmId: null,
    uscc: null,
    usccValid: false,
    name: s.name,
    industry: s.sector || null,
    stockCode: s.code,
    stockName: s.name,
    onScanner: true,
    matchedBy: [],
    unconfirmed: `scanner lists ${s.code} ${s.name}, but no crm company carries that code`,
  };
}

/** One key per candidate: its crm id, or its stock code when no crm record carries it. */
export const keyOf = (c: EntityCandidate) => c.crmId ?? `stock:${c.stockCode}`;
