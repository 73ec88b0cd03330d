/**
 * @module pages/ops-common — small pieces the operations pages share: time formatting and the one
 * way they show an error.
 */
import { html } from '../html.js';

/**
 * One error line: code first, then the hub's message.
 * @param {{ error: import('../types').ApiError | null }} props
 */
export function ErrorLine({ error }) {
  if (!error) return null;
  return html`<p class="error" data-error-code=${error.code}><code>${error.code}</code> ${error.message}</p>`;
}

/**
 * Local time of an ISO string or epoch milliseconds.
 * @param {string | number} t
 */
export function fmtTime(t) {
  const d = new Date(t);
  return Number.isNaN(d.getTime()) ? String(t) : d.toLocaleString(undefined, { hour12: false });
}
