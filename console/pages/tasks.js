/**
 * @module pages/tasks — where each delegated task stands: state, executor and job, progress, the
 * job's output when done, a cancel button while working. Tasks advance lazily, only when read, so
 * the page re-reads its open working tasks every 2 s while it is shown.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { get, post } from '../api.js';
import { html } from '../html.js';
import { ErrorLine, answerError, fmtTime } from './ops-common.js';

const RECIPES = ['fleet-report', 'git-history', 'disk-usage', 'demo'];
const WORKING = new Set(['TASK_STATE_SUBMITTED', 'TASK_STATE_WORKING']);
const stateName = (s) => s.replace(/^TASK_STATE_/, '').toLowerCase().replace(/_/g, ' ');
const textOf = (parts) => (parts ?? []).map((p) => p.text ?? (p.data ? JSON.stringify(p.data) : '')).join('\n');

/** @param {{ t: any, onCancel: (id: string) => void, busy: boolean }} props */
function TaskCard({ t, onCancel, busy }) {
  const state = t.status.state;
  const d = t.metadata?.delegation;
  const p = t.metadata?.progress;
  // The job's output is the artifact's text part; its data part (exit code, truncation) is metadata.
  const output = (t.artifacts ?? []).flatMap((a) => a.parts ?? []).filter((x) => typeof x.text === 'string').map((x) => x.text).join('\n');
  const note = textOf(t.status.message?.parts);
  return html`
    <div class="card task" data-task-id=${t.id} data-state=${state}>
      <div class="task-head">
        <span class=${`badge ${stateName(state).replace(/ /g, '-')}`}>${stateName(state)}</span>
        <code>${t.id.slice(0, 8)}</code>
        ${d ? html`<span>${d.recipe} on <strong>${d.executor}</strong> · job <code>${d.job_id}</code></span>` : html`<span class="muted">not delegated</span>`}
        <span class="muted">${t.status.timestamp ? fmtTime(t.status.timestamp) : ''}</span>
        ${WORKING.has(state) ? html`<button type="button" class="cancel" disabled=${busy} onClick=${() => onCancel(t.id)}>Cancel</button>` : ''}
      </div>
      ${d?.prompt ? html`<div class="muted">“${d.prompt}”</div>` : ''}
      ${p && typeof p === 'object' && p.total ? html`<div class="progress"><progress max=${p.total} value=${p.done} /> ${p.done}/${p.total}</div>` : ''}
      ${note ? html`<div class=${WORKING.has(state) || state === 'TASK_STATE_COMPLETED' ? 'muted' : 'warning'}>${note}</div>` : ''}
      ${output ? html`<pre class="output">${output}</pre>` : ''}
    </div>`;
}

export function Tasks() {
  const [tasks, setTasks] = useState(/** @type {any[] | null} */ (null));
  const [error, setError] = useState(/** @type {any} */ (null));
  const [prompt, setPrompt] = useState('');
  const [recipe, setRecipe] = useState('');
  const [busy, setBusy] = useState(false);
  const tasksRef = useRef(tasks);
  tasksRef.current = tasks;

  /** Puts a re-read task in place (newest first for one not listed yet). */
  const upsert = (t) => setTasks((ts) => (ts?.some((x) => x.id === t.id) ? ts.map((x) => (x.id === t.id ? t : x)) : [t, ...(ts ?? [])]));
  const load = () => get('/api/tasks').then((p) => (setTasks(p.tasks), setError(null)), setError);

  const alive = useRef(true);
  // Reading advances a delegated task: re-read each working one.
  const advance = () => {
    for (const t of (tasksRef.current ?? []).filter((x) => WORKING.has(x.status.state)))
      get(`/api/tasks/${t.id}`).then((n) => alive.current && upsert(n), (e) => alive.current && setError(e));
  };
  const refresh = () => load().then(advance);

  useEffect(() => {
    alive.current = true;
    load();
    const timer = setInterval(advance, 2000);
    return () => ((alive.current = false), clearInterval(timer));
  }, []);

  const delegate = async (e) => {
    e.preventDefault();
    if (!prompt.trim()) return;
    setBusy(true);
    const r = await post('/api/tasks', recipe ? { prompt, recipe } : { prompt });
    setBusy(false);
    const err = answerError(r);
    if (err) return setError(err);
    setError(null);
    setPrompt('');
    upsert(r);
  };
  const cancel = async (id) => {
    setBusy(true);
    const r = await post(`/api/tasks/${id}/cancel`, {});
    setBusy(false);
    const err = answerError(r);
    err ? setError(err) : upsert(r);
  };

  const open = tasks?.filter((t) => WORKING.has(t.status.state)).length ?? 0;
  return html`
    <h2>Tasks <small>${tasks ? `${tasks.length} listed · ${open} working` : ''}</small></h2>
    <form class="delegate" onSubmit=${delegate}>
      <input type="text" name="prompt" placeholder="Delegate a job to the executor, e.g. “fleet report”" value=${prompt} onInput=${(e) => setPrompt(e.currentTarget.value)} />
      <select name="recipe" value=${recipe} onChange=${(e) => setRecipe(e.currentTarget.value)}>
        <option value="">recipe: by keywords</option>${RECIPES.map((r) => html`<option value=${r}>${r}</option>`)}
      </select>
      <button type="submit" disabled=${busy || !prompt.trim()}>Delegate</button>
      <button type="button" class="refresh" onClick=${refresh}>Refresh</button>
    </form>
    <${ErrorLine} error=${error} />
    ${!tasks && !error ? html`<p class="muted">Loading tasks…</p>` : ''}
    ${tasks && !tasks.length ? html`<p class="muted">No tasks yet. Delegate one above.</p>` : ''}
    ${(tasks ?? []).map((t) => html`<${TaskCard} key=${t.id} t=${t} busy=${busy} onCancel=${cancel} />`)}`;
}
