/**
 * @module console/pages/trace-views — the parts of the Agent Process page: the filters, the
 * pictures (one question's waterfall, calls per minute) and the table of records, one row each,
 * with failures and empty returns marked and a linked record highlighted.
 */
import { useEffect, useRef } from 'preact/hooks';
import { RateChart, Waterfall } from '../charts.js';
import { TRACE_OUTCOMES } from '../constants.js';
import { valueTo } from '../forms.js';
import { html } from '../html.js';
import { fmtTime } from './common.js';
import { MINUTES, perMinute } from './trace-data.js';

/** @typedef {import('../types').TraceRecord} TraceRecord */
/** @typedef {import('./trace-data.js').Filter} Filter */

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

/** @param {{ filter: Filter, setFilter: (f: Filter) => void, nodes: string[], target: number | null }} props */
export function TraceFilters({ filter, setFilter, nodes, target }) {
  /** @param {keyof Filter} k */
  const set = (k) => valueTo((v) => setFilter({ ...filter, [k]: v }));
  return html`
  <form class="filters" onSubmit=${(/** @type {Event} */ e) => e.preventDefault()}>
    <label>node <select name="node" value=${filter.node} onChange=${set('node')}>
      <option value="">any</option>${nodes.map((n) => html`<option value=${n}>${n}</option>`)}
    </select></label>
    <label>outcome <select name="outcome" value=${filter.outcome} onChange=${set('outcome')}>
      <option value="">any</option>${TRACE_OUTCOMES.map((o) => html`<option value=${o}>${o}</option>`)}
    </select></label>
    ${target ? html`<a href="#/trace" class="muted">showing from record ${target} · back to newest</a>` : ''}
  </form>`;
}

/** @param {{ question: TraceRecord[], recent: TraceRecord[], chosen: number | null, onSelect: (id: number) => void }} props */
export function TracePictures({ question, recent, chosen, onSelect }) {
  return html`
  <div class="pictures-row">
    ${
      question.length > 0 &&
      html`
      <figure class="card question" data-trace=${question[0]?.traceId ?? ''}>
        <figcaption><strong>One question's calls</strong> <span class="muted">· ${question.length} call(s) of trace <code>${(question[0]?.traceId || '–').slice(0, 8)}</code>, each under the call that made it; choose a call to highlight its record</span></figcaption>
        <${Waterfall} records=${question} selected=${chosen} onSelect=${onSelect} />
      </figure>`
    }
    <figure class="card">
      <figcaption><strong>Calls per minute</strong> <span class="muted">· last ${MINUTES} minutes; the line is the share failed or empty</span></figcaption>
      <${RateChart} buckets=${perMinute(recent, Date.now())} />
    </figure>
  </div>`;
}

/** @param {{ records: TraceRecord[], chosen: number | null }} props */
export function TraceTable({ records, chosen }) {
  return html`
    <table class="trace stack">
      <thead><tr><th>#</th><th>time</th><th>from → to</th><th>capability</th><th>duration</th><th>outcome</th><th>bytes</th></tr></thead>
      <tbody>${records.map((r) => html`<${Row} key=${r.id} r=${r} highlight=${r.id === chosen} />`)}</tbody>
    </table>`;
}
