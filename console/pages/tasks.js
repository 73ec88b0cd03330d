/**
 * @module pages/tasks — the hub's tasks: for a delegated job, where it stands (executor and job,
 * progress, the output when done, a cancel button while running); for a task the hub answered
 * itself, the question or skill and the answer; for a task waiting for input, its question and a
 * box to answer it, which continues the task. The page is an A2A client of the hub: it delegates,
 * continues and cancels over the hub's HTTP+JSON binding, and the hub pushes the task list
 * (`/api/tasks/stream`) whenever it changes — its reading also advances delegated jobs.
 */
import { useState } from 'preact/hooks';
import { RequestError, cancelTask, continueTask, delegate as delegateJob, tasksStream, toApiError } from '../api.js';
import { RECIPES, RUNNING_TASK_STATES, TASK_COMPLETED, TASK_INPUT_REQUIRED } from '../constants.js';
import { valueTo } from '../forms.js';
import { html } from '../html.js';
import { ErrorLine, LiveMark, fmtTime, useStream } from './common.js';

/** @typedef {import('../types').Task} Task */

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

/**
 * What was asked of the task: a delegated job's prompt, a delegation still waiting for its
 * executor, or what the hub answered itself (a question, or one of its skills by name).
 * @param {Task} t
 * @returns {{kind: 'delegated' | 'waiting' | 'hub', what: string, prompt: string}}
 */
export function askedOf(t) {
  const d = t.metadata?.delegation;
  if (d) return { kind: 'delegated', what: `${d.recipe ?? 'job'} on ${d.executor} · job ${d.job_id}`, prompt: d.prompt };
  const request = t.metadata?.delegationRequest;
  if (request && typeof request === 'object' && 'prompt' in request && typeof request.prompt === 'string')
    return { kind: 'waiting', what: 'delegation waiting for the executor', prompt: request.prompt };
  const first = (t.history ?? []).find((m) => m.role === 'ROLE_USER');
  const call = first?.parts.map((p) => p.data).find((d) => d && typeof d === 'object' && 'skill' in d);
  if (call && typeof call === 'object' && 'skill' in call) {
    const args = 'args' in call && call.args && typeof call.args === 'object' && 'prompt' in call.args ? String(call.args.prompt) : '';
    return { kind: 'hub', what: `hub skill ${String(call.skill)}`, prompt: args };
  }
  // Only the last messages are listed; the hub's answer to a question repeats the question.
  const answered = (t.artifacts ?? []).flatMap((a) => a.parts).map((p) => p.data).find((d) => d && typeof d === 'object' && 'question' in d);
  const question = answered && typeof answered === 'object' && 'question' in answered && typeof answered.question === 'string' ? answered.question : '';
  const text = question || (first?.parts.map((p) => p.text ?? '').join(' ').trim() ?? '');
  return { kind: 'hub', what: text ? 'question answered by the hub' : 'answered by the hub', prompt: text };
}

/** @param {{ t: Task, onCancel: (id: string) => void, onAnswer: (t: Task, text: string) => Promise<void>, busy: boolean }} props */
function TaskCard({ t, onCancel, onAnswer, busy }) {
  const [reply, setReply] = useState('');
  const state = t.status.state;
  const asked = askedOf(t);
  const p = progressOf(t.metadata?.progress);
  // The output is the artifacts' text parts (a job's output, the hub's answer); data parts are metadata.
  const output = (t.artifacts ?? []).flatMap((a) => a.parts ?? []).filter((x) => typeof x.text === 'string').map((x) => x.text).join('\n');
  const note = textOf(t.status.message?.parts);
  const needsInput = state === TASK_INPUT_REQUIRED;
  const answerId = `answer-${t.id}`;
  /** @param {import('../types').FormEvent} e */
  const answer = (e) => {
    e.preventDefault();
    if (reply.trim()) onAnswer(t, reply.trim()).then(() => setReply(''));
  };
  return html`
    <article class="card task" data-task-id=${t.id} data-state=${state} data-kind=${asked.kind} aria-label=${`task ${t.id.slice(0, 8)}, ${stateName(state)}`}>
      <div class="task-head">
        <span class=${`badge ${stateName(state).replace(/ /g, '-')}`}>${stateName(state)}</span>
        <code>${t.id.slice(0, 8)}</code>
        <span class=${`kind ${asked.kind}`}>${asked.what}</span>
        <span class="muted">${t.status.timestamp ? fmtTime(t.status.timestamp) : ''}</span>
        ${running(t) ? html`<button type="button" class="cancel" disabled=${busy} onClick=${() => onCancel(t.id)} aria-label=${`Cancel task ${t.id.slice(0, 8)}`}>Cancel</button>` : ''}
      </div>
      ${asked.prompt ? html`<div class="prompt"><span class="muted">asked:</span> “${asked.prompt}”</div>` : ''}
      ${p ? html`<div class="progress"><progress max=${p.total} value=${p.done} aria-label="progress" /> ${p.done}/${p.total}</div>` : ''}
      ${note ? html`<div class=${needsInput ? 'question' : running(t) || state === TASK_COMPLETED ? 'muted' : 'warning'}>${needsInput ? html`<strong>The task asks: </strong>` : ''}${note}</div>` : ''}
      ${needsInput ? html`
        <form class="continue" onSubmit=${answer}>
          <label for=${answerId}>Your answer</label>
          <input id=${answerId} type="text" name="answer" placeholder="e.g. fleet report" value=${reply} onInput=${valueTo(setReply)} />
          <button type="submit" disabled=${busy || !reply.trim()}>Continue task</button>
        </form>` : ''}
      ${output ? html`<pre class="output" tabindex="0" aria-label="output">${output}</pre>` : ''}
    </article>`;
}

export function Tasks() {
  const [tasks, setTasks] = useState(/** @type {Task[] | null} */ (null));
  const [error, setError] = useState(/** @type {import('../types').ApiError | null} */ (null));
  const [prompt, setPrompt] = useState('');
  const [recipe, setRecipe] = useState('');
  const [busy, setBusy] = useState(false);

  /**
   * Puts a task the page changed in place (newest first for one not listed yet).
   * @param {Task} t
   */
  const upsert = (t) => setTasks((ts) => (ts?.some((x) => x.id === t.id) ? ts.map((x) => (x.id === t.id ? t : x)) : [t, ...(ts ?? [])]));
  const live = useStream(tasksStream, (/** @type {import('../types').TaskPage} */ p) => (setTasks(p.tasks), setError(null)), []);

  /** @param {() => Promise<void>} fn */
  const act = async (fn) => {
    setBusy(true);
    try {
      await fn();
      setError(null);
    } catch (err) {
      setError(toApiError(err));
    } finally {
      setBusy(false);
    }
  };
  /** @param {import('../types').FormEvent} e */
  const delegate = (e) => {
    e.preventDefault();
    if (!prompt.trim()) return;
    return act(async () => {
      const r = await delegateJob(recipe ? { prompt, recipe } : { prompt });
      setPrompt('');
      // The hub answers a delegation with its task; a plain message would mean no task was made.
      if ('task' in r) upsert(r.task);
      else throw new RequestError('NO_TASK', textOf(r.message.parts));
    });
  };
  /** @param {string} id */
  const cancel = (id) => act(async () => upsert(await cancelTask(id)));
  /** @param {Task} t @param {string} text */
  const answer = (t, text) => act(async () => {
    const r = await continueTask(t, text);
    if ('task' in r) upsert(r.task);
  });

  const open = tasks?.filter(running).length ?? 0;
  const waiting = tasks?.filter((t) => t.status.state === TASK_INPUT_REQUIRED).length ?? 0;
  return html`
    <h2>Tasks <small>${tasks ? `${tasks.length} listed · ${open} working${waiting ? ` · ${waiting} waiting for input` : ''} · ` : ''}<${LiveMark} live=${live} /></small></h2>
    <form class="delegate" onSubmit=${delegate}>
      <label class="grow">Job <input type="text" name="prompt" placeholder="Delegate a job to the executor, e.g. “fleet report”" value=${prompt} onInput=${valueTo(setPrompt)} /></label>
      <label>recipe <select name="recipe" value=${recipe} onChange=${valueTo(setRecipe)}>
        <option value="">by keywords</option>${RECIPES.map((r) => html`<option value=${r}>${r}</option>`)}
      </select></label>
      <button type="submit" disabled=${busy || !prompt.trim()}>Delegate</button>
    </form>
    <${ErrorLine} error=${error} />
    ${!tasks && !error ? html`<p class="muted">Loading tasks…</p>` : ''}
    ${tasks && !tasks.length ? html`<p class="muted">No tasks yet. Delegate one above.</p>` : ''}
    ${(tasks ?? []).map((t) => html`<${TaskCard} key=${t.id} t=${t} busy=${busy} onCancel=${cancel} onAnswer=${answer} />`)}`;
}
