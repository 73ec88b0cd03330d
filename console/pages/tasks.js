/**
 * @module pages/tasks — where each delegated task stands: state, executor and job, progress, the
 * job's output when done, a cancel button while running. The page is an A2A client of the hub: it
 * lists, reads and cancels tasks and delegates jobs (a SendMessage to `task.delegate`) over the
 * hub's HTTP+JSON binding. Tasks advance lazily, only when read, so the page re-reads its running
 * tasks every 2 s while it is shown.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { cancelTask, delegate as delegateJob, getTask, listTasks, toApiError } from '../api.js';
import { LIVE_REFRESH_MS, RECIPES, RUNNING_TASK_STATES, TASK_COMPLETED } from '../constants.js';
import { valueTo } from '../forms.js';
import { html } from '../html.js';
import { ErrorLine, fmtTime } from './ops-common.js';

/** @typedef {import('../types').Task} Task */

const PAGE_SIZE = 50;
/** @param {Task} t */
const running = (t) => RUNNING_TASK_STATES.has(t.status.state);
/** @param {string} s `TASK_STATE_INPUT_REQUIRED` → `input required` */
const stateName = (s) => s.replace(/^TASK_STATE_/, '').toLowerCase().replace(/_/g, ' ');
/** @param {import('../types').Part[] | undefined} parts */
const textOf = (parts) => (parts ?? []).map((p) => p.text ?? (p.data ? JSON.stringify(p.data) : '')).join('\n');

/**
 * The executor's progress when it is the `{done, total}` the page draws as a bar.
 * @param {unknown} p
 * @returns {{done: number, total: number} | null}
 */
function progressOf(p) {
  if (!p || typeof p !== 'object' || !('done' in p) || !('total' in p)) return null;
  return typeof p.done === 'number' && typeof p.total === 'number' && p.total > 0 ? { done: p.done, total: p.total } : null;
}

/** @param {{ t: Task, onCancel: (id: string) => void, busy: boolean }} props */
function TaskCard({ t, onCancel, busy }) {
  const state = t.status.state;
  const d = t.metadata?.delegation;
  const p = progressOf(t.metadata?.progress);
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
        ${running(t) ? html`<button type="button" class="cancel" disabled=${busy} onClick=${() => onCancel(t.id)}>Cancel</button>` : ''}
      </div>
      ${d?.prompt ? html`<div class="muted">“${d.prompt}”</div>` : ''}
      ${p ? html`<div class="progress"><progress max=${p.total} value=${p.done} /> ${p.done}/${p.total}</div>` : ''}
      ${note ? html`<div class=${running(t) || state === TASK_COMPLETED ? 'muted' : 'warning'}>${note}</div>` : ''}
      ${output ? html`<pre class="output">${output}</pre>` : ''}
    </div>`;
}

export function Tasks() {
  const [tasks, setTasks] = useState(/** @type {Task[] | null} */ (null));
  const [error, setError] = useState(/** @type {import('../types').ApiError | null} */ (null));
  const [prompt, setPrompt] = useState('');
  const [recipe, setRecipe] = useState('');
  const [busy, setBusy] = useState(false);
  const tasksRef = useRef(tasks);
  tasksRef.current = tasks;

  /**
   * Puts a re-read task in place (newest first for one not listed yet).
   * @param {Task} t
   */
  const upsert = (t) => setTasks((ts) => (ts?.some((x) => x.id === t.id) ? ts.map((x) => (x.id === t.id ? t : x)) : [t, ...(ts ?? [])]));
  /** @param {unknown} e */
  const fail = (e) => setError(toApiError(e));
  const load = () => listTasks(PAGE_SIZE).then((p) => (setTasks(p.tasks), setError(null)), fail);

  const alive = useRef(true);
  // Reading advances a delegated task: re-read each running one.
  const advance = () => {
    for (const t of (tasksRef.current ?? []).filter(running))
      getTask(t.id).then((n) => alive.current && upsert(n), (e) => alive.current && fail(e));
  };
  const refresh = () => load().then(advance);

  useEffect(() => {
    alive.current = true;
    load();
    const timer = setInterval(advance, LIVE_REFRESH_MS);
    return () => ((alive.current = false), clearInterval(timer));
  }, []);

  /** @param {import('../types').FormEvent} e */
  const delegate = async (e) => {
    e.preventDefault();
    if (!prompt.trim()) return;
    setBusy(true);
    try {
      const r = await delegateJob(recipe ? { prompt, recipe } : { prompt });
      setError(null);
      setPrompt('');
      // The hub answers a delegation with its task; a plain message would mean no task was made.
      if ('task' in r) upsert(r.task);
      else setError({ code: 'NO_TASK', message: textOf(r.message.parts) });
    } catch (err) {
      fail(err);
    } finally {
      setBusy(false);
    }
  };
  /** @param {string} id */
  const cancel = async (id) => {
    setBusy(true);
    try {
      upsert(await cancelTask(id));
      setError(null);
    } catch (err) {
      fail(err);
    } finally {
      setBusy(false);
    }
  };

  const open = tasks?.filter(running).length ?? 0;
  return html`
    <h2>Tasks <small>${tasks ? `${tasks.length} listed · ${open} working` : ''}</small></h2>
    <form class="delegate" onSubmit=${delegate}>
      <input type="text" name="prompt" placeholder="Delegate a job to the executor, e.g. “fleet report”" value=${prompt} onInput=${valueTo(setPrompt)} />
      <select name="recipe" value=${recipe} onChange=${valueTo(setRecipe)}>
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
