/**
 * @module hub/workbench/entity-coverage — how much of crm and scanner is aligned, from an index
 * already read (pure): the counts, and every gap with its kind and reason.
 */

import { checkUscc } from '../../lib/domain/uscc.ts';
import type { EntityIndex } from './entity-index.ts';
import { coreName } from './entity-names.ts';

type GapKind =
  | 'no-uscc'
  | 'bad-check-digit'
  | 'ambiguous-name'
  | 'stock-without-entity'
  | 'stock-not-on-scanner';
const GAP_KINDS: readonly GapKind[] = [
  'no-uscc',
  'bad-check-digit',
  'ambiguous-name',
  'stock-without-entity',
  'stock-not-on-scanner',
];

interface CoverageGap {
  kind: GapKind;
  /** What the gap is about: a crm id, a USCC, a name or a stock code. */
  key: string;
  /** crm ids involved (none for a scanner stock no crm record carries). */
  records: string[];
  reason: string;
}
export interface EntityCoverage {
  ok: true;
  asOf: { crm: string; scanner: string };
  crm: { customers: number; aligned: number };
  scanner: { codes: number; aligned: number };
  byKind: Record<GapKind, number>;
  gaps: CoverageGap[];
}

/** Counts and gaps of an index already read (pure). */
export function coverageOf(ix: EntityIndex): EntityCoverage {
  const gaps: CoverageGap[] = [];
  const notAligned = new Set<string>();
  for (const c of ix.companies) {
    if (c.uscc === null) {
      gaps.push({
        kind: 'no-uscc',
        key: c.id,
        records: [c.id],
        reason: `${c.name} (${c.id}) has no USCC on record`,
      });
      notAligned.add(c.id);
      continue;
    }
    const check = checkUscc(c.uscc);
    if (!check.ok) {
      gaps.push({
        kind: 'bad-check-digit',
        key: c.uscc,
        records: [c.id],
        reason: `${c.name} (${c.id}): ${check.code}, ${check.message}`,
      });
      notAligned.add(c.id);
    }
  }
  const byCore = Map.groupBy(ix.companies, (c) => coreName(c.name, c.city));
  for (const [core, group] of byCore) {
    if (group.length < 2) continue;
    gaps.push({
      kind: 'ambiguous-name',
      key: core,
      records: group.map((c) => c.id),
      reason: `"${core}" names ${group.length} companies: ${group.map((c) => `${c.name} (${c.id})`).join(', ')}`,
    });
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
    const reason =
      carriers.length === 0
        ? `scanner lists ${s.code} ${s.name}, but no crm company carries that code`
        : confirmed.length > 1
          ? `${s.code} ${s.name} is carried by ${confirmed.length} crm companies`
          : `${s.code} ${s.name} is carried only by ${carriers.map((c) => c.id).join(', ')}, without a valid USCC`;
    gaps.push({
      kind: 'stock-without-entity',
      key: s.code,
      records: carriers.map((c) => c.id),
      reason,
    });
  }
  const listed = new Set(ix.stocks.map((s) => s.code));
  for (const c of ix.companies) {
    if (!c.stockCode || listed.has(c.stockCode)) continue;
    gaps.push({
      kind: 'stock-not-on-scanner',
      key: c.stockCode,
      records: [c.id],
      reason: `${c.name} (${c.id}) has stock code ${c.stockCode}, which scanner does not list`,
    });
    notAligned.add(c.id);
  }
  gaps.sort((a, b) => GAP_KINDS.indexOf(a.kind) - GAP_KINDS.indexOf(b.kind));
  const byKind = Object.fromEntries(
    GAP_KINDS.map((k) => [k, gaps.filter((g) => g.kind === k).length]),
  ) as Record<GapKind, number>;
  return {
    ok: true,
    asOf: ix.asOf,
    crm: { customers: ix.companies.length, aligned: ix.companies.length - notAligned.size },
    scanner: { codes: ix.stocks.length, aligned: scannerAligned },
    byKind,
    gaps,
  };
}
