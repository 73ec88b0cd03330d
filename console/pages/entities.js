/** @module console/pages/entities — USCC as the entity key: resolve a name, USCC or stock code, and see how much of crm and scanner is aligned and where the gaps are. */
import { useEffect, useState } from 'preact/hooks';
import { hub, refused, toApiError } from '../api.js';
import { valueTo } from '../forms.js';
import { html } from '../html.js';
import { ErrorLine } from './common.js';

/**
 * @typedef {import('../types').ApiError} ApiError
 * @typedef {import('../types').HubResults} HubResults
 */
/**
 * What a call came to: its result or its error.
 * @template R
 * @typedef {{result: R, error?: undefined} | {result?: undefined, error: ApiError}} Outcome
 */

/**
 * @template {keyof HubResults} K
 * @param {K} skill
 * @param {object} args
 * @returns {Promise<Outcome<HubResults[K]>>}
 */
async function call(skill, args) {
  try {
    const r = await hub(skill, args);
    return refused(r) ? { error: r.error } : { result: r.result };
  } catch (err) {
    return { error: toApiError(err) };
  }
}

/** Entity Alignment page. */
export function Entities() {
  return html`
    <h2>Entity Alignment <small>USCC as the entity key</small></h2>
    <${Resolve} />
    <${Coverage} />`;
}

function Resolve() {
  const [q, setQ] = useState({ name: '', uscc: '', code: '' });
  const [busy, setBusy] = useState(false);
  const [out, setOut] = useState(
    /** @type {Outcome<import('../types').EntityResolution> | null} */ (null),
  );

  /** @param {import('../types').FormEvent} e */
  async function submit(e) {
    e.preventDefault();
    const args = Object.fromEntries(
      Object.entries(q)
        .map(([k, v]) => [k, v.trim()])
        .filter(([, v]) => v),
    );
    setBusy(true), setOut(null);
    setOut(await call('entity.resolve', args));
    setBusy(false);
  }
  /** @param {'name'|'uscc'|'code'} k @param {string} label */
  const field = (k, label) =>
    html`<label>${label} <input type="text" name=${k} value=${q[k]} onInput=${valueTo((v) => setQ({ ...q, [k]: v }))} /></label>`;
  const r = out?.result;
  return html`
    <section class="card resolve">
      <h3>Resolve</h3>
      <form onSubmit=${submit}>
        ${field('name', 'company name')}${field('uscc', 'USCC (18 characters)')}${field('code', 'stock code (6 digits)')}
        <button type="submit" disabled=${busy}>${busy ? 'Resolving…' : 'Resolve'}</button>
      </form>
      <${ErrorLine} error=${out?.error ?? null} />
      ${
        r &&
        html`
        <div class="resolution" data-status=${r.status}>
          <p><span class=${`badge ${r.status}`}>${r.status}</span> ${r.reason}</p>
          ${r.entity && html`<p>Entity: <strong>${r.entity.name}</strong> · USCC <code>${r.entity.uscc}</code> · crm ${r.entity.crmId} · ${r.entity.industry} · ${r.entity.city}${r.entity.stockCode ? ` · ${r.entity.stockCode} ${r.entity.stockName ?? ''}` : ''}</p>`}
          ${
            r.candidates.length > 0 &&
            html`
            <table class="candidates stack">
              <thead><tr><th>name</th><th>crm</th><th>USCC</th><th>stock</th><th>matched by</th><th>note</th></tr></thead>
              <tbody>${r.candidates.map(
                (c) => html`
                <tr>
                  <td data-label="name">${c.name}</td><td data-label="crm">${c.crmId ?? '–'}</td>
                  <td data-label="USCC">${c.uscc ? html`<code>${c.uscc}</code> ${c.usccValid ? html`<span class="ok">valid</span>` : html`<span class="error">invalid</span>`}` : '–'}</td>
                  <td data-label="stock">${c.stockCode ? `${c.stockCode} ${c.stockName ?? ''}${c.onScanner ? '' : ' (not on scanner)'}` : '–'}</td>
                  <td data-label="matched by">${c.matchedBy.join(', ')}</td>
                  <td data-label="note" class="muted">${c.unconfirmed ?? 'confirmed'}</td>
                </tr>`,
              )}</tbody>
            </table>`
          }
        </div>`
      }
    </section>`;
}

function Coverage() {
  const [out, setOut] = useState(
    /** @type {Outcome<import('../types').EntityCoverage> | null} */ (null),
  );
  const [busy, setBusy] = useState(false);
  const load = async () => (
    setBusy(true), setOut(await call('entity.coverage', {})), setBusy(false)
  );
  useEffect(() => void load(), []);
  const c = out?.result;
  /** @type {Record<string, import('../types').CoverageGap[]>} */
  const byKind = {};
  for (const g of c?.gaps ?? []) (byKind[g.kind] ??= []).push(g);
  return html`
    <section class="card coverage">
      <h3>Coverage ${c && html`<small class="muted">crm ${c.asOf.crm} · scanner ${c.asOf.scanner}</small>`}
        <button type="button" class="refresh small" onClick=${load} disabled=${busy}>${busy ? 'Loading…' : 'Refresh'}</button></h3>
      <${ErrorLine} error=${out?.error ?? null} />
      ${!out && html`<p class="muted">Loading coverage…</p>`}
      ${
        c &&
        html`
        <p class="counts">
          <span><strong>${c.crm.aligned}</strong> of ${c.crm.customers} crm customers aligned</span>
          <span><strong>${c.scanner.aligned}</strong> of ${c.scanner.codes} scanner codes aligned</span>
          <span><strong>${c.gaps.length}</strong> gaps</span>
        </p>
        ${Object.entries(byKind).map(
          ([kind, gaps]) => html`
          <div class="gap-group" data-kind=${kind}>
            <h4><code>${kind}</code> <small class="muted">${gaps.length}</small></h4>
            <ul>${gaps.map((g) => html`<li><code>${g.key}</code> — ${g.reason}</li>`)}</ul>
          </div>`,
        )}
        ${c.gaps.length === 0 && html`<p class="ok">No gaps: every record is aligned.</p>`}`
      }
    </section>`;
}
