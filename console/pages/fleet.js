/** @module pages/fleet — every fleet node: kind, online state, latency, agent-backed (from its card's extension), skills, warnings. */
import { useEffect, useState } from 'preact/hooks';
import { fleet, toApiError } from '../api.js';
import { FLEET_REFRESH_MS } from '../constants.js';
import { html } from '../html.js';

export function Fleet() {
  const [snap, setSnap] = useState(/** @type {import('../types').FleetSnapshot | null} */ (null));
  const [error, setError] = useState('');
  useEffect(() => {
    let alive = true;
    const load = () => fleet().then((s) => alive && (setSnap(s), setError('')), (e) => alive && setError(toApiError(e).message));
    load();
    const timer = setInterval(load, FLEET_REFRESH_MS);
    return () => ((alive = false), clearInterval(timer));
  }, []);
  if (error) return html`<p class="error">${error}</p>`;
  if (!snap) return html`<p class="muted">Loading the fleet…</p>`;
  return html`
    <h2>Fleet <small>${snap.online} of ${snap.nodes.length} online · hub ${snap.hub}</small></h2>
    <table class="fleet">
      <thead><tr><th>node</th><th>kind</th><th>state</th><th>latency</th><th>model</th><th>skills</th><th>role</th></tr></thead>
      <tbody>
        ${snap.nodes.map((n) => html`
          <tr data-node=${n.name} class=${n.online ? 'online' : 'offline'}>
            <td><strong>${n.name}</strong></td>
            <td>${n.kind === 'peer' ? 'peer only' : n.kind}</td>
            <td>${n.online ? 'online' : `offline${n.error ? ` (${n.error.code})` : ''}`}</td>
            <td>${n.latencyMs === null ? '–' : `${n.latencyMs} ms`}</td>
            <td>${n.agentBacked === null ? '–' : n.agentBacked ? 'yes' : 'no'}</td>
            <td>${n.skills.length}</td>
            <td class="muted">${n.role}${n.warnings.length ? html`<div class="warning">${n.warnings.join(' ')}</div>` : ''}</td>
          </tr>`)}
      </tbody>
    </table>`;
}
