/**
 * @module hub/fleet/ard-list — ARD's deterministic browsing (`GET /ard/agents`, ARD v0.9 §7.4 and
 * Appendix A) over the fleet's AI Catalog entries: `filter` is clauses `field=value[,value…]`
 * joined by `AND` (`displayName` matches case-insensitively inside the name; `type` and
 * `publisherId` any of the comma-separated values), `orderBy` one of `displayName`, `identifier`,
 * `type` with an optional `DESC`, `pageSize` 1–100 (default 20), `pageToken` as given. No scores.
 */

import type { CatalogEntry } from './ai-catalog.ts';
import { ARD_LIMITS, type Refusal } from './ard-search.ts';

export interface ListPage {
  items: CatalogEntry[];
  total: number;
  pageToken?: string;
}

type Clause = { field: 'displayName' | 'type' | 'publisherId'; values: string[] };
const ORDER = new Set(['displayName', 'identifier', 'type']);
const MAX_CLAUSES = 8;

const refuse = (refused: string, field: string): Refusal => ({ refused, field });

function parseFilter(expr: string): Clause[] | Refusal {
  if (expr.length > ARD_LIMITS.listFilterChars)
    return refuse(`filter is at most ${ARD_LIMITS.listFilterChars} characters`, 'filter');
  const parts = expr.split(/\s+AND\s+/i).filter((p) => p.trim() !== '');
  if (parts.length > MAX_CLAUSES)
    return refuse(`filter joins at most ${MAX_CLAUSES} clauses`, 'filter');
  const clauses: Clause[] = [];
  for (const part of parts) {
    const m = /^\s*(\w+)\s*=\s*(.+?)\s*$/.exec(part);
    if (!m) return refuse('filter clauses are field=value, joined by AND', 'filter');
    const [, field, raw] = m as unknown as [string, string, string];
    if (field === 'createdAfter' || field === 'updatedAfter')
      return refuse(`this registry keeps no timestamps to filter by ${field}`, 'filter');
    if (field !== 'displayName' && field !== 'type' && field !== 'publisherId')
      return refuse(
        `filter fields are displayName, type and publisherId, not ${field.slice(0, 32)}`,
        'filter',
      );
    const values = raw.split(',').map((v) => v.trim().replace(/^(['"])(.*)\1$/, '$2'));
    if (
      values.length > ARD_LIMITS.filterValues ||
      values.some((v) => v.length > ARD_LIMITS.valueChars)
    )
      return refuse(`a clause holds at most ${ARD_LIMITS.filterValues} values`, 'filter');
    clauses.push({ field, values });
  }
  return clauses;
}

const matches = (e: CatalogEntry, c: Clause) => {
  if (c.field === 'displayName')
    return c.values.some((v) => e.displayName.toLowerCase().includes(v.toLowerCase()));
  const have = c.field === 'type' ? e.type : e.identifier.split(':')[2];
  return c.values.includes(have ?? '');
};

function readOffset(token: string | null): number | Refusal {
  if (token === null) return 0;
  const n =
    token.length <= ARD_LIMITS.tokenChars && /^o\d{1,6}$/.test(token)
      ? Number(token.slice(1))
      : NaN;
  return Number.isSafeInteger(n)
    ? n
    : refuse('pageToken must be a token this registry gave', 'pageToken');
}

/** One page of the entries `params` ask for, or why the request is refused. */
export function listAgents(entries: CatalogEntry[], params: URLSearchParams): ListPage | Refusal {
  for (const key of params.keys())
    if (!['filter', 'orderBy', 'pageSize', 'pageToken'].includes(key))
      return refuse(`unknown parameter ${key.slice(0, 32)}`, key.slice(0, 32));
  const clauses = parseFilter(params.get('filter') ?? '');
  if ('refused' in clauses) return clauses;
  const order = (params.get('orderBy') ?? 'identifier').trim().split(/\s+/);
  const [by, dir] = order as [string, string | undefined];
  if (!ORDER.has(by) || order.length > 2 || (dir !== undefined && !/^(ASC|DESC)$/i.test(dir)))
    return refuse('orderBy is displayName, identifier or type, then ASC or DESC', 'orderBy');
  const sizeText = params.get('pageSize');
  const size = sizeText === null ? 20 : /^\d{1,4}$/.test(sizeText) ? Number(sizeText) : 0;
  if (size < 1 || size > ARD_LIMITS.pageSize)
    return refuse(`pageSize must be a whole number from 1 to ${ARD_LIMITS.pageSize}`, 'pageSize');
  const offset = readOffset(params.get('pageToken'));
  if (typeof offset !== 'number') return offset;
  const key = by as 'displayName' | 'identifier' | 'type';
  const sign = dir && /^DESC$/i.test(dir) ? -1 : 1;
  const kept = entries
    .filter((e) => clauses.every((c) => matches(e, c)))
    .sort(
      (a, b) => sign * (a[key].localeCompare(b[key]) || a.identifier.localeCompare(b.identifier)),
    );
  const end = offset + size;
  return {
    items: kept.slice(offset, end),
    total: kept.length,
    ...(end < kept.length ? { pageToken: `o${end}` } : {}),
  };
}
