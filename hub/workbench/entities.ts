/**
 * @module hub/workbench/entities — entity alignment across crm and scanner with the USCC (GB 32100-2015) as
 * the key: `resolveEntity` answers matched / ambiguous / unmatched with candidates, and
 * `entityCoverage` counts what is aligned and lists every gap. Both read the nodes through
 * `fleet.invoke` only (crm.companies, sector.stocks), so every read is traced.
 */

import type { FleetInvoker } from '../../lib/fleet/invoke.ts';
import { checkUscc, type UsccCheck } from '../../lib/domain/uscc.ts';
import { isCompanyRow, isObject, isStockRow, isString as str } from './fleet-answers.ts';

/** A crm record as entity alignment reads it. */
interface CrmRecord {
  id: string;
  uscc: string | null;
  name: string;
  industry: string;
  city: string;
  stockCode: string | null;
}
/** A scanner stock as entity alignment reads it. */
interface ScannerStock {
  code: string;
  name: string;
  sector: string;
}
interface EntityIndex {
  asOf: { crm: string; scanner: string };
  companies: CrmRecord[];
  stocks: ScannerStock[];
}

/** A company confirmed by a valid USCC. */
interface Entity {
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
interface EntityCandidate {
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

interface EntityQuery {
  name?: string;
  uscc?: string;
  code?: string;
}

export type EntityResolution = {
  ok: true;
  status: 'matched' | 'ambiguous' | 'unmatched';
  entity?: Entity;
  candidates: EntityCandidate[];
  reason: string;
  query: EntityQuery;
  /** The check of the USCC asked for, when one was. */
  usccCheck?: UsccCheck;
};
type EntityFailure = { ok: false; error: { code: 'ENTITY_BAD_QUERY' | 'ENTITY_SOURCE_FAILED'; message: string; source?: string; cause?: string } };

type GapKind = 'no-uscc' | 'bad-check-digit' | 'ambiguous-name' | 'stock-without-entity' | 'stock-not-on-scanner';
const GAP_KINDS: readonly GapKind[] = ['no-uscc', 'bad-check-digit', 'ambiguous-name', 'stock-without-entity', 'stock-not-on-scanner'];

interface CoverageGap {
  kind: GapKind;
  /** What the gap is about: a crm id, a USCC, a name or a stock code. */
  key: string;
  /** crm ids involved (none for a scanner stock no crm record carries). */
  records: string[];
  reason: string;
}
interface EntityCoverage {
  ok: true;
  asOf: { crm: string; scanner: string };
  crm: { customers: number; aligned: number };
  scanner: { codes: number; aligned: number };
  byKind: Record<GapKind, number>;
  gaps: CoverageGap[];
}

// ---- reading the nodes ----

/** Reads one list from a node; rows that are not objects make the whole answer unreadable. */
async function read(invoker: FleetInvoker, node: string, capability: string, list: string): Promise<{ asOf: string; rows: unknown[] } | EntityFailure> {
  const r = await invoker.invoke(node, capability, {});
  if (!r.ok) return { ok: false, error: { code: 'ENTITY_SOURCE_FAILED', message: `${node} ${capability}: ${r.error.message}`, source: node, cause: r.error.code } };
  const doc = isObject(r.result) ? r.result : {};
  const rows = doc[list];
  if (!Array.isArray(rows) || !rows.every((x) => typeof x === 'object' && x !== null))
    return { ok: false, error: { code: 'ENTITY_SOURCE_FAILED', message: `${node} ${capability}: the answer has no ${list} list`, source: node, cause: 'BAD_ANSWER' } };
  return { asOf: str(doc.asOf) ? doc.asOf : '', rows };
}

/** Reads crm's companies and scanner's stocks (two traced calls). */
async function loadEntityIndex(invoker: FleetInvoker): Promise<{ ok: true; index: EntityIndex } | EntityFailure> {
  const [crm, scanner] = await Promise.all([read(invoker, 'crm', 'crm.companies', 'companies'), read(invoker, 'scanner', 'sector.stocks', 'stocks')]);
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
  const stocks = scanner.rows.filter(isStockRow).map((s) => ({ code: s.code, name: s.name, sector: str(s.sector) ? s.sector : '' }));
  return { ok: true, index: { asOf: { crm: crm.asOf, scanner: scanner.asOf }, companies, stocks } };
}

// ---- names ----

/** Legal-form words that do not tell companies apart. */
const LEGAL = new Set(['co', 'ltd', 'corp', 'inc', 'limited', 'company', 'corporation', 'group', 'plc']);
const tokens = (s: string) => s.toLowerCase().replace(/&/g, ' and ').split(/[^a-z0-9]+/).filter(Boolean);

/** A company's name without its city prefix and legal suffix: "Hangzhou Yunqi Data Technology Co., Ltd." → "yunqi data technology". */
function coreName(name: string, city = ''): string {
  const t = tokens(name);
  const c = tokens(city);
  if (c.length && c.every((w, i) => t[i] === w)) t.splice(0, c.length);
  while (t.length > 1 && LEGAL.has(t[t.length - 1]!)) t.pop();
  return t.join(' ');
}

/** Every word of the query (legal-form words aside) is a word of the name. */
const nameMatches = (queryWords: string[], name: string) => {
  const words = new Set(tokens(name));
  return queryWords.every((w) => words.has(w));
};

// ---- resolve ----

const why = (c: CrmRecord): string | undefined => {
  if (c.uscc === null) return `${c.id} has no USCC on record`;
  const check = checkUscc(c.uscc);
  return check.ok ? undefined : `${c.id}'s USCC ${c.uscc} fails: ${check.code} (${check.message})`;
};

function fromRecord(ix: EntityIndex, c: CrmRecord): EntityCandidate {
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

function fromStock(s: ScannerStock): EntityCandidate {
  return {
    crmId: null, uscc: null, usccValid: false, name: s.name, industry: s.sector || null, stockCode: s.code, stockName: s.name, onScanner: true, matchedBy: [],
    unconfirmed: `scanner lists ${s.code} ${s.name}, but no crm company carries that code`,
  };
}

const keyOf = (c: EntityCandidate) => c.crmId ?? `stock:${c.stockCode}`;
const USCC_TEXT = /^[0-9A-Za-z]{1,32}$/;
const CODE_TEXT = /^\d{6}$/;

/** Checks the query: at least one key, each of a sane shape. */
function checkQuery(q: EntityQuery): { ok: true; query: EntityQuery } | EntityFailure {
  const bad = (message: string): EntityFailure => ({ ok: false, error: { code: 'ENTITY_BAD_QUERY', message } });
  if (!q || typeof q !== 'object') return bad('a query is {name?, uscc?, code?}');
  const out: EntityQuery = {};
  for (const k of ['name', 'uscc', 'code'] as const) {
    const v = q[k];
    if (v === undefined || v === null || v === '') continue;
    if (typeof v !== 'string') return bad(`${k} must be a string`);
    out[k] = v.trim();
  }
  if (!out.name && !out.uscc && !out.code) return bad('give at least one of name, uscc, code');
  if (out.name !== undefined && (out.name.length > 200 || tokens(out.name).filter((w) => !LEGAL.has(w)).length === 0)) return bad('name must have a distinctive word (and at most 200 characters)');
  if (out.uscc !== undefined && !USCC_TEXT.test(out.uscc)) return bad('uscc must be letters and digits');
  if (out.code !== undefined && !CODE_TEXT.test(out.code)) return bad('code must be a six-digit stock code');
  if (out.uscc) out.uscc = out.uscc.toUpperCase();
  return { ok: true, query: out };
}

/** Resolves against an index already read (pure). */
function resolveInIndex(ix: EntityIndex, query: EntityQuery): EntityResolution | EntityFailure {
  const checked = checkQuery(query);
  if (!checked.ok) return checked;
  const q = checked.query;
  const found = new Map<string, EntityCandidate>();
  const sets: { by: 'uscc' | 'code' | 'name'; keys: Set<string>; none: string }[] = [];
  const add = (by: 'uscc' | 'code' | 'name', cands: EntityCandidate[], none: string) => {
    for (const c of cands) {
      const k = keyOf(c);
      const have = found.get(k) ?? c;
      if (!have.matchedBy.includes(by)) have.matchedBy.push(by);
      found.set(k, have);
    }
    sets.push({ by, keys: new Set(cands.map(keyOf)), none });
  };
  let usccCheck: UsccCheck | undefined;
  if (q.uscc) {
    const check = checkUscc(q.uscc);
    usccCheck = check;
    const none = check.ok ? `no crm company has USCC ${q.uscc}` : `USCC ${q.uscc} is not a valid code (${check.code}: ${check.message}), and no crm company has it`;
    add('uscc', ix.companies.filter((c) => c.uscc === q.uscc).map((c) => fromRecord(ix, c)), none);
  }
  if (q.code) {
    const carriers = ix.companies.filter((c) => c.stockCode === q.code).map((c) => fromRecord(ix, c));
    const stock = ix.stocks.find((s) => s.code === q.code);
    add('code', carriers.length ? carriers : stock ? [fromStock(stock)] : [], `neither crm nor scanner knows stock code ${q.code}`);
  }
  if (q.name) {
    const words = tokens(q.name).filter((w) => !LEGAL.has(w));
    const byRecord = ix.companies.filter((c) => nameMatches(words, c.name)).map((c) => fromRecord(ix, c));
    // A scanner name points at the crm record carrying its code, or stands alone.
    const byStock = ix.stocks.filter((s) => nameMatches(words, s.name)).map((s) => {
      const carrier = ix.companies.find((c) => c.stockCode === s.code);
      return carrier ? fromRecord(ix, carrier) : fromStock(s);
    });
    const unique = [...new Map([...byRecord, ...byStock].map((c) => [keyOf(c), c])).values()];
    add('name', unique, `no crm company or scanner stock is named "${q.name}"`);
  }
  const all = [...found.values()];
  const result = (status: EntityResolution['status'], reason: string, candidates: EntityCandidate[], entity?: Entity): EntityResolution =>
    ({ ok: true, status, ...(entity ? { entity } : {}), candidates, reason, query: q, ...(usccCheck ? { usccCheck } : {}) });

  const empty = sets.find((s) => s.keys.size === 0);
  if (empty) return result('unmatched', empty.none, all);
  const inter = all.filter((c) => sets.every((s) => s.keys.has(keyOf(c))));
  if (inter.length === 0) return result('ambiguous', `the keys point at different records: ${sets.map((s) => `${s.by} → ${[...s.keys].join(', ')}`).join('; ')}`, all);
  if (inter.length > 1) return result('ambiguous', `${inter.length} records match: ${inter.map((c) => `${c.name} (${c.crmId ?? c.stockCode})`).join(', ')}`, inter);
  const only = inter[0]!;
  if (usccCheck && !usccCheck.ok) return result('unmatched', `USCC ${q.uscc} is not a valid code: ${usccCheck.code} (${usccCheck.message})`, inter);
  if (only.unconfirmed) return result('unmatched', `not confirmed as an entity: ${only.unconfirmed}`, inter);
  const rec = ix.companies.find((c) => c.id === only.crmId)!;
  const entity: Entity = { uscc: rec.uscc!, name: rec.name, crmId: rec.id, industry: rec.industry, city: rec.city, stockCode: rec.stockCode, stockName: only.stockName };
  const listing = !rec.stockCode ? 'unlisted' : only.onScanner ? `listed on scanner as ${only.stockName} ${rec.stockCode}` : `its stock code ${rec.stockCode} is not on scanner`;
  return result('matched', `USCC ${rec.uscc} identifies ${rec.name} (${rec.id}), ${listing}`, inter, entity);
}

/**
 * Resolves a company by any of name, USCC and stock code; all given keys must agree.
 * Never throws: a bad query or a node that cannot be read is a coded value.
 */
export async function resolveEntity(invoker: FleetInvoker, query: EntityQuery): Promise<EntityResolution | EntityFailure> {
  const checked = checkQuery(query);
  if (!checked.ok) return checked;
  const loaded = await loadEntityIndex(invoker);
  return loaded.ok ? resolveInIndex(loaded.index, checked.query) : loaded;
}

// ---- coverage ----

/** Counts and gaps of an index already read (pure). */
function coverageOf(ix: EntityIndex): EntityCoverage {
  const gaps: CoverageGap[] = [];
  const notAligned = new Set<string>();
  for (const c of ix.companies) {
    if (c.uscc === null) {
      gaps.push({ kind: 'no-uscc', key: c.id, records: [c.id], reason: `${c.name} (${c.id}) has no USCC on record` });
      notAligned.add(c.id);
      continue;
    }
    const check = checkUscc(c.uscc);
    if (!check.ok) {
      gaps.push({ kind: 'bad-check-digit', key: c.uscc, records: [c.id], reason: `${c.name} (${c.id}): ${check.code}, ${check.message}` });
      notAligned.add(c.id);
    }
  }
  const byCore = Map.groupBy(ix.companies, (c) => coreName(c.name, c.city));
  for (const [core, group] of byCore) {
    if (group.length < 2) continue;
    gaps.push({ kind: 'ambiguous-name', key: core, records: group.map((c) => c.id), reason: `"${core}" names ${group.length} companies: ${group.map((c) => `${c.name} (${c.id})`).join(', ')}` });
    for (const c of group) notAligned.add(c.id);
  }
  let scannerAligned = 0;
  for (const s of ix.stocks) {
    const carriers = ix.companies.filter((c) => c.stockCode === s.code);
    const confirmed = carriers.filter((c) => c.uscc !== null && checkUscc(c.uscc).ok);
    if (confirmed.length === 1) {
      scannerAligned++;
      continue;
    }
    const reason = carriers.length === 0
      ? `scanner lists ${s.code} ${s.name}, but no crm company carries that code`
      : confirmed.length > 1
        ? `${s.code} ${s.name} is carried by ${confirmed.length} crm companies`
        : `${s.code} ${s.name} is carried only by ${carriers.map((c) => c.id).join(', ')}, without a valid USCC`;
    gaps.push({ kind: 'stock-without-entity', key: s.code, records: carriers.map((c) => c.id), reason });
  }
  const listed = new Set(ix.stocks.map((s) => s.code));
  for (const c of ix.companies) {
    if (!c.stockCode || listed.has(c.stockCode)) continue;
    gaps.push({ kind: 'stock-not-on-scanner', key: c.stockCode, records: [c.id], reason: `${c.name} (${c.id}) has stock code ${c.stockCode}, which scanner does not list` });
    notAligned.add(c.id);
  }
  gaps.sort((a, b) => GAP_KINDS.indexOf(a.kind) - GAP_KINDS.indexOf(b.kind));
  const byKind = Object.fromEntries(GAP_KINDS.map((k) => [k, gaps.filter((g) => g.kind === k).length])) as Record<GapKind, number>;
  return {
    ok: true,
    asOf: ix.asOf,
    crm: { customers: ix.companies.length, aligned: ix.companies.length - notAligned.size },
    scanner: { codes: ix.stocks.length, aligned: scannerAligned },
    byKind,
    gaps,
  };
}

/**
 * How many crm customers and scanner codes are aligned, and every gap with its kind. A crm
 * customer is aligned when its USCC is valid, its name identifies it alone and its stock code (if
 * any) is on scanner; a scanner code is aligned when exactly one crm company with a valid USCC
 * carries it. Never throws.
 */
export async function entityCoverage(invoker: FleetInvoker): Promise<EntityCoverage | EntityFailure> {
  const loaded = await loadEntityIndex(invoker);
  return loaded.ok ? coverageOf(loaded.index) : loaded;
}
