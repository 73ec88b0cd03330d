/**
 * @module console/pages/fleet — every fleet node: kind, online state, latency, agent-backed (from its
 * card's extension), skills, warnings, and over the last minutes a latency sparkline and an
 * up/down strip. The hub pushes a new reading every few seconds (`/api/fleet/stream`).
 */
import { useState } from 'preact/hooks';
import { fleetStream } from '../api.js';
import { Sparkline, UpDownStrip } from '../charts.js';
import { html } from '../html.js';
import { LiveMark, fmtTime, useStream } from './common.js';

/** Readings kept for the pictures (the hub sends its own history first). */
const KEEP = 60;

export function Fleet() {
  const [snap, setSnap] = useState(/** @type {import('../types').FleetSnapshot | null} */ (null));
  const [samples, setSamples] = useState(/** @type {import('../types').FleetSample[]} */ ([]));
  const live = useStream(
    fleetStream,
    (/** @type {import('../types').FleetFrame} */ f) => {
      setSnap(f.snapshot);
      setSamples((s) =>
        [...s.filter((x) => !f.samples.some((y) => y.at === x.at)), ...f.samples].slice(-KEEP),
      );
    },
    [],
  );

  if (!snap)
    return html`<h2>Fleet <small><${LiveMark} live=${live} /></small></h2><p class="muted">Loading the fleet…</p>`;
  /** @param {string} name */
  const history = (name) =>
    samples.map((s) => s.nodes.find((n) => n.name === name)).filter((n) => n !== undefined);
  const first = samples[0];
  return html`
    <h2>Fleet <small><span class="count">${snap.online} of ${snap.nodes.length} online</span> · hub ${snap.hub} · <${LiveMark} live=${live} /></small></h2>
    <p class="muted small">Checked ${fmtTime(snap.checkedAt)}${first ? ` · pictures since ${fmtTime(first.at)} (${samples.length} readings)` : ''}</p>
    ${snap.fleetFileProblem ? html`<p class="warning" data-fleet-file-problem>The fleet file changed but cannot be read, so this is the last good view: ${snap.fleetFileProblem}</p>` : ''}
    <table class="fleet stack">
      <thead><tr><th>node</th><th>kind</th><th>state</th><th>latency</th><th>last minutes</th><th>model</th><th>skills</th><th>role</th></tr></thead>
      <tbody>
        ${snap.nodes.map((n) => {
          const h = history(n.name);
          return html`
          <tr data-node=${n.name} class=${n.online ? 'online' : 'offline'}>
            <td data-label="node"><strong>${n.name}</strong></td>
            <td data-label="kind">${n.kind === 'peer' ? 'peer only' : n.kind}${n.cardSignature ? html` <span class=${n.cardSignature.state === 'failed' ? 'error' : 'muted'} data-card-signature=${n.cardSignature.state}>${n.cardSignature.state === 'verified' ? 'signed' : n.cardSignature.state === 'failed' ? 'signature fails' : ''}</span>` : ''}</td>
            <td data-label="state" class="state">${n.online ? html`<span class="ok">online</span>` : html`<span class="error">offline${n.error ? ` (${n.error.code})` : ''}</span>`}</td>
            <td data-label="latency">${n.latencyMs === null ? '–' : `${n.latencyMs} ms`}</td>
            <td data-label="last minutes" class="pictures">
              <${Sparkline} values=${h.map((x) => (x.online ? x.latencyMs : null))} label=${`${n.name} latency`} />
              <${UpDownStrip} states=${h.map((x) => x.online)} label=${`${n.name} up or down`} />
            </td>
            <td data-label="model">${n.agentBacked === null ? '–' : n.agentBacked ? 'yes' : 'no'}</td>
            <td data-label="skills">${n.skills.length}</td>
            <td data-label="role" class="muted">${n.role}${n.warnings.length ? html`<div class="warning">${n.warnings.join(' ')}</div>` : ''}</td>
          </tr>`;
        })}
      </tbody>
    </table>`;
}
