/**
 * @module hub/fleet/ard-search — Agentic Resource Discovery search over the fleet (ARD v0.9 §7):
 * `POST /ard/search` (`{query: {text, filter}, federation, pageSize, pageToken}` → entries of the
 * AI Catalog with a relevance `score` 0–100 and their `source`, best first) and `GET /ard/agents`
 * (deterministic browsing: Appendix A's `filter` expression, `orderBy`, paged). It reads the same
 * entries as the AI Catalog, made afresh from the live fleet at each request; it federates with
 * nobody (`federation` `none`; `auto` and `referrals` answer alike, with no referrals). Every bound
 * (docs/limits.md) refuses with ARD's `INVALID_ARGUMENT` (400) before any work.
 */

import type { CatalogEntry, IndexedEntry } from './ai-catalog.ts';

/** Bounds of one ARD request (docs/limits.md). */
export const ARD_LIMITS = {
  bodyBytes: 64 * 1024,
  textChars: 1_000,
  textWords: 32,
  filterKeys: 16,
  filterValues: 64,
  valueChars: 256,
  pageSize: 100,
  tokenChars: 128,
  listFilterChars: 1_000,
} as const;

export type Refusal = { refused: string; field?: string };
const refuse = (refused: string, field?: string): Refusal => ({
  refused,
  ...(field ? { field } : {}),
});

type Filter = Map<string, string[]>;
export interface SearchRequest {
  text: string;
  filter: Filter;
  pageSize: number;
  offset: number;
  /** What a page token is bound to: the same query (a token of another is refused). */
  fingerprint: string;
}

/** Field paths a filter may name: the entry's fields, `publisher` (from the URN) and `metadata.*`. */
const FILTER_KEYS = new Set([
  'identifier',
  'displayName',
  'type',
  'tags',
  'capabilities',
  'version',
  'publisher',
]);
const FEDERATION = new Set(['auto', 'referrals', 'none']);

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** A short stable hash (FNV-1a, 32 bits) that binds a page token to its query. */
function fingerprintOf(s: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193) >>> 0;
  return h.toString(36);
}

const tokenOf = (offset: number, fingerprint: string) =>
  Buffer.from(JSON.stringify({ o: offset, f: fingerprint })).toString('base64url');

function readToken(token: unknown, fingerprint: string): number | Refusal {
  if (token === undefined) return 0;
  if (typeof token !== 'string' || token.length > ARD_LIMITS.tokenChars)
    return refuse('pageToken must be a token this registry gave', 'pageToken');
  try {
    const t = JSON.parse(Buffer.from(token, 'base64url').toString());
    if (isObject(t) && t.f === fingerprint && Number.isSafeInteger(t.o) && (t.o as number) >= 0)
      return t.o as number;
  } catch {}
  return refuse('pageToken does not belong to this query', 'pageToken');
}

function readPageSize(v: unknown, fallback: number): number | Refusal {
  if (v === undefined) return fallback;
  const n = typeof v === 'string' && /^\d{1,4}$/.test(v) ? Number(v) : v;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 1 || n > ARD_LIMITS.pageSize)
    return refuse(`pageSize must be a whole number from 1 to ${ARD_LIMITS.pageSize}`, 'pageSize');
  return n;
}

function readFilter(v: unknown): Filter | Refusal {
  const filter: Filter = new Map();
  if (v === undefined) return filter;
  if (!isObject(v)) return refuse('query.filter must be an object', 'query.filter');
  const keys = Object.keys(v);
  if (keys.length > ARD_LIMITS.filterKeys)
    return refuse(`query.filter names at most ${ARD_LIMITS.filterKeys} fields`, 'query.filter');
  let total = 0;
  for (const key of keys) {
    const field = `query.filter.${key.slice(0, 64)}`;
    if (!FILTER_KEYS.has(key) && !/^metadata\.[\w.-]{1,128}$/.test(key))
      return refuse(`this registry does not filter on ${key.slice(0, 64)}`, field);
    const raw = v[key];
    const values = Array.isArray(raw) ? raw : [raw];
    total += values.length;
    if (total > ARD_LIMITS.filterValues)
      return refuse(`query.filter holds at most ${ARD_LIMITS.filterValues} values`, 'query.filter');
    if (!values.every((x) => typeof x === 'string' && x.length <= ARD_LIMITS.valueChars))
      return refuse(
        `filter values are strings of at most ${ARD_LIMITS.valueChars} characters`,
        field,
      );
    filter.set(key, values as string[]);
  }
  return filter;
}

const words = (text: string) => text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];

/** A search request read from its JSON body, or why it is refused. */
export function parseSearch(body: unknown): SearchRequest | Refusal {
  if (!isObject(body)) return refuse('the body must be a JSON object');
  for (const key of Object.keys(body))
    if (!['query', 'federation', 'pageSize', 'pageToken'].includes(key))
      return refuse(`unknown member ${key.slice(0, 32)}`, key.slice(0, 32));
  const q = body.query;
  if (!isObject(q)) return refuse('query must be an object with text', 'query');
  for (const key of Object.keys(q))
    if (key !== 'text' && key !== 'filter')
      return refuse(`unknown member query.${key.slice(0, 32)}`, 'query');
  if (typeof q.text !== 'string' || q.text.trim() === '')
    return refuse('query.text is required', 'query.text');
  if (q.text.length > ARD_LIMITS.textChars)
    return refuse(`query.text is at most ${ARD_LIMITS.textChars} characters`, 'query.text');
  if (words(q.text).length > ARD_LIMITS.textWords)
    return refuse(`query.text is at most ${ARD_LIMITS.textWords} words`, 'query.text');
  if (body.federation !== undefined && !FEDERATION.has(body.federation as string))
    return refuse('federation is auto, referrals or none', 'federation');
  const filter = readFilter(q.filter);
  if ('refused' in filter) return filter;
  const pageSize = readPageSize(body.pageSize, 10);
  if (typeof pageSize !== 'number') return pageSize;
  const fingerprint = fingerprintOf(JSON.stringify([q.text, [...filter]]));
  const offset = readToken(body.pageToken, fingerprint);
  if (typeof offset !== 'number') return offset;
  return { text: q.text, filter, pageSize, offset, fingerprint };
}

/** The values an entry holds at a filter's field path. */
function valuesAt(e: CatalogEntry, path: string): unknown[] {
  if (path === 'publisher') return [e.identifier.split(':')[2]];
  if (path.startsWith('metadata.')) return [e.metadata[path.slice('metadata.'.length)]];
  const v = (e as unknown as Record<string, unknown>)[path];
  return Array.isArray(v) ? v : [v];
}

/** Within a key any value matches (OR); across keys every key must (AND). */
const passes = (e: CatalogEntry, filter: Filter) =>
  [...filter].every(([path, wanted]) =>
    valuesAt(e, path).some((have) => have !== undefined && wanted.includes(String(have))),
  );

/**
 * How well an entry answers the text, 0–100: each word of the text counts by the strongest place
 * it is found in (the member's name or a skill 3, a tag 2, its role or description 1), as a share
 * of every word found in the strongest place.
 */
function scoreOf(entry: IndexedEntry, asked: string[]): number {
  const strong = new Set(words(entry.words.strong));
  const tags = new Set(words(entry.words.tags));
  const weak = new Set(words(entry.words.weak));
  let sum = 0;
  for (const w of asked) sum += strong.has(w) ? 3 : tags.has(w) ? 2 : weak.has(w) ? 1 : 0;
  return Math.round((100 * sum) / (3 * asked.length));
}

export interface SearchPage {
  results: (CatalogEntry & { score: number; source: string })[];
  referrals: never[];
  pageToken?: string;
}

/** One page of the entries that answer the text and pass the filter, best first. */
export function search(entries: IndexedEntry[], req: SearchRequest, source: string): SearchPage {
  const asked = [...new Set(words(req.text))];
  const ranked = entries
    .filter((e) => passes(e.entry, req.filter))
    .map((e) => ({ ...e.entry, score: scoreOf(e, asked), source }))
    .filter((r) => r.score > 0)
    .sort((a, b) => b.score - a.score || a.identifier.localeCompare(b.identifier));
  const end = req.offset + req.pageSize;
  return {
    results: ranked.slice(req.offset, end),
    referrals: [],
    ...(end < ranked.length ? { pageToken: tokenOf(end, req.fingerprint) } : {}),
  };
}
