/**
 * @module hub/workbench/entity-resolve — resolves a checked query against an index already read
 * (pure): every key given must point at the same record, which is matched only when its USCC is
 * valid; otherwise ambiguous or unmatched, with the candidates and the reason.
 */

import { checkUscc, type UsccCheck } from '../../lib/domain/uscc.ts';
import {
  fromRecord,
  fromStock,
  keyOf,
  type Entity,
  type EntityCandidate,
} from './entity-candidates.ts';
import type { EntityFailure, EntityIndex } from './entity-index.ts';
import { LEGAL, nameMatches, tokens } from './entity-names.ts';
import { checkQuery, type EntityQuery } from './entity-query.ts';

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

/** The records a name matches: crm companies, and scanner stocks (as the crm record carrying their code, or alone). */
function byName(ix: EntityIndex, name: string): EntityCandidate[] {
  const words = tokens(name).filter((w) => !LEGAL.has(w));
  const byRecord = ix.companies
    .filter((c) => nameMatches(words, c.name))
    .map((c) => fromRecord(ix, c));
  // A scanner name points at the crm record carrying its code, or stands alone.
  const byStock = ix.stocks
    .filter((s) => nameMatches(words, s.name))
    .map((s) => {
      const carrier = ix.companies.find((c) => c.stockCode === s.code);
      return carrier ? fromRecord(ix, carrier) : fromStock(s);
    });
  return [...new Map([...byRecord, ...byStock].map((c) => [keyOf(c), c])).values()];
}

/** The entity a single confirmed candidate names, and how it is listed on scanner. */
function matchedEntity(ix: EntityIndex, only: EntityCandidate) {
  const rec = ix.companies.find((c) => c.id === only.crmId)!;
  const entity: Entity = {
    uscc: rec.uscc!,
    name: rec.name,
    crmId: rec.id,
    industry: rec.industry,
    city: rec.city,
    stockCode: rec.stockCode,
    stockName: only.stockName,
  };
  const listing = !rec.stockCode
    ? 'unlisted'
    : only.onScanner
      ? `listed on scanner as ${only.stockName} ${rec.stockCode}`
      : `its stock code ${rec.stockCode} is not on scanner`;
  return { rec, entity, listing };
}

/** Resolves against an index already read (pure). */
export function resolveInIndex(
  ix: EntityIndex,
  query: EntityQuery,
): EntityResolution | EntityFailure {
  const checked = checkQuery(query);
  if (!checked.ok) return checked;
  const q = checked.result;
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
    const none = check.ok
      ? `no crm company has USCC ${q.uscc}`
      : `USCC ${q.uscc} is not a valid code (${check.code}: ${check.message}), and no crm company has it`;
    add(
      'uscc',
      ix.companies.filter((c) => c.uscc === q.uscc).map((c) => fromRecord(ix, c)),
      none,
    );
  }
  if (q.code) {
    const carriers = ix.companies
      .filter((c) => c.stockCode === q.code)
      .map((c) => fromRecord(ix, c));
    const stock = ix.stocks.find((s) => s.code === q.code);
    add(
      'code',
      carriers.length ? carriers : stock ? [fromStock(stock)] : [],
      `neither crm nor scanner knows stock code ${q.code}`,
    );
  }
  if (q.name)
    add('name', byName(ix, q.name), `no crm company or scanner stock is named "${q.name}"`);
  const all = [...found.values()];
  const result = (
    status: EntityResolution['status'],
    reason: string,
    candidates: EntityCandidate[],
    entity?: Entity,
  ): EntityResolution => ({
    ok: true,
    status,
    ...(entity ? { entity } : {}),
    candidates,
    reason,
    query: q,
    ...(usccCheck ? { usccCheck } : {}),
  });

  const empty = sets.find((s) => s.keys.size === 0);
  if (empty) return result('unmatched', empty.none, all);
  const inter = all.filter((c) => sets.every((s) => s.keys.has(keyOf(c))));
  if (inter.length === 0)
    return result(
      'ambiguous',
      `the keys point at different records: ${sets.map((s) => `${s.by} → ${[...s.keys].join(', ')}`).join('; ')}`,
      all,
    );
  if (inter.length > 1)
    return result(
      'ambiguous',
      `${inter.length} records match: ${inter.map((c) => `${c.name} (${c.crmId ?? c.stockCode})`).join(', ')}`,
      inter,
    );
  const only = inter[0]!;
  if (usccCheck && !usccCheck.ok)
    return result(
      'unmatched',
      `USCC ${q.uscc} is not a valid code: ${usccCheck.code} (${usccCheck.message})`,
      inter,
    );
  if (only.unconfirmed)
    return result('unmatched', `not confirmed as an entity: ${only.unconfirmed}`, inter);
  const { rec, entity, listing } = matchedEntity(ix, only);
  return result(
    'matched',
    `USCC ${rec.uscc} identifies ${rec.name} (${rec.id}), ${listing}`,
    inter,
    entity,
  );
}
