/**
 * @module lib/domain/negotiation-terms — the vocabulary the advisor (scanner) and the customer's agent (crm)
 * share: veto codes and what each means, risk bands, the proposal and history shapes, and the
 * codec that carries a proposal or a history in one string argument (catalog arguments are scalars).
 */

import { fail, ok, type Err, type Failure, type Result } from '../errors/result.ts';

/** Checked in this order; the first that fails is the veto. */
export const VETO_CODES = [
  'NO_SIGNAL',
  'UNALIGNED_ENTITY',
  'TODAY_DROP',
  'EXCLUDED_INDUSTRY',
  'RISK_LEVEL',
] as const;
export type VetoCode = (typeof VETO_CODES)[number];

/** A stock that fell more than this today (in %) is vetoed with TODAY_DROP. */
export const TODAY_DROP_PCT = -5;

/** Signal flags that mean the stock is at or near its daily price limit. */
export const LIMIT_FLAGS: readonly string[] = ['limit_up', 'limit_down_risk'];

export type RiskLevel = 'low' | 'medium' | 'high';
export const RISK_LEVELS: readonly RiskLevel[] = ['low', 'medium', 'high'];

/** What each risk level tolerates: the largest move today (either way) and whether limit flags are acceptable. */
export const RISK_BANDS: Readonly<
  Record<RiskLevel, { maxAbsChangePct: number | null; limitFlags: boolean }>
> = Object.freeze({
  low: { maxAbsChangePct: 2, limitFlags: false },
  medium: { maxAbsChangePct: 6, limitFlags: false },
  high: { maxAbsChangePct: null, limitFlags: true },
});

/** True when a stock's move and flags fit a risk level. */
export function withinBand(
  level: RiskLevel,
  stock: { changePct: number; signals: readonly string[] },
): boolean {
  const band = RISK_BANDS[level];
  if (!band.limitFlags && stock.signals.some((s) => LIMIT_FLAGS.includes(s))) return false;
  return band.maxAbsChangePct === null || Math.abs(stock.changePct) <= band.maxAbsChangePct;
}

/** A candidate as the advisor proposes it and the customer's agent reviews it. */
export interface Proposal {
  code: string;
  name: string;
  sector: string;
  changePct: number;
  signals: string[];
}

/** One vetoed proposal as the advisor reads it back: the stock, the code and the veto's detail. */
export interface HistoryEntry {
  stock: string;
  veto: VetoCode;
  /** EXCLUDED_INDUSTRY: the industry id; RISK_LEVEL: the customer's risk level. */
  detail?: string;
}

const STOCK = /^\d{6}$/;
/** A veto's detail (an industry id, a risk level) and a sector: a lower-case slug. */
export const DETAIL = /^[a-z][a-z0-9-]{0,31}$/;
/** A history longer than this is not a bounded negotiation. */
export const MAX_HISTORY = 16;

/** A malformed argument: the catalog's code for arguments it could not check itself. */
const badArgs = (message: string, field: string): Err<Failure<'BAD_ARGS'>> =>
  fail('BAD_ARGS', message, field);

function parseJson(text: string, what: string): Result<unknown, Failure<'BAD_ARGS'>> {
  try {
    return ok(JSON.parse(text));
  } catch {
    return badArgs(`${what} must be JSON`, what);
  }
}

/** History as one string argument. */
export const encodeHistory = (h: readonly HistoryEntry[]): string =>
  JSON.stringify(
    h.map((e) =>
      e.detail
        ? { stock: e.stock, veto: e.veto, detail: e.detail }
        : { stock: e.stock, veto: e.veto },
    ),
  );

/** The entries a history argument lists; BAD_ARGS (field `history`) when it is not a list of well-formed ones. */
export function parseHistory(
  text: string | undefined,
): Result<HistoryEntry[], Failure<'BAD_ARGS'>> {
  if (text === undefined || text === '') return ok([]);
  const doc = parseJson(text, 'history');
  if (!doc.ok) return doc;
  if (!Array.isArray(doc.result) || doc.result.length > MAX_HISTORY)
    return badArgs(`history must be a list of at most ${MAX_HISTORY} vetoes`, 'history');
  const entries: HistoryEntry[] = [];
  for (const [i, e] of doc.result.entries()) {
    const o = (e ?? {}) as Record<string, unknown>;
    if (typeof o.stock !== 'string' || !STOCK.test(o.stock))
      return badArgs(`history[${i}].stock must be a six-digit code`, 'history');
    if (!VETO_CODES.includes(o.veto as VetoCode))
      return badArgs(`history[${i}].veto must be one of ${VETO_CODES.join(', ')}`, 'history');
    if (o.detail !== undefined && (typeof o.detail !== 'string' || !DETAIL.test(o.detail)))
      return badArgs(`history[${i}].detail must be an id`, 'history');
    entries.push(
      o.detail
        ? { stock: o.stock, veto: o.veto as VetoCode, detail: o.detail as string }
        : { stock: o.stock, veto: o.veto as VetoCode },
    );
  }
  return ok(entries);
}

/** A proposal as one string argument. */
export const encodeProposal = (p: Proposal): string =>
  JSON.stringify({
    code: p.code,
    name: p.name,
    sector: p.sector,
    changePct: p.changePct,
    signals: p.signals,
  });

/** The proposal a proposal argument carries; BAD_ARGS (field `proposal`) when it is not a well-formed one. */
export function parseProposal(text: string): Result<Proposal, Failure<'BAD_ARGS'>> {
  const doc = parseJson(text, 'proposal');
  if (!doc.ok) return doc;
  const o = (doc.result ?? {}) as Record<string, unknown>;
  const wellFormed =
    typeof o.code === 'string' &&
    STOCK.test(o.code) &&
    typeof o.name === 'string' &&
    o.name.length > 0 &&
    o.name.length <= 128 &&
    typeof o.sector === 'string' &&
    DETAIL.test(o.sector) &&
    typeof o.changePct === 'number' &&
    Number.isFinite(o.changePct) &&
    Array.isArray(o.signals) &&
    o.signals.length <= 16 &&
    o.signals.every((s) => typeof s === 'string' && DETAIL.test(s.replace(/_/g, '-')));
  if (!wellFormed)
    return badArgs('proposal must be {code, name, sector, changePct, signals}', 'proposal');
  return ok({
    code: o.code as string,
    name: o.name as string,
    sector: o.sector as string,
    changePct: o.changePct as number,
    signals: o.signals as string[],
  });
}
