/**
 * @module console/mesh-panel — the mesh in the console's header on every page: a badge with the state of
 * the console's live view of the project and how many are present, and a quick panel (Escape or a
 * click outside closes it) with the connection's identity and a send form (console/mesh-send.js),
 * the roster and the last messages. Direct messages arrive redacted unless the signed-in name is
 * their sender or recipient (the hub decides: docs/security.md). The browser never joins the mesh:
 * the hub holds a presence for the signed-in visitor and sends through it.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { history, listProjects, meshWatch } from './api.js';
import { html } from './html.js';
import { MeshSend } from './mesh-send.js';
import { fmtTime, useStream } from './pages/common.js';

/** Messages the panel keeps. */
const LAST = 8;

/** @typedef {import('./types').MeshMessage & { redacted?: boolean }} Shown */

/** @param {{ project: string }} props */
export function MeshBadge({ project }) {
  const [peers, setPeers] = useState(/** @type {import('./types').PresentPeer[] | null} */ (null));
  const [messages, setMessages] = useState(/** @type {Shown[]} */ ([]));
  const [open, setOpen] = useState(false);
  const box = useRef(/** @type {HTMLDivElement | null} */ (null));
  // The project is watched once it is known to exist (a hub may have none yet).
  const [exists, setExists] = useState(/** @type {boolean | null} */ (null));
  useEffect(() => {
    listProjects().then(
      (r) => setExists('result' in r && r.result.projects.some((p) => p.name === project)),
      () => setExists(false),
    );
  }, [project]);
  const live = useStream(
    exists ? () => meshWatch(project) : null,
    (/** @type {import('./types').ProjectEvent} */ e) => {
      if (e.type === 'roster') setPeers(e.peers);
      else setMessages((m) => [...m, e.message].slice(-LAST));
    },
    [project, exists],
    // Messages were missed while the stream was down: the newest ones are read again.
    () => recent(true),
  );
  /** The newest messages; `replace`: over what is shown (else only when nothing is). @param {boolean} replace */
  const recent = (replace) =>
    history(new URLSearchParams({ project, limit: String(LAST) })).then(
      (page) => setMessages((m) => (m.length && !replace ? m : page.messages)),
      () => {},
    );
  useEffect(() => {
    if (exists) recent(false);
  }, [project, exists]);
  useEffect(() => {
    if (!open) return;
    const onKey = (/** @type {KeyboardEvent} */ e) => e.key === 'Escape' && setOpen(false);
    const onClick = (/** @type {MouseEvent} */ e) =>
      box.current && !box.current.contains(/** @type {Node} */ (e.target)) && setOpen(false);
    addEventListener('keydown', onKey);
    addEventListener('mousedown', onClick);
    return () => (removeEventListener('keydown', onKey), removeEventListener('mousedown', onClick));
  }, [open]);

  const count = peers?.length ?? 0;
  const state = live ? 'live' : exists === false ? 'no-project' : 'offline';
  return html`
    <div class="mesh-quick" ref=${box}>
      <button type="button" class=${`mesh-badge secondary ${state}`} data-state=${state} aria-expanded=${open ? 'true' : 'false'} aria-controls="mesh-panel" onClick=${() => setOpen(!open)}>
        <span aria-hidden="true">${live ? '●' : '○'}</span> Mesh ${project} · ${exists === false ? 'no such project' : `${count} present`}
      </button>
      ${
        open
          ? html`<div id="mesh-panel" class="mesh-panel card" role="dialog" aria-label="Mesh">
        <${MeshSend} project=${project} live=${live} peers=${(peers ?? []).map((p) => p.name)} />
        <h3>Present (${count})</h3>
        <ul class="mesh-peers">${(peers ?? []).map((p) => html`<li>${p.name}</li>`)}</ul>
        ${peers && !count ? html`<p class="muted">nobody is present</p>` : ''}
        <h3>Last messages</h3>
        <ol class="mesh-last">${messages.map(
          (m) => html`<li class=${m.redacted ? 'redacted muted' : ''} data-ref=${m.messageRef}>
            <span class="muted">${fmtTime(m.createdAt)}</span> <b>${m.from.name}</b> → ${m.target.type === 'agent' ? m.target.name : 'everyone'}:${' '}${m.payload.encoding === 'identity' ? m.payload.data : `(${m.payload.uncompressedBytes} bytes)`}
          </li>`,
        )}</ol>
        ${messages.length ? '' : html`<p class="muted">no messages yet</p>`}
        <p><a href="#/history" onClick=${() => setOpen(false)}>Projects and History</a> · <a href="#/mesh" onClick=${() => setOpen(false)}>Mesh</a></p>
      </div>`
          : ''
      }
    </div>`;
}
