/**
 * @module console/pages/customer-ops — which industry's customers to contact today, and why (the hub's
 * customer.reach: scanner's sector movement joined with crm's follow-ups), beside a bar chart of
 * every sector's movement. Clicking a bar shows only that industry in the ranked list.
 */
import { useEffect, useState } from 'preact/hooks';
import { hub, refused, toApiError } from '../api.js';
import { BarChart } from '../charts.js';
import { html } from '../html.js';
import { ErrorLine } from './common.js';

/** @typedef {import('../types').HubResults} HubResults */

/** @param {number} n */
const pct = (n) => `${n > 0 ? '+' : ''}${n}%`;

/**
 * One hub capability's answer, or its error.
 * @template {keyof HubResults} K
 * @param {K} skill
 * @returns {Promise<{answer: import('../types').HubAnswer<HubResults[K]>} | {error: import('../types').ApiError}>}
 */
async function run(skill) {
  try {
    const r = await hub(skill);
    return refused(r) ? { error: r.error } : { answer: r };
  } catch (err) {
    return { error: toApiError(err) };
  }
}

/** Customer Ops page. */
export function CustomerOps() {
  const [reach, setReach] = useState(
    /** @type {import('../types').HubAnswer<import('../types').CustomerReach> | null} */ (null),
  );
  const [movement, setMovement] = useState(
    /** @type {import('../types').SectorMovement | null} */ (null),
  );
  const [error, setError] = useState(/** @type {import('../types').ApiError | null} */ (null));
  const [busy, setBusy] = useState(false);
  const [only, setOnly] = useState('');

  async function load() {
    setBusy(true), setError(null);
    const [r, m] = await Promise.all([run('customer.reach'), run('sector.movement')]);
    if ('answer' in r) setReach(r.answer);
    if ('answer' in m) setMovement(m.answer.result);
    setError('error' in r ? r.error : 'error' in m ? m.error : null);
    setBusy(false);
  }
  useEffect(() => void load(), []);

  const recs = reach?.result?.recommendations ?? [];
  const shown = only ? recs.filter((r) => r.industry === only) : recs;
  const sectors = [...(movement?.sectors ?? [])].sort((a, b) => b.avgChangePct - a.avgChangePct);
  const onlyName = sectors.find((s) => s.sector === only)?.name ?? only;
  return html`
    <h2>Customer Ops <small>${reach ? `as of ${reach.result.asOf}` : 'which industry to contact today'}</small></h2>
    <div class="toolbar">
      <button type="button" class="refresh" onClick=${load} disabled=${busy}>${busy ? 'Refreshing…' : 'Refresh'}</button>
      ${reach?.summary && html`<span class="summary">${reach.summary}</span>`}
    </div>
    <${ErrorLine} error=${error} />
    ${!reach && !error && html`<p class="muted">Loading recommendations…</p>`}
    <div class="side-by-side">
      ${
        sectors.length > 0 &&
        html`
        <figure class="card movement">
          <figcaption><strong>Sector movement today</strong> <span class="muted">· darker bars are recommended; choose a bar to filter the list</span></figcaption>
          <${BarChart} title="average change per sector, today" selected=${only} onSelect=${setOnly}
            items=${sectors.map((s) => ({ key: s.sector, label: s.name, value: s.avgChangePct, marked: recs.some((r) => r.industry === s.sector) }))} />
        </figure>`
      }
      <div class="ranked">
        ${only && html`<p class="filter-note">Showing <strong>${onlyName}</strong> only · <button type="button" class="secondary small" onClick=${() => setOnly('')}>Show all</button></p>`}
        ${
          reach &&
          (shown.length === 0
            ? html`<p class="muted">${only ? `${onlyName} is not recommended today: it is not rising, or crm has no open customers there.` : 'No industry to recommend today.'}</p>`
            : html`<table class="reach stack">
              <thead><tr><th>#</th><th>industry</th><th class="num">change</th><th class="num">signaled stocks</th><th class="num">open customers</th><th class="num">in follow-up</th><th>why</th></tr></thead>
              <tbody>${shown.map(
                (r) => html`
                <tr data-rank=${r.rank} data-industry=${r.industry}>
                  <td data-label="rank"><strong>${r.rank}</strong></td>
                  <td data-label="industry"><strong>${r.name}</strong><div class="muted"><code>${r.industry}</code></div></td>
                  <td data-label="change" class=${r.avgChangePct >= 0 ? 'ok num' : 'error num'}>${pct(r.avgChangePct)}</td>
                  <td data-label="signaled stocks" class="num">${r.signaledStocks}</td>
                  <td data-label="open customers" class="num">${r.openCustomers}</td>
                  <td data-label="in follow-up" class="num">${r.inFollowUp}</td>
                  <td data-label="why" class="muted">${r.why}</td>
                </tr>`,
              )}</tbody>
            </table>`)
        }
      </div>
    </div>`;
}
