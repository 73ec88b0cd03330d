/**
 * @module console/pages/negotiation — two agents with their own constraints (scanner advises, crm speaks
 * for the customer) negotiate over A2A: the rounds drawn as a sequence diagram between them, each
 * proposal's veto or acceptance with its reason, and the past negotiations. A run "with models"
 * lets each agent's model take its turns; the page offers it only when the hub has a model
 * configured, and says why not otherwise.
 */
import { useEffect, useState } from 'preact/hooks';
import { hub, hubModel, negotiation, negotiations, refused, toApiError } from '../api.js';
import { SequenceDiagram } from '../charts.js';
import { valueTo } from '../forms.js';
import { html } from '../html.js';
import { ErrorLine, fmtTime } from './common.js';

/** Customers whose crm profile makes a negotiation interesting; any other id can be typed. */
const KNOWN = [
  { id: 'c-012', note: 'reaches a deal' },
  { id: 'c-014', note: 'no deal' },
];

/** Why "with models" is off when the hub has no model (or its configuration could not be read). */
const NO_MODEL =
  "No model is configured for the hub. Set MODEL_BASE_URL (or models in lume.config.yaml) and restart the fleet; then the agents' models can take their turns.";

/**
 * A2A Negotiation page. "with models" is aria-disabled rather than disabled without a hub model, so
 * it stays in the Tab order and a screen reader reads why.
 */
export function Negotiation() {
  const [customer, setCustomer] = useState('c-012');
  const [busy, setBusy] = useState(false);
  const [neg, setNeg] = useState(/** @type {import('../types').Negotiation | null} */ (null));
  const [error, setError] = useState(/** @type {import('../types').ApiError | null} */ (null));
  const [past, setPast] = useState(
    /** @type {import('../types').NegotiationSummary[] | null} */ (null),
  );
  const [pastError, setPastError] = useState('');
  const [withModels, setWithModels] = useState(false);
  /** The hub's model: configured, answering; null while asking. */
  const [model, setModel] = useState(/** @type {import('../types').HubModel | null} */ (null));

  const loadPast = () =>
    negotiations().then(
      (r) => (setPast(r.negotiations), setPastError('')),
      (e) => setPastError(toApiError(e).message),
    );
  useEffect(() => void loadPast(), []);
  useEffect(
    () => void hubModel().then(setModel, () => setModel({ configured: false, answering: false })),
    [],
  );
  const modelsOff = model?.configured !== true;

  /** @param {() => Promise<void>} fn */
  async function run(fn) {
    setBusy(true), setError(null);
    try {
      await fn();
    } catch (err) {
      setError(toApiError(err));
    } finally {
      setBusy(false);
    }
  }
  /** @param {import('../types').FormEvent} e */
  const start = (e) => (
    e.preventDefault(),
    run(async () => {
      setNeg(null);
      const r = await hub('negotiation.start', {
        customer: customer.trim(),
        ...(withModels && !modelsOff ? { model: true } : {}),
      });
      if (refused(r)) setError(r.error);
      else setNeg(r.result);
      await loadPast();
    })
  );
  /** @param {string} id */
  const open = (id) => run(async () => setNeg(await negotiation(id)));

  return html`
    <h2>A2A Negotiation <small>scanner advises · crm speaks for the customer</small></h2>
    <form class="negotiate" onSubmit=${start}>
      <label>example <select name="known" value=${KNOWN.some((k) => k.id === customer) ? customer : ''} onChange=${valueTo(setCustomer)}>
        ${KNOWN.map((k) => html`<option value=${k.id}>${k.id} (${k.note})</option>`)}
        <option value="">other…</option>
      </select></label>
      <label>customer <input type="text" name="customer" placeholder="customer id, e.g. c-012" value=${customer} onInput=${valueTo(setCustomer)} /></label>
      <label class="models"><input type="checkbox" name="model" checked=${withModels && !modelsOff}
        aria-disabled=${modelsOff ? 'true' : undefined} aria-describedby=${model && !model.configured ? 'models-why' : undefined}
        onClick=${(/** @type {Event} */ e) => modelsOff && e.preventDefault()}
        onChange=${(/** @type {import('../types').FieldEvent} */ e) => setWithModels(/** @type {HTMLInputElement} */ (e.currentTarget).checked)} /> with models</label>
      <button type="submit" disabled=${busy || !customer.trim()}>${busy ? 'Negotiating…' : 'Start'}</button>
    </form>
    ${model && !model.configured && html`<p id="models-why" class="muted models-why">${NO_MODEL}</p>`}
    ${model?.configured && !model.answering && withModels && html`<p class="muted models-why">The hub's model does not answer right now: a turn a model cannot take falls back to the agent's rules, and the record says so.</p>`}
    <${ErrorLine} error=${error} />
    ${busy && html`<p class="muted">Waiting for the agents…</p>`}
    ${neg && html`<${Record} n=${neg} />`}
    <h3>Past negotiations</h3>
    ${pastError && html`<p class="error">${pastError}</p>`}
    ${
      past === null && !pastError
        ? html`<p class="muted">Loading…</p>`
        : past?.length === 0
          ? html`<p class="muted">None yet.</p>`
          : past &&
            html`
      <table class="past stack">
        <thead><tr><th>started</th><th>customer</th><th>outcome</th><th>rounds</th><th>vetoes</th></tr></thead>
        <tbody>${past.map(
          (p) => html`
          <tr data-id=${p.id} data-customer=${p.customer} class=${neg?.id === p.id ? 'selected' : ''}>
            <td data-label="started"><a href="#/negotiation" onClick=${(/** @type {Event} */ e) => (e.preventDefault(), open(p.id))}>${fmtTime(p.startedAt)}</a></td>
            <td data-label="customer">${p.customer} <span class="muted">${p.customerName}</span></td>
            <td data-label="outcome" class=${p.outcome === 'deal' ? 'ok' : 'error'}>${p.outcome === 'deal' ? `deal${p.deal ? `: ${p.deal.name} (${p.deal.code})` : ''}` : 'no deal'}</td>
            <td data-label="rounds">${p.rounds}</td>
            <td data-label="vetoes">${p.vetoCodes.map((c) => html`<code class="veto">${c}</code> `)}</td>
          </tr>`,
        )}</tbody>
      </table>`
    }`;
}

/** @param {{p: import('../types').Proposal}} props */
const Stock = ({ p }) =>
  html`<strong>${p.name}</strong> <code>${p.code}</code> · ${p.sector} · ${p.changePct > 0 ? '+' : ''}${p.changePct}%${p.signals.length ? ` · ${p.signals.join(', ')}` : ' · no signal'}`;

/**
 * One round as the record shows it: a veto with its code, or the accepted proposal.
 * @typedef {(import('../types').NegotiationVeto & {kind: 'veto'}) | (NonNullable<import('../types').Negotiation['deal']> & {kind: 'accepted'})} Round
 */

/** @param {{n: import('../types').Negotiation}} props */
function Record({ n }) {
  /** @type {Round[]} */
  const rounds = [
    ...n.vetoes.map((v) => ({ ...v, kind: /** @type {const} */ ('veto') })),
    ...(n.deal ? [{ ...n.deal, kind: /** @type {const} */ ('accepted') }] : []),
  ];
  rounds.sort((a, b) => a.round - b.round);
  /** @type {{from: 'left' | 'right', label: string, kind: string, round: number}[]} */
  const steps = rounds.flatMap((r) => [
    {
      from: /** @type {const} */ ('left'),
      label: `${r.round}. proposes ${r.proposal.name} (${r.proposal.code}) ${r.proposal.changePct > 0 ? '+' : ''}${r.proposal.changePct}%`,
      kind: 'proposal',
      round: r.round,
    },
    r.kind === 'veto'
      ? {
          from: /** @type {const} */ ('right'),
          label: `vetoes: ${r.code}`,
          kind: 'veto',
          round: r.round,
        }
      : {
          from: /** @type {const} */ ('right'),
          label: 'accepts',
          kind: 'accepted',
          round: r.round,
        },
  ]);
  return html`
    <div class=${`card negotiation ${n.outcome}`} data-outcome=${n.outcome} data-id=${n.id}>
      <h3 class="outcome"><span class=${n.outcome === 'deal' ? 'ok' : 'error'}>${n.outcome === 'deal' ? 'Deal' : 'No deal'}</span>
        <small class="muted">${n.customerName} (${n.customer}) · ${n.rounds} round(s) · ended ${n.ended} · ${n.agents === 'model' ? 'with models' : 'by rules'}</small></h3>
      <p>${n.summary}</p>
      <p class="muted">contextId <code class="context-id">${n.contextId}</code> · ${n.advisor} ↔ ${n.customerAgent} · ${n.id}</p>
      <${ErrorLine} error=${n.error ?? null} />
      ${steps.length > 0 && html`<${SequenceDiagram} left=${`${n.advisor} (advisor)`} right=${`${n.customerAgent} (customer)`} steps=${steps} />`}
      <ol class="rounds">${rounds.map(
        (r) => html`
        <li class=${`round ${r.kind}`} data-round=${r.round}>
          <div>Round ${r.round}: <${Stock} p=${r.proposal} /></div>
          ${
            r.kind === 'veto'
              ? html`<div class="veto-line"><span class="error">vetoed</span> <code class="veto">${r.code}</code>${r.detail ? ` (${r.detail})` : ''} — ${r.reason}</div>`
              : html`<div class="ok">accepted — ${r.reason}</div>`
          }
        </li>`,
      )}</ol>
      <details><summary class="muted">transcript (${n.transcript.length} A2A messages)</summary>
        <table class="transcript stack"><thead><tr><th>round</th><th>agent</th><th>skill</th><th>ok</th><th>trace</th></tr></thead>
          <tbody>${n.transcript.map(
            (
              t,
            ) => html`<tr><td data-label="round">${t.round}</td><td data-label="agent">${t.agent} (${t.node})</td><td data-label="skill"><code>${t.skill}</code></td>
            <td data-label="ok" class=${t.ok ? 'ok' : 'error'}>${t.ok ? 'ok' : (t.error?.code ?? 'failed')}</td>
            <td data-label="trace">${t.traceId != null ? html`<a href=${`#/trace?id=${t.traceId}`}>#${t.traceId}</a>` : '–'}</td></tr>`,
          )}</tbody></table>
      </details>
    </div>`;
}
