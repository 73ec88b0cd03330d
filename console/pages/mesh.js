/**
 * @module console/pages/mesh — who is present in a project of the mesh: the roster (primary) and a simple
 * topology (an orbit up to six peers, a grid above; hidden on narrow layouts) whose edges light up
 * while a message passes. The hub pushes the roster and each new message (`/v1/watch`); the browser
 * never joins the mesh itself.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { history, listProjects, meshWatch, refused, toApiError } from '../api.js';
import { MESH_PROJECT } from '../constants.js';
import { valueTo } from '../forms.js';
import { html } from '../html.js';
import { ErrorLine, LiveMark, fmtTime, useStream } from './common.js';

const W = 420;
const H = 300;
/** How long an edge stays lit after a message crossed it, in ms. */
const LIT_MS = 2500;

/**
 * Where each peer sits: on a circle around the project for up to six, else in a grid.
 * @template T
 * @param {T[]} peers
 * @returns {{peer: T, x: number, y: number}[]}
 */
function layout(peers) {
  const n = peers.length;
  if (n <= 6)
    return peers.map((peer, i) => {
      const a = (2 * Math.PI * i) / n - Math.PI / 2;
      return { peer, x: W / 2 + 110 * Math.cos(a), y: H / 2 + 105 * Math.sin(a) };
    });
  const cols = Math.ceil(Math.sqrt(n));
  const rows = Math.ceil(n / cols);
  return peers.map((peer, i) => ({
    peer,
    x: ((i % cols) + 0.5) * (W / cols),
    y: (Math.floor(i / cols) + 0.5) * (H / rows),
  }));
}

/** @param {{ project: string, peers: import('../types').PresentPeer[], lit: ReadonlySet<string> }} props */
function Topology({ project, peers, lit }) {
  const pos = layout(peers);
  const orbit = peers.length <= 6;
  return html`
    <svg class="topology" viewBox=${`0 0 ${W} ${H}`} role="img" aria-label=${`topology of ${project}: ${peers.map((p) => p.name).join(', ')}`} data-layout=${orbit ? 'orbit' : 'grid'}>
      ${orbit ? pos.map((p) => html`<line x1=${W / 2} y1=${H / 2} x2=${p.x} y2=${p.y} class=${`link${lit.has(p.peer.name) ? ' lit' : ''}`} data-peer=${p.peer.name} />`) : ''}
      ${orbit ? html`<circle cx=${W / 2} cy=${H / 2} r="32" class="hub-node" /><text x=${W / 2} y=${H / 2 + 4} text-anchor="middle" class="hub-label">${project.length > 11 ? `${project.slice(0, 10)}…` : project}</text>` : ''}
      ${pos.map(
        ({ peer, x, y }) => html`
        <g class=${`peer${lit.has(peer.name) ? ' lit' : ''}`} data-peer=${peer.name}>
          <circle cx=${x} cy=${y} r="18" />
          <text x=${x} y=${orbit && y < H / 2 - 1 ? y - 24 : y + 32} text-anchor="middle">${peer.name}</text>
        </g>`,
      )}
    </svg>`;
}

export function Mesh() {
  const [projects, setProjects] = useState(
    /** @type {import('../types').Project[] | null} */ (null),
  );
  const [project, setProject] = useState('');
  const [roster, setRoster] = useState(
    /** @type {{project: string, peers: import('../types').PresentPeer[]} | null} */ (null),
  );
  const [error, setError] = useState(/** @type {import('../types').ApiError | null} */ (null));
  const [lit, setLit] = useState(/** @type {ReadonlySet<string>} */ (new Set()));
  const [last, setLast] = useState(/** @type {import('../types').MeshMessage | null} */ (null));
  const timers = useRef(/** @type {Map<string, ReturnType<typeof setTimeout>>} */ (new Map()));

  const loadProjects = () =>
    listProjects().then(
      (r) => {
        if (refused(r)) return setError(r.error);
        setProjects(r.result.projects);
        // The project the header badge shows, when the hub has it; else the first one listed.
        const names = r.result.projects.map((x) => x.name);
        setProject((p) => p || (names.includes(MESH_PROJECT) ? MESH_PROJECT : names[0]) || '');
      },
      (e) => setError(toApiError(e)),
    );
  useEffect(() => {
    loadProjects();
    return () => timers.current.forEach((t) => clearTimeout(t));
  }, []);
  useEffect(() => setRoster(null), [project]);

  /** Lights the edges of `names` for a moment (one timer per edge, restarted by each message). @param {string[]} names */
  const light = (names) => {
    setLit((s) => new Set([...s, ...names]));
    for (const name of names) {
      clearTimeout(timers.current.get(name));
      timers.current.set(
        name,
        setTimeout(() => {
          timers.current.delete(name);
          setLit((s) => new Set([...s].filter((n) => n !== name)));
        }, LIT_MS),
      );
    }
  };

  const live = useStream(
    project ? () => meshWatch(project) : null,
    (/** @type {import('../types').ProjectEvent} */ e) => {
      if (e.type === 'roster') return setRoster({ project, peers: e.peers });
      const m = e.message;
      setLast(m);
      const others = (roster?.peers ?? []).map((p) => p.name).filter((n) => n !== m.from.name);
      light([m.from.name, ...(m.target.type === 'agent' ? [m.target.name] : others)]);
    },
    [project],
    // Messages were missed while the stream was down: the newest one is read again.
    () =>
      history(new URLSearchParams({ project, limit: '1' })).then(
        (page) => setLast(page.messages.at(-1) ?? null),
        () => {},
      ),
  );

  const peers = roster?.project === project ? roster.peers : null;
  return html`
    <h2>Mesh <small>${peers ? `${peers.length} present in ${project} · ` : ''}${project ? html`<${LiveMark} live=${live} />` : ''}</small></h2>
    <form class="picker" onSubmit=${(/** @type {Event} */ e) => e.preventDefault()}>
      <label>project <select name="project" value=${project} onChange=${valueTo(setProject)}>
        ${(projects ?? []).map((p) => html`<option value=${p.name}>${p.displayName ? `${p.displayName} (${p.name})` : p.name}</option>`)}
      </select></label>
      <button type="button" class="refresh" onClick=${loadProjects}>Reload projects</button>
    </form>
    <${ErrorLine} error=${error} />
    ${!projects && !error ? html`<p class="muted">Loading projects…</p>` : ''}
    ${projects && !projects.length ? html`<p class="muted">No projects yet: create one on Projects & History.</p>` : ''}
    ${project && !peers && !error ? html`<p class="muted">Loading the roster…</p>` : ''}
    ${
      peers
        ? html`
      <div class="mesh-view">
        <div class="roster-wrap">
          <table class="roster stack">
            <thead><tr><th>name</th><th>presence</th><th>joined</th></tr></thead>
            <tbody>
              ${peers.map((p) => html`<tr data-peer=${p.name} class=${lit.has(p.name) ? 'lit' : ''}><td data-label="name"><strong>${p.name}</strong></td><td data-label="presence"><code>${p.presenceId.slice(0, 8)}</code></td><td data-label="joined" class="muted">${fmtTime(p.joinedAt)}</td></tr>`)}
              ${peers.length ? '' : html`<tr><td colspan="3" class="muted">Nobody is present in ${project}.</td></tr>`}
            </tbody>
          </table>
          ${last ? html`<p class="muted last-exchange" aria-live="polite">Last message: <strong>${last.from.name}</strong> ${last.target.type === 'agent' ? `→ ${last.target.name}` : '→ everyone'} at ${fmtTime(last.createdAt)}</p>` : ''}
        </div>
        ${peers.length ? html`<${Topology} project=${project} peers=${peers} lit=${lit} />` : ''}
      </div>`
        : ''
    }`;
}
