/**
 * @module pages/mesh — who is present in a project of the mesh: the roster (primary) and a simple
 * topology (an orbit up to six peers, a grid above; hidden on narrow layouts). Read-only: the
 * browser reads `/v1/presence` and never opens the mesh WebSocket.
 */
import { useEffect, useState } from 'preact/hooks';
import { listProjects, presence, refused, toApiError } from '../api.js';
import { LIVE_REFRESH_MS } from '../constants.js';
import { valueTo } from '../forms.js';
import { html } from '../html.js';
import { ErrorLine, fmtTime } from './ops-common.js';

const W = 420;
const H = 300;

/**
 * Where each peer sits: on a circle around the project for up to six, else in a grid.
 * @template T
 * @param {T[]} peers
 * @returns {{peer: T, x: number, y: number}[]}
 */
function layout(peers) {
  const n = peers.length;
  if (n <= 6) return peers.map((peer, i) => {
    const a = (2 * Math.PI * i) / n - Math.PI / 2;
    return { peer, x: W / 2 + 110 * Math.cos(a), y: H / 2 + 105 * Math.sin(a) };
  });
  const cols = Math.ceil(Math.sqrt(n));
  const rows = Math.ceil(n / cols);
  return peers.map((peer, i) => ({ peer, x: ((i % cols) + 0.5) * (W / cols), y: (Math.floor(i / cols) + 0.5) * (H / rows) }));
}

/** @param {{ project: string, peers: import('../types').PresentPeer[] }} props */
function Topology({ project, peers }) {
  const pos = layout(peers);
  const orbit = peers.length <= 6;
  return html`
    <svg class="topology" viewBox=${`0 0 ${W} ${H}`} role="img" aria-label=${`topology of ${project}`} data-layout=${orbit ? 'orbit' : 'grid'}>
      ${orbit ? pos.map((p) => html`<line x1=${W / 2} y1=${H / 2} x2=${p.x} y2=${p.y} class="link" />`) : ''}
      ${orbit ? html`<circle cx=${W / 2} cy=${H / 2} r="32" class="hub-node" /><text x=${W / 2} y=${H / 2 + 4} text-anchor="middle" class="hub-label">${project.length > 11 ? `${project.slice(0, 10)}…` : project}</text>` : ''}
      ${pos.map(({ peer, x, y }) => html`
        <g class="peer" data-peer=${peer.name}>
          <circle cx=${x} cy=${y} r="18" />
          <text x=${x} y=${orbit && y < H / 2 - 1 ? y - 24 : y + 32} text-anchor="middle">${peer.name}</text>
        </g>`)}
    </svg>`;
}

export function Mesh() {
  const [projects, setProjects] = useState(/** @type {import('../types').Project[] | null} */ (null));
  const [project, setProject] = useState('');
  const [roster, setRoster] = useState(/** @type {import('../types').Roster | null} */ (null));
  const [error, setError] = useState(/** @type {import('../types').ApiError | null} */ (null));

  const loadProjects = () => listProjects().then((r) => {
    if (refused(r)) return setError(r.error);
    setProjects(r.result.projects);
    setProject((p) => p || r.result.projects[0]?.name || '');
  }, (e) => setError(toApiError(e)));

  useEffect(() => { loadProjects(); }, []);

  // The roster of the chosen project, re-read while the page is open.
  useEffect(() => {
    if (!project) return;
    let alive = true;
    const load = () => presence(project).then(
      (r) => alive && (setRoster(r), setError(null)),
      (e) => alive && (setRoster(null), setError(toApiError(e))),
    );
    setRoster(null);
    load();
    const timer = setInterval(load, LIVE_REFRESH_MS);
    return () => ((alive = false), clearInterval(timer));
  }, [project]);

  const peers = roster?.project === project ? roster.peers : null;
  return html`
    <h2>Mesh <small>${peers ? `${peers.length} present in ${project}` : ''}</small></h2>
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
    ${peers ? html`
      <div class="mesh-view">
        <div class="roster-wrap">
          <table class="roster">
            <thead><tr><th>name</th><th>presence</th><th>joined</th></tr></thead>
            <tbody>
              ${peers.map((p) => html`<tr data-peer=${p.name}><td><strong>${p.name}</strong></td><td><code>${p.presenceId.slice(0, 8)}</code></td><td class="muted">${fmtTime(p.joinedAt)}</td></tr>`)}
              ${peers.length ? '' : html`<tr><td colspan="3" class="muted">Nobody is present in ${project}.</td></tr>`}
            </tbody>
          </table>
        </div>
        ${peers.length ? html`<${Topology} project=${project} peers=${peers} />` : ''}
      </div>` : ''}`;
}
