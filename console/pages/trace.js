/**
 * @module pages/trace — Agent Process: what actually happened between nodes, newest first, with
 * live additions over SSE, filters (node, outcome), paging by cursor, and failures and empty
 * returns marked. `#/trace?id=<n>` highlights one record (other pages link facts to trace ids).
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { fleet, toApiError, trace, traceStream } from '../api.js';
import { TRACE_OUTCOMES } from '../constants.js';
import { valueTo } from '../forms.js';
import { html } from '../html.js';
import { ErrorLine, fmtTime } from './ops-common.js';

const PAGE = 50;

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
function query(filter, before) {
  const q = new URLSearchParams({ limit: String(PAGE) });
  if (before) q.set('before', String(before));
  if (filter.node) q.set('to', filter.node);
  if (filter.outcome) q.set('outcome', filter.outcome);
  return q;
}

/** @param {{ r: TraceRecord, highlight: boolean }} props */
function Row({ r, highlight }) {
  const ref = useRef(/** @type {HTMLTableRowElement | null} */ (null));
  useEffect(() => { if (highlight) ref.current?.scrollIntoView({ block: 'center' }); }, [highlight]);
  const cls = `outcome-${r.outcome}${highlight ? ' highlight' : ''}`;
  return html`
    <tr ref=${ref} data-trace-id=${r.id} data-outcome=${r.outcome} class=${cls}>
      <td><a href=${`#/trace?id=${r.id}`}>${r.id}</a></td>
      <td class="muted">${fmtTime(r.ts)}</td>
      <td>${r.from} → <strong>${r.to}</strong></td>
      <td><code>${r.capability}</code></td>
      <td>${r.durationMs} ms</td>
      <td><span class=${`badge ${r.outcome}`}>${r.outcome === 'empty' ? 'empty return' : r.outcome}</span>${r.errorCode ? html` <code>${r.errorCode}</code>` : ''}</td>
      <td>${r.bytes} B</td>
    </tr>`;
}

export function Trace() {
  const [filter, setFilter] = useState(/** @type {Filter} */ ({ node: '', outcome: '' }));
  const [records, setRecords] = useState(/** @type {TraceRecord[] | null} */ (null));
  const [nextBefore, setNextBefore] = useState(/** @type {number | null} */ (null));
  const [error, setError] = useState(/** @type {import('../types').ApiError | null} */ (null));
  const [nodes, setNodes] = useState(/** @type {string[]} */ ([]));
  const [live, setLive] = useState(false);
  const [target, setTarget] = useState(linkedId());
  const filterRef = useRef(filter);
  filterRef.current = filter;

  useEffect(() => {
    const on = () => setTarget(linkedId());
    addEventListener('hashchange', on);
    fleet().then((s) => setNodes([s.hub, ...s.nodes.map((n) => n.name)]), () => {});
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
    return () => { alive = false; };
  }, [filter.node, filter.outcome, target]);

  // Live additions: one record per SSE message, kept when it passes the filter.
  useEffect(() => {
    const es = traceStream();
    es.onopen = () => setLive(true);
    es.onerror = () => setLive(false);
    es.onmessage = (ev) => {
      /** @type {TraceRecord} */
      const r = JSON.parse(ev.data);
      const f = filterRef.current;
      if ((f.node && r.to !== f.node) || (f.outcome && r.outcome !== f.outcome)) return;
      setRecords((rs) => (rs && !rs.some((x) => x.id === r.id) ? [r, ...rs] : rs));
    };
    return () => es.close();
  }, []);

  const older = () =>
    trace(query(filter, nextBefore)).then((p) => (setRecords((rs) => [...(rs ?? []), ...p.records]), setNextBefore(p.nextBefore)), (e) => setError(toApiError(e)));
  /** @param {keyof Filter} k */
  const set = (k) => valueTo((v) => setFilter({ ...filter, [k]: v }));
  const failed = records?.filter((r) => r.outcome !== 'ok').length ?? 0;

  return html`
    <h2>Agent Process <small>${live ? html`<span class="ok" data-live="on">● live</span>` : html`<span data-live="off">○ connecting…</span>`}${records ? ` · ${records.length} shown, ${failed} failed or empty` : ''}</small></h2>
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
    ${!records && !error ? html`<p class="muted">Loading the trace…</p>` : ''}
    ${records && !records.length ? html`<p class="muted empty-note">No calls recorded yet${filter.node || filter.outcome ? ' for this filter' : ''}.</p>` : ''}
    ${records?.length ? html`
      <table class="trace">
        <thead><tr><th>#</th><th>time</th><th>from → to</th><th>capability</th><th>duration</th><th>outcome</th><th>bytes</th></tr></thead>
        <tbody>${records.map((r) => html`<${Row} key=${r.id} r=${r} highlight=${r.id === target} />`)}</tbody>
      </table>` : ''}
    ${nextBefore ? html`<p><button type="button" class="older" onClick=${older}>Older</button></p>` : ''}`;
}
