/**
 * @module console/pages/history — the mesh's projects (list, create, delete; deletion is refused while
 * anyone is present, and the page shows the hub's code) and a project's durable message history,
 * paged by message reference; new messages arrive while it is open (`/v1/watch`).
 */
import { useEffect, useState } from 'preact/hooks';
import {
  createProject,
  deleteProject,
  history,
  listProjects,
  meshWatch,
  refused,
  toApiError,
} from '../api.js';
import { html } from '../html.js';
import { ErrorLine, LiveMark, fmtTime, useStream } from './common.js';

/** @typedef {import('../types').MeshMessage} MeshMessage */

const LIMIT = 20;
/** @param {MeshMessage['target']} t */
const target = (t) => (t.type === 'agent' ? `→ ${t.name}` : '→ everyone');
/** @param {MeshMessage['payload']} p */
const body = (p) =>
  p.encoding === 'identity' ? p.data : `(${p.encoding} payload, ${p.uncompressedBytes} bytes)`;

/** @param {{ project: string }} props */
function History({ project }) {
  const [messages, setMessages] = useState(/** @type {MeshMessage[] | null} */ (null));
  const [from, setFrom] = useState('');
  const [more, setMore] = useState(false);
  const [error, setError] = useState(/** @type {import('../types').ApiError | null} */ (null));

  /** @param {string | null} before a message reference; null for the newest page */
  const load = (before) => {
    const q = new URLSearchParams({ project, limit: String(LIMIT) });
    if (before) q.set('before', before);
    if (from) q.set('from', from);
    return history(q).then(
      (r) => {
        setError(null);
        setMore(r.messages.length === LIMIT);
        setMessages((ms) => (before ? [...r.messages, ...(ms ?? [])] : r.messages));
      },
      (e) => setError(toApiError(e)),
    );
  };
  useEffect(() => {
    setMessages(null);
    load(null);
  }, [project, from]);
  // New messages join the end of the list (the roster events of the same stream are not shown here).
  const live = useStream(
    () => meshWatch(project),
    (/** @type {import('../types').ProjectEvent} */ e) => {
      if (e.type !== 'message' || (from && e.message.from.name !== from)) return;
      const m = e.message;
      setMessages((ms) => (ms && !ms.some((x) => x.messageRef === m.messageRef) ? [...ms, m] : ms));
    },
    [project],
    // The hub could not send what was missed while the stream was down: the newest page again.
    () => load(null),
  );
  const oldest = messages?.[0];

  return html`
    <section class="card history" data-project=${project}>
      <h3>History of ${project} <small><${LiveMark} live=${live} /></small></h3>
      <form class="history-filter" onSubmit=${(/** @type {import('../types').FormEvent} */ e) => (e.preventDefault(), setFrom(new FormData(e.currentTarget).get('from')?.toString().trim() ?? ''))}>
        <label>only from <input type="text" name="from" placeholder="roster name" /></label>
        <button type="submit">Filter</button>
      </form>
      <${ErrorLine} error=${error} />
      ${!messages && !error ? html`<p class="muted">Loading history…</p>` : ''}
      ${more && oldest ? html`<p><button type="button" class="older" onClick=${() => load(oldest.messageRef)}>Older</button></p>` : ''}
      ${messages && !messages.length ? html`<p class="muted">No messages${from ? ` from ${from}` : ''}.</p>` : ''}
      ${
        messages?.length
          ? html`
        <table class="messages stack">
          <thead><tr><th>ref</th><th>time</th><th>from</th><th>to</th><th>message</th></tr></thead>
          <tbody aria-live="polite">${messages.map(
            (m) => html`
            <tr data-ref=${m.messageRef}>
              <td data-label="ref"><code>${m.messageRef}</code></td><td data-label="time" class="muted">${fmtTime(m.createdAt)}</td>
              <td data-label="from"><strong>${m.from.name}</strong></td><td data-label="to">${target(m.target)}${m.replyTo ? html` <span class="muted">re ${m.replyTo}</span>` : ''}</td>
              <td data-label="message" class="message-body">${body(m.payload)}${m.attachments.length ? html` <span class="muted">+${m.attachments.length} attachment(s)</span>` : ''}</td>
            </tr>`,
          )}
          </tbody>
        </table>`
          : ''
      }
    </section>`;
}

export function ProjectsHistory() {
  const [projects, setProjects] = useState(
    /** @type {import('../types').Project[] | null} */ (null),
  );
  const [open, setOpen] = useState('');
  const [error, setError] = useState(/** @type {import('../types').ApiError | null} */ (null));
  const [notice, setNotice] = useState('');

  const load = () =>
    listProjects().then(
      (r) => (refused(r) ? setError(r.error) : setProjects(r.result.projects)),
      (e) => setError(toApiError(e)),
    );
  useEffect(() => {
    load();
  }, []);

  /** @param {import('../types').FormEvent} e */
  const create = async (e) => {
    e.preventDefault();
    const form = e.currentTarget;
    const f = Object.fromEntries(
      [...new FormData(form)].map(([k, v]) => [k, String(v).trim()]).filter(([, v]) => v),
    );
    const r = await createProject(f);
    if (refused(r)) return setError(r.error);
    setError(null);
    form.reset();
    setNotice(`Created ${r.result.project.name}.`);
    load();
  };
  /** @param {string} name */
  const remove = async (name) => {
    const r = await deleteProject(name);
    if (refused(r)) {
      setError(r.error);
      setNotice('');
    } else {
      setError(null);
      setNotice(`Deleted ${name}.`);
      if (open === name) setOpen('');
    }
    load();
  };

  return html`
    <h2>Projects & History <small>${projects ? `${projects.length} projects` : ''}</small></h2>
    <form class="create-project" onSubmit=${create}>
      <label>name <input type="text" name="name" placeholder="a-z, 0-9, -" required /></label>
      <label>display name <input type="text" name="displayName" /></label>
      <label>description <input type="text" name="description" /></label>
      <button type="submit">Create project</button>
    </form>
    <${ErrorLine} error=${error} />
    ${notice ? html`<p class="ok notice">${notice}</p>` : ''}
    ${!projects && !error ? html`<p class="muted">Loading projects…</p>` : ''}
    ${projects && !projects.length ? html`<p class="muted">No projects yet.</p>` : ''}
    ${
      projects?.length
        ? html`
      <table class="projects stack">
        <thead><tr><th>name</th><th>display name</th><th>description</th><th>created</th><th></th></tr></thead>
        <tbody>${projects.map(
          (p) => html`
          <tr data-project=${p.name} class=${p.name === open ? 'selected' : ''}>
            <td data-label="name"><strong>${p.name}</strong></td><td data-label="display name">${p.displayName ?? ''}</td><td data-label="description" class="muted">${p.description ?? ''}</td>
            <td data-label="created" class="muted">${fmtTime(p.createdAt)}</td>
            <td class="actions">
              <button type="button" class="show-history" onClick=${() => setOpen(p.name)} aria-label=${`History of ${p.name}`}>History</button>
              <button type="button" class="delete secondary" onClick=${() => remove(p.name)} aria-label=${`Delete ${p.name}`}>Delete</button>
            </td>
          </tr>`,
        )}
        </tbody>
      </table>`
        : ''
    }
    ${open ? html`<${History} key=${open} project=${open} />` : ''}`;
}
