/**
 * @module console/charts — the pictures the pages draw, as plain SVG from the data they are given (no
 * charting package): bars, a sparkline, an up/down strip, a waterfall of calls, calls per minute
 * with the error rate, and a sequence diagram between two agents. Every mark carries the value it
 * was drawn from (`data-value`, `data-*`), so what is drawn can be checked against what is shown.
 */
import { html } from './html.js';

/** @typedef {import('./types').TraceRecord} TraceRecord */

/** Enter or Space on a focusable mark acts like a click. @param {() => void} act */
const onKeys = (act) => (/** @type {KeyboardEvent} */ e) => {
  if (e.key === 'Enter' || e.key === ' ') e.preventDefault(), act();
};

/** @param {number} n */
const signed = (n) => `${n > 0 ? '+' : ''}${n}%`;

/**
 * Horizontal bars diverging from zero, one per item, in the order given. A bar is a button:
 * clicking it (or Enter/Space on it) selects its key, clicking the selected one clears it.
 * @param {{ items: {key: string, label: string, value: number, marked?: boolean}[], selected: string, onSelect: (key: string) => void, title: string }} props
 */
export function BarChart({ items, selected, onSelect, title }) {
  const W = 360,
    LABEL = 128,
    ROW = 24,
    PAD = 6;
  const max = Math.max(1e-9, ...items.map((i) => Math.abs(i.value)));
  const hasNegative = items.some((i) => i.value < 0);
  // Zero sits mid-way when some values fall, else at the left of the bar area.
  const span = W - LABEL - 44;
  const zero = LABEL + (hasNegative ? span / 2 : 0);
  const scale = (hasNegative ? span / 2 : span) / max;
  const H = items.length * ROW + PAD * 2;
  return html`
    <svg class="chart bars" viewBox=${`0 0 ${W} ${H}`} style=${`min-width: ${W}px`} role="group" aria-label=${title}>
      <line x1=${zero} x2=${zero} y1=${PAD / 2} y2=${H - PAD / 2} class="axis" />
      ${items.map((item, i) => {
        const w = Math.abs(item.value) * scale;
        const y = PAD + i * ROW;
        const x = item.value >= 0 ? zero : zero - w;
        const on = item.key === selected;
        return html`
          <g class=${`bar${item.value < 0 ? ' down' : ' up'}${item.marked ? ' marked' : ''}${on ? ' selected' : ''}`} data-key=${item.key} data-value=${item.value}
            role="button" tabindex="0" aria-pressed=${on ? 'true' : 'false'} aria-label=${`${item.label} ${signed(item.value)}`}
            onClick=${() => onSelect(on ? '' : item.key)} onKeyDown=${onKeys(() => onSelect(on ? '' : item.key))}>
            <rect class="hit" x="0" y=${y} width=${W} height=${ROW} />
            <text x=${LABEL - 6} y=${y + ROW / 2 + 4} text-anchor="end" class="label">${item.label.length > 18 ? `${item.label.slice(0, 17)}…` : item.label}</text>
            <rect class="value" x=${x} y=${y + 4} width=${Math.max(w, 1)} height=${ROW - 8} rx="2" />
            <text x=${item.value >= 0 ? x + w + 4 : x - 4} y=${y + ROW / 2 + 4} text-anchor=${item.value >= 0 ? 'start' : 'end'} class="figure">${signed(item.value)}</text>
          </g>`;
      })}
    </svg>`;
}

/**
 * A latency line over the last readings; a gap where the node did not answer.
 * @param {{ values: (number | null)[], label: string }} props
 */
export function Sparkline({ values, label }) {
  const W = 120,
    H = 24;
  const known = /** @type {number[]} */ (values.filter((v) => v !== null));
  const max = Math.max(1, ...known);
  const step = values.length > 1 ? W / (values.length - 1) : 0;
  /** @type {string[][]} */
  const runs = [[]];
  values.forEach((v, i) => {
    if (v === null) runs.push([]);
    else
      runs[runs.length - 1]?.push(
        `${(i * step).toFixed(1)},${(H - 2 - (v / max) * (H - 4)).toFixed(1)}`,
      );
  });
  const last = known[known.length - 1];
  return html`
    <svg class="chart spark" viewBox=${`0 0 ${W} ${H}`} width=${W} height=${H} role="img" data-points=${known.length} data-max=${max}
      aria-label=${`${label}: ${known.length ? `latest ${last} ms, highest ${max} ms over ${values.length} readings` : 'no readings yet'}`}>
      ${runs
        .filter((r) => r.length)
        .map((r) =>
          r.length === 1
            ? html`<circle cx=${r[0]?.split(',')[0]} cy=${r[0]?.split(',')[1]} r="1.5" class="dot" />`
            : html`<polyline points=${r.join(' ')} />`,
        )}
    </svg>`;
}

/**
 * One cell per reading: up (online) or down.
 * @param {{ states: boolean[], label: string }} props
 */
export function UpDownStrip({ states, label }) {
  const W = 120,
    H = 8;
  const w = states.length ? W / states.length : W;
  const down = states.filter((s) => !s).length;
  return html`
    <svg class="chart strip" viewBox=${`0 0 ${W} ${H}`} width=${W} height=${H} role="img" aria-label=${`${label}: ${down ? `down in ${down} of ${states.length} readings` : `up in all ${states.length} readings`}`}>
      ${states.map((up, i) => html`<rect x=${i * w} y="0" width=${Math.max(w - 0.5, 0.5)} height=${H} class=${up ? 'up' : 'down'} data-up=${String(up)} />`)}
    </svg>`;
}

/**
 * The calls of one trace as a tree in reading order: each call followed by the calls it made
 * (those whose parent span is its span), siblings by start. A call whose parent is not among them
 * (the question itself, or a caller outside the trace) is a root.
 * @param {TraceRecord[]} records
 * @returns {{ r: TraceRecord, depth: number }[]}
 */
export function callTree(records) {
  const byStart = [...records].sort((a, b) => Date.parse(a.ts) - Date.parse(b.ts) || a.id - b.id);
  const spans = new Set(byStart.map((r) => r.spanId).filter(Boolean));
  /** @type {Map<string, TraceRecord[]>} */
  const children = new Map();
  for (const r of byStart) {
    if (!r.parentSpanId || !spans.has(r.parentSpanId) || r.parentSpanId === r.spanId) continue;
    const list = children.get(r.parentSpanId);
    if (list) list.push(r);
    else children.set(r.parentSpanId, [r]);
  }
  /** @type {{ r: TraceRecord, depth: number }[]} */
  const out = [];
  const seen = new Set();
  /** @param {TraceRecord} r @param {number} depth */
  const visit = (r, depth) => {
    if (seen.has(r.id)) return;
    seen.add(r.id);
    out.push({ r, depth });
    for (const c of (r.spanId && children.get(r.spanId)) || []) visit(c, depth + 1);
  };
  for (const r of byStart)
    if (!r.parentSpanId || !spans.has(r.parentSpanId) || r.parentSpanId === r.spanId) visit(r, 0);
  // Links that loop back on themselves reach no root: listed flat rather than lost.
  for (const r of byStart) visit(r, 0);
  return out;
}

/**
 * One question's calls as a waterfall: each call a bar from its start for its duration, coloured
 * by outcome and nested under the call that made it (its parent span), as `callTree` orders them.
 * @param {{ records: TraceRecord[], selected: number | null, onSelect: (id: number) => void }} props
 */
export function Waterfall({ records, selected, onSelect }) {
  const W = 480,
    LABEL = 170,
    ROW = 22;
  const tree = callTree(records);
  const rows = tree.map((t) => t.r);
  const start = Math.min(...rows.map((r) => Date.parse(r.ts)));
  const end = Math.max(...rows.map((r) => Date.parse(r.ts) + r.durationMs));
  const span = Math.max(1, Math.round(end - start));
  const x = (/** @type {number} */ t) => LABEL + ((t - start) / span) * (W - LABEL - 8);
  const depth = new Map(tree.map((t) => [t.r.id, t.depth]));
  const H = rows.length * ROW + 20;
  return html`
    <svg class="chart waterfall" viewBox=${`0 0 ${W} ${H}`} style=${`min-width: ${W}px`} role="group" aria-label=${`${rows.length} calls over ${span} ms`}>
      <text x=${LABEL} y="12" class="tick">0 ms</text>
      <text x=${W - 8} y="12" text-anchor="end" class="tick">${span} ms</text>
      ${rows.map((r, i) => {
        const y = 18 + i * ROW;
        const s = Date.parse(r.ts);
        const d = depth.get(r.id) ?? 0;
        return html`
          <g class=${`call outcome-${r.outcome}${r.id === selected ? ' selected' : ''}`} data-trace-id=${r.id} data-span=${r.spanId} data-parent=${r.parentSpanId ?? ''} data-start=${s - start} data-duration=${r.durationMs} data-depth=${d}
            role="button" tabindex="0" aria-label=${`#${r.id} ${r.to} ${r.capability}, starts at ${Math.round(s - start)} ms, lasts ${r.durationMs} ms, ${r.outcome}`}
            onClick=${() => onSelect(r.id)} onKeyDown=${onKeys(() => onSelect(r.id))}>
            <rect class="hit" x="0" y=${y} width=${W} height=${ROW} />
            <text x=${4 + d * 12} y=${y + 15} class="label">${d ? '↳ ' : ''}${r.to} · ${r.capability.length > 18 ? `${r.capability.slice(0, 17)}…` : r.capability}</text>
            <rect class="value" x=${x(s)} y=${y + 5} width=${Math.max(2, x(s + r.durationMs) - x(s))} height=${ROW - 10} rx="2" />
          </g>`;
      })}
    </svg>`;
}

/**
 * Calls per minute as columns, with the share that failed or came back empty as a line.
 * @param {{ buckets: {minute: number, calls: number, errors: number}[] }} props
 */
export function RateChart({ buckets }) {
  const W = 480,
    H = 120,
    TOP = 14,
    BOTTOM = 18,
    LEFT = 28;
  const max = Math.max(1, ...buckets.map((b) => b.calls));
  const w = (W - LEFT) / Math.max(1, buckets.length);
  const y = (/** @type {number} */ share) => TOP + (1 - share) * (H - TOP - BOTTOM);
  const rate = buckets.map(
    (b, i) =>
      `${(LEFT + i * w + w / 2).toFixed(1)},${y(b.calls ? b.errors / b.calls : 0).toFixed(1)}`,
  );
  const clock = (/** @type {number} */ m) => new Date(m * 60_000).toTimeString().slice(0, 5);
  return html`
    <svg class="chart rate" viewBox=${`0 0 ${W} ${H}`} style=${`min-width: ${W}px`} role="img"
      aria-label=${`calls per minute over the last ${buckets.length} minutes: ${buckets.reduce((n, b) => n + b.calls, 0)} calls, ${buckets.reduce((n, b) => n + b.errors, 0)} failed or empty`}>
      <text x="2" y=${TOP} class="tick">${max}</text>
      <text x="2" y=${H - BOTTOM} class="tick">0</text>
      ${buckets.map((b, i) => {
        const h = (b.calls / max) * (H - TOP - BOTTOM);
        return html`<rect class="column" x=${LEFT + i * w + 1} y=${H - BOTTOM - h} width=${Math.max(1, w - 2)} height=${h} data-minute=${b.minute} data-value=${b.calls} data-errors=${b.errors} />`;
      })}
      <polyline class="error-rate" points=${rate.join(' ')} />
      ${
        buckets.length
          ? html`
        <text x=${LEFT} y=${H - 4} class="tick">${clock(buckets[0]?.minute ?? 0)}</text>
        <text x=${W} y=${H - 4} text-anchor="end" class="tick">${clock(buckets[buckets.length - 1]?.minute ?? 0)}</text>`
          : ''
      }
    </svg>`;
}

/**
 * A sequence diagram: two lifelines and one arrow per step, top to bottom.
 * @param {{ left: string, right: string, steps: {from: 'left' | 'right', label: string, kind: string, round: number}[] }} props
 */
export function SequenceDiagram({ left, right, steps }) {
  const W = 480,
    L = 70,
    R = W - 70,
    ROW = 34,
    TOP = 40;
  const H = TOP + steps.length * ROW + 16;
  return html`
    <svg class="chart sequence" viewBox=${`0 0 ${W} ${H}`} role="img" aria-label=${`${steps.length} messages between ${left} and ${right}`}>
      <defs><marker id="seq-arrow" viewBox="0 0 8 8" refX="7" refY="4" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L8,4 L0,8 z" class="arrow-head" /></marker></defs>
      <text x=${L} y="16" text-anchor="middle" class="actor">${left}</text>
      <text x=${R} y="16" text-anchor="middle" class="actor">${right}</text>
      <line x1=${L} x2=${L} y1="24" y2=${H - 6} class="lifeline" />
      <line x1=${R} x2=${R} y1="24" y2=${H - 6} class="lifeline" />
      ${steps.map((s, i) => {
        const y = TOP + i * ROW + 14;
        const [x1, x2] = s.from === 'left' ? [L + 2, R - 2] : [R - 2, L + 2];
        return html`
          <g class=${`step ${s.kind}`} data-round=${s.round} data-from=${s.from}>
            <text x=${W / 2} y=${y - 6} text-anchor="middle" class="label">${s.label}</text>
            <line x1=${x1} x2=${x2} y1=${y} y2=${y} marker-end="url(#seq-arrow)" />
          </g>`;
      })}
    </svg>`;
}
