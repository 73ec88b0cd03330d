/**
 * @module console/pages/trace-data — what the Agent Process page reads: a page of the trace for a
 * filter, the calls of one question (one W3C trace), the record `#/trace?id=<n>` links to, and the
 * calls and failures per minute the rate chart draws.
 */
import { trace } from '../api.js';

/** Records per page of the table. */
const PAGE = 50;
/** Calls the rate chart is drawn from: the newest this many, then what arrives live. */
export const RECENT = 500;
/** The minutes the rate chart spans. */
export const MINUTES = 15;
/** Most calls of one question the waterfall reads (a trace page's limit). */
const QUESTION_CALLS = 500;

/** The `id` of `#/trace?id=<n>`, or null. */
export function linkedId() {
  const q = location.hash.split('?')[1];
  const id = Number(new URLSearchParams(q ?? '').get('id'));
  return Number.isInteger(id) && id > 0 ? id : null;
}

/** @typedef {import('../types').TraceRecord} TraceRecord */
/** @typedef {{node: string, outcome: string}} Filter */

/**
 * The query of a page of the trace.
 * @param {Filter} filter
 * @param {number | null} before
 */
export function query(filter, before, limit = PAGE) {
  const q = new URLSearchParams({ limit: String(limit) });
  if (before) q.set('before', String(before));
  if (filter.node) q.set('to', filter.node);
  if (filter.outcome) q.set('outcome', filter.outcome);
  return q;
}

/**
 * The calls of one question: every record of `anchor`'s trace (a record without a trace id, from
 * before records had one, stands alone).
 * @param {TraceRecord | undefined} anchor
 * @returns {Promise<TraceRecord[]>}
 */
export function questionOf(anchor) {
  if (!anchor) return Promise.resolve([]);
  if (!anchor.traceId) return Promise.resolve([anchor]);
  return trace(
    new URLSearchParams({ traceId: anchor.traceId, limit: String(QUESTION_CALLS) }),
  ).then((p) => p.records);
}

/**
 * Calls and failures per minute over the last MINUTES minutes up to `now`.
 * @param {TraceRecord[]} records
 * @param {number} now
 */
export function perMinute(records, now) {
  const last = Math.floor(now / 60_000);
  const buckets = Array.from({ length: MINUTES }, (_, i) => ({
    minute: last - MINUTES + 1 + i,
    calls: 0,
    errors: 0,
  }));
  for (const r of records) {
    const b = buckets[Math.floor(Date.parse(r.ts) / 60_000) - (last - MINUTES + 1)];
    if (!b) continue;
    b.calls++;
    if (r.outcome !== 'ok') b.errors++;
  }
  return buckets;
}
