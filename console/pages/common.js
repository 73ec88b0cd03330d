/**
 * @module console/pages/common — small pieces every page shares: the one way a page shows an error, time
 * in one 24-hour form, and how a page listens to a stream the hub pushes.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { html } from '../html.js';

/**
 * One error line: the code, then the hub's message (without the code again when the message
 * already starts with it).
 * @param {{ error: import('../types').ApiError | null }} props
 */
export function ErrorLine({ error }) {
  if (!error) return null;
  const prefix = `${error.code}: `;
  const message = error.message.startsWith(prefix)
    ? error.message.slice(prefix.length)
    : error.message;
  return html`<p class="error" role="alert" data-error=${error.code} data-error-code=${error.code}><code>${error.code}</code> ${message}</p>`;
}

/** @param {number} n */
const two = (n) => String(n).padStart(2, '0');

/**
 * Local time of an ISO string or epoch milliseconds, `YYYY-MM-DD HH:MM:SS` (24-hour, whatever the
 * browser's locale).
 * @param {string | number} t
 */
export function fmtTime(t) {
  const d = new Date(t);
  if (Number.isNaN(d.getTime())) return String(t);
  return `${d.getFullYear()}-${two(d.getMonth() + 1)}-${two(d.getDate())} ${two(d.getHours())}:${two(d.getMinutes())}:${two(d.getSeconds())}`;
}

/**
 * Listens to a stream the hub pushes while the component is shown: `open` makes the EventSource
 * (again when `deps` change), `onItem` gets each message's JSON. Answers whether it is connected;
 * the browser reconnects on its own after a drop, naming the last event it had. When the hub can
 * no longer send what came after that one it says `event: reset` (`STREAM_RESET`) and goes on
 * live from there: `onReset` then reads the page's data afresh, or the missed items stay missing.
 * @template T
 * @param {(() => EventSource) | null} open
 * @param {(item: T) => void} onItem
 * @param {unknown[]} deps
 * @param {() => void} [onReset]
 */
export function useStream(open, onItem, deps, onReset) {
  const [live, setLive] = useState(false);
  // The latest handlers, so a message always meets the page's current state.
  const handler = useRef(onItem);
  handler.current = onItem;
  const reset = useRef(onReset);
  reset.current = onReset;
  useEffect(() => {
    if (!open) return;
    const es = open();
    es.onopen = () => setLive(true);
    es.onerror = () => setLive(false);
    es.onmessage = (ev) => handler.current(JSON.parse(ev.data));
    es.addEventListener('reset', () => reset.current?.());
    return () => (es.close(), setLive(false));
  }, deps);
  return live;
}

/**
 * The "live" mark of a page's heading.
 * @param {{ live: boolean }} props
 */
export const LiveMark = ({ live }) =>
  live
    ? html`<span class="ok live" data-live="on">● live</span>`
    : html`<span class="muted live" data-live="off">○ connecting…</span>`;
