/**
 * @module pages/ops-common — small pieces the operations pages share: reading an answer's error,
 * time formatting, and the one way they show an error.
 */
import { html } from '../html.js';

/**
 * The error of an API answer (`{error:{code,message}}` or an `ok:false` body), or null.
 * @param {any} body
 * @returns {{code: string, message: string} | null}
 */
export const answerError = (body) => (body && body.error ? { code: body.error.code ?? 'ERROR', message: body.error.message ?? '' } : null);

/**
 * One error line: code first, then the hub's message.
 * @param {{ error: any }} props
 */
export function ErrorLine({ error }) {
  if (!error) return null;
  const code = error.code ?? 'ERROR';
  return html`<p class="error" data-error-code=${code}><code>${code}</code> ${error.message}</p>`;
}

/**
 * Local time of an ISO string or epoch milliseconds.
 * @param {string | number} t
 */
export function fmtTime(t) {
  const d = new Date(t);
  return Number.isNaN(d.getTime()) ? String(t) : d.toLocaleString(undefined, { hour12: false });
}
