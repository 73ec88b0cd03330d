/** @module pages/customer-ops — which industry's customers to contact today, and why (the hub's customer.reach: scanner's sector movement joined with crm's follow-ups). */
import { useEffect, useState } from 'preact/hooks';
import { hub, refused, toApiError } from '../api.js';
import { html } from '../html.js';

/** @param {number} n */
const pct = (n) => `${n > 0 ? '+' : ''}${n}%`;

/** Customer Ops page. */
export function CustomerOps() {
  const [reach, setReach] = useState(/** @type {import('../types').HubAnswer<import('../types').CustomerReach> | null} */ (null));
  const [error, setError] = useState(/** @type {import('../types').ApiError | null} */ (null));
  const [busy, setBusy] = useState(false);

  async function load() {
    setBusy(true), setError(null);
    try {
      const r = await hub('customer.reach');
      if (refused(r)) setError(r.error);
      else setReach(r);
    } catch (err) {
      setError(toApiError(err));
    } finally {
      setBusy(false);
    }
  }
  useEffect(() => void load(), []);

  const recs = reach?.result?.recommendations ?? [];
  return html`
    <h2>Customer Ops <small>${reach ? `as of ${reach.result.asOf}` : 'which industry to contact today'}</small></h2>
    <div class="toolbar">
      <button type="button" class="refresh" onClick=${load} disabled=${busy}>${busy ? 'Refreshing…' : 'Refresh'}</button>
      ${reach?.summary && html`<span class="summary">${reach.summary}</span>`}
    </div>
    ${error && html`<p class="error" data-error=${error.code}><strong>${error.code}</strong>: ${error.message}</p>`}
    ${!reach && !error && html`<p class="muted">Loading recommendations…</p>`}
    ${reach && (recs.length === 0
      ? html`<p class="muted">No industry to recommend today.</p>`
      : html`<table class="reach">
          <thead><tr><th>#</th><th>industry</th><th class="num">change</th><th class="num">signaled stocks</th><th class="num">open customers</th><th class="num">in follow-up</th><th>why</th></tr></thead>
          <tbody>${recs.map((r) => html`
            <tr data-rank=${r.rank} data-industry=${r.industry}>
              <td><strong>${r.rank}</strong></td>
              <td><strong>${r.name}</strong><div class="muted"><code>${r.industry}</code></div></td>
              <td class=${r.avgChangePct >= 0 ? 'ok num' : 'error num'}>${pct(r.avgChangePct)}</td>
              <td class="num">${r.signaledStocks}</td>
              <td class="num">${r.openCustomers}</td>
              <td class="num">${r.inFollowUp}</td>
              <td class="muted">${r.why}</td>
            </tr>`)}</tbody>
        </table>`)}`;
}
