/**
 * @module console/pages/trace — Agent Process: what actually happened between nodes. A waterfall of one
 * question's calls (every call of the chosen record's W3C trace: start, duration, outcome, each
 * nested under the call that made it), calls per minute with the error rate, and the records newest first,
 * with live additions over SSE, filters (node, outcome), paging by cursor, and failures and empty
 * returns marked. `#/trace?id=<n>` highlights one record (other pages link facts to trace ids).
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { fleet, toApiError, trace, traceStream } from '../api.js';
import { RateChart, Waterfall } from '../charts.js';
import { TRACE_OUTCOMES } from '../constants.js';
import { valueTo } from '../forms.js';
import { html } from '../html.js';
import { ErrorLine, LiveMark, fmtTime, useStream } from './common.js';

const PAGE = 50;
/** Calls the rate chart is drawn from: the newest this many, then what arrives live. */
const RECENT = 500;
const MINUTES = 15;
/** Most calls of one question the waterfall reads (a trace page's limit). */
const QUESTION_CALLS = 500;

/** The `id` of `#/trace?id=<n>`, or null. */
function linkedId() {
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
function query(filter, before, limit = PAGE) {
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
function questionOf(anchor) {
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

/** @param {{ r: TraceRecord, highlight: boolean }} props */
function Row({ r, highlight }) {
  const ref = useRef(/** @type {HTMLTableRowElement | null} */ (null));
  useEffect(() => {
    if (highlight) ref.current?.scrollIntoView({ block: 'nearest' });
  }, [highlight]);
  const cls = `outcome-${r.outcome}${highlight ? ' highlight' : ''}`;
  return html`
    <tr ref=${ref} data-trace-id=${r.id} data-outcome=${r.outcome} class=${cls}>
      <td data-label="#"><a href=${`#/trace?id=${r.id}`}>${r.id}</a></td>
      <td data-label="time" class="muted">${fmtTime(r.ts)}</td>
      <td data-label="from → to">${r.from} → <strong>${r.to}</strong></td>
      <td data-label="capability"><code>${r.capability}</code></td>
      <td data-label="duration">${r.durationMs} ms</td>
      <td data-label="outcome"><span class=${`badge ${r.outcome}`}>${r.outcome === 'empty' ? 'empty return' : r.outcome}</span>${r.errorCode ? html` <code>${r.errorCode}</code>` : ''}</td>
      <td data-label="bytes">${r.bytes} B</td>
    </tr>`;
}

export function Trace() {
  const [filter, setFilter] = useState(/** @type {Filter} */ ({ node: '', outcome: '' }));
  const [records, setRecords] = useState(/** @type {TraceRecord[] | null} */ (null));
  const [recent, setRecent] = useState(/** @type {TraceRecord[]} */ ([]));
  const [nextBefore, setNextBefore] = useState(/** @type {number | null} */ (null));
  const [error, setError] = useState(/** @type {import('../types').ApiError | null} */ (null));
  const [nodes, setNodes] = useState(/** @type {string[]} */ ([]));
  const [target, setTarget] = useState(linkedId());
  const [picked, setPicked] = useState(/** @type {number | null} */ (null));
  const [question, setQuestion] = useState(/** @type {TraceRecord[]} */ ([]));
  const filterRef = useRef(filter);
  filterRef.current = filter;

  useEffect(() => {
    const on = () => (setTarget(linkedId()), setPicked(null));
    addEventListener('hashchange', on);
    fleet().then(
      (s) => setNodes([s.hub, ...s.nodes.map((n) => n.name)]),
      () => {},
    );
    trace(query({ node: '', outcome: '' }, null, RECENT)).then(
      (p) => setRecent((rs) => [...rs, ...p.records.filter((r) => !rs.some((x) => x.id === r.id))]),
      () => {},
    );
    return () => removeEventListener('hashchange', on);
  }, []);

  // First page, again whenever the filter or the linked record changes: a linked record starts the page.
  useEffect(() => {
    let alive = true;
    setRecords(null);
    setError(null);
    trace(query(filter, target ? target + 1 : null)).then(
      (p) => alive && (setRecords(p.records), setNextBefore(p.nextBefore)),
      (e) => alive && setError(toApiError(e)),
    );
    return () => {
      alive = false;
    };
  }, [filter.node, filter.outcome, target]);

  // Live additions: one record per SSE message, listed when it passes the filter.
  const live = useStream(
    traceStream,
    (/** @type {TraceRecord} */ r) => {
      setRecent((rs) => [r, ...rs].slice(0, RECENT * 2));
      // A call of the question on show joins its waterfall as it happens.
      setQuestion((q) =>
        q[0]?.traceId && q[0].traceId === r.traceId && !q.some((x) => x.id === r.id)
          ? [...q, r]
          : q,
      );
      const f = filterRef.current;
      if ((f.node && r.to !== f.node) || (f.outcome && r.outcome !== f.outcome)) return;
      setRecords((rs) => (rs && !rs.some((x) => x.id === r.id) ? [r, ...rs] : rs));
    },
    [],
  );

  const older = () =>
    trace(query(filter, nextBefore)).then(
      (p) => (setRecords((rs) => [...(rs ?? []), ...p.records]), setNextBefore(p.nextBefore)),
      (e) => setError(toApiError(e)),
    );
  /** @param {keyof Filter} k */
  const set = (k) => valueTo((v) => setFilter({ ...filter, [k]: v }));
  const failed = records?.filter((r) => r.outcome !== 'ok').length ?? 0;
  const chosen = picked ?? target;
  // The waterfall shows the question of the chosen record, else of the newest one listed.
  const anchor =
    records?.find((r) => r.id === chosen) ?? question.find((r) => r.id === chosen) ?? records?.[0];
  const anchorKey = anchor ? anchor.traceId || `record ${anchor.id}` : '';
  useEffect(() => {
    let alive = true;
    questionOf(anchor).then(
      (q) => alive && setQuestion(q),
      () => alive && setQuestion(anchor ? [anchor] : []),
    );
    return () => {
      alive = false;
    };
  }, [anchorKey]);

  return html`
    <h2>Agent Process <small><${LiveMark} live=${live} />${records ? ` · ${records.length} shown, ${failed} failed or empty` : ''}</small></h2>
    <form class="filters" onSubmit=${(/** @type {Event} */ e) => e.preventDefault()}>
      <label>node <select name="node" value=${filter.node} onChange=${set('node')}>
        <option value="">any</option>${nodes.map((n) => html`<option value=${n}>${n}</option>`)}
      </select></label>
      <label>outcome <select name="outcome" value=${filter.outcome} onChange=${set('outcome')}>
        <option value="">any</option>${TRACE_OUTCOMES.map((o) => html`<option value=${o}>${o}</option>`)}
      </select></label>
      ${target ? html`<a href="#/trace" class="muted">showing from record ${target} · back to newest</a>` : ''}
    </form>
    <${ErrorLine} error=${error} />
    <div class="pictures-row">
      ${
        question.length > 0 &&
        html`
        <figure class="card question" data-trace=${question[0]?.traceId ?? ''}>
          <figcaption><strong>One question's calls</strong> <span class="muted">· ${question.length} call(s) of trace <code>${(question[0]?.traceId || '–').slice(0, 8)}</code>, each under the call that made it; choose a call to highlight its record</span></figcaption>
          <${Waterfall} records=${question} selected=${chosen} onSelect=${setPicked} />
        </figure>`
      }
      <figure class="card">
        <figcaption><strong>Calls per minute</strong> <span class="muted">· last ${MINUTES} minutes; the line is the share failed or empty</span></figcaption>
        <${RateChart} buckets=${perMinute(recent, Date.now())} />
      </figure>
    </div>
    ${!records && !error ? html`<p class="muted">Loading the trace…</p>` : ''}
    ${records && !records.length ? html`<p class="muted empty-note">No calls recorded yet${filter.node || filter.outcome ? ' for this filter' : ''}.</p>` : ''}
    ${
      records?.length
        ? html`
      <table class="trace stack">
        <thead><tr><th>#</th><th>time</th><th>from → to</th><th>capability</th><th>duration</th><th>outcome</th><th>bytes</th></tr></thead>
        <tbody>${records.map((r) => html`<${Row} key=${r.id} r=${r} highlight=${r.id === chosen} />`)}</tbody>
      </table>`
        : ''
    }
    ${nextBefore ? html`<p><button type="button" class="older" onClick=${older}>Older</button></p>` : ''}`;
}
