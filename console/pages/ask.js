/** @module console/pages/ask — one cross-node question: the hub plans which tools to call, and the page shows the answer, each fact with its trace, and what was tried. */
import { useState } from 'preact/hooks';
import { ask as askHub, refused, toApiError } from '../api.js';
import { valueTo } from '../forms.js';
import { html } from '../html.js';
import { ErrorLine } from './common.js';

/** @typedef {import('../types').ApiError} ApiError */

const EXAMPLES = [
  'Which sectors moved today?',
  'Which industry should we contact today?',
  'How is the LLM gateway doing?',
];

/** Ask Agent page. */
export function Ask() {
  const [question, setQuestion] = useState('');
  const [busy, setBusy] = useState(false);
  const [answer, setAnswer] = useState(/** @type {import('../types').AskAnswer | null} */ (null));
  const [error, setError] = useState(/** @type {ApiError | null} */ (null));

  /** Asks `text` (the box's question, or a suggestion put in the box). @param {string} text */
  async function run(text) {
    const q = text.trim();
    if (!q) return;
    setQuestion(q);
    setBusy(true), setError(null), setAnswer(null);
    try {
      const r = await askHub(q);
      if (refused(r)) setError(r.error);
      else setAnswer(r);
    } catch (err) {
      setError(toApiError(err));
    } finally {
      setBusy(false);
    }
  }
  /** @param {import('../types').FormEvent} e */
  const ask = (e) => (e.preventDefault(), run(question));

  return html`
    <h2>Ask Agent <small>one question; the hub decides which nodes to query</small></h2>
    <form class="ask" onSubmit=${ask}>
      <label class="grow">Question <input type="text" name="question" placeholder="Ask the fleet…" value=${question} onInput=${valueTo(setQuestion)} /></label>
      <button type="submit" disabled=${busy || !question.trim()}>${busy ? 'Asking…' : 'Ask'}</button>
    </form>
    <p class="muted examples">Try: ${EXAMPLES.map((x) => html`<button type="button" class="suggestion" disabled=${busy} onClick=${() => run(x)}>${x}</button> `)}</p>
    ${busy && html`<p class="muted" role="status">Asking the fleet…</p>`}
    <${ErrorLine} error=${error} />
    ${answer && html`<${Answer} a=${answer} />`}`;
}

/** @param {{a: import('../types').AskAnswer}} props */
function Answer({ a }) {
  return html`
    <div class=${`card answer ${a.answered ? 'answered' : 'unanswered'}`} data-answered=${String(a.answered)}>
      <div class="muted">planned by ${a.plannedBy === 'model' ? 'model' : 'keywords'}${a.planNote ? ` (${a.planNote})` : ''}${a.answered ? '' : ' · nothing could answer'}</div>
      <p class=${a.answered ? 'answer-text' : 'answer-text warning-text'}>${a.answer}</p>
    </div>
    ${
      a.facts.length > 0 &&
      html`
      <h3>Facts <small class="muted">${a.facts.length}</small></h3>
      ${a.facts.map(
        (f) => html`
        <div class="card fact" data-node=${f.node} data-tool=${f.tool}>
          <div><strong>${f.node}</strong> / <code>${f.tool}</code>
            ${f.traceId != null && html` · <a class="trace" href=${`#/trace?id=${f.traceId}`}>trace #${f.traceId}</a>`}</div>
          <p>${f.summary}</p>
          <details><summary class="muted">result</summary><pre>${JSON.stringify(f.result, null, 2)}</pre></details>
        </div>`,
      )}`
    }
    <h3>Tried <small class="muted">${a.tried.length}</small></h3>
    ${
      a.tried.length
        ? html`<table class="tried stack">
          <thead><tr><th>node</th><th>tool</th><th>score</th><th>outcome</th><th>trace</th></tr></thead>
          <tbody>${a.tried.map(
            (t) => html`
            <tr data-outcome=${t.outcome}>
              <td data-label="node">${t.node}</td><td data-label="tool"><code>${t.tool}</code></td><td data-label="score">${t.score ?? '–'}</td>
              <td data-label="outcome" class=${t.outcome === 'ok' ? 'ok' : 'error'}>${t.outcome}${t.errorCode ? ` (${t.errorCode})` : ''}</td>
              <td data-label="trace">${t.traceId != null ? html`<a href=${`#/trace?id=${t.traceId}`}>#${t.traceId}</a>` : '–'}</td>
            </tr>`,
          )}</tbody>
        </table>`
        : html`<p class="muted">No tool was called.</p>`
    }`;
}
