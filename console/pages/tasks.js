/**
 * @module console/pages/tasks — the hub's tasks: for a delegated job, where it stands (executor, recipe,
 * model, job, the delegation it continues, progress, the output when done, a cancel button while
 * running, a follow-up once settled); for a task the hub answered itself, the question or skill and
 * the answer; for a task waiting for input, its question and a box to answer it, which continues
 * the task. A job is delegated to one of the fleet's executors (nodes whose card lists
 * `exec.submit`). The page is an A2A client of the hub: it delegates, continues and cancels over
 * the hub's HTTP+JSON binding, and the hub pushes the task list (`/api/tasks/stream`) whenever it
 * changes — its reading also advances delegated jobs.
 * This file is the page and its delegate form; a task is console/pages/task-card.js, the list and
 * the executors console/pages/tasks-state.js.
 */
import { useRef, useState } from 'preact/hooks';
import { RequestError, cancelTask, continueTask, delegate as delegateJob } from '../api.js';
import { RECIPES, TASK_INPUT_REQUIRED } from '../constants.js';
import { valueTo } from '../forms.js';
import { html } from '../html.js';
import { ErrorLine, LiveMark } from './common.js';
import { TaskCard, continuable, running, textOf } from './task-card.js';
import { useExecutors, useTaskList } from './tasks-state.js';

export { askedOf } from './task-card.js';

/** @typedef {import('../types').Task} Task */

export function Tasks() {
  const { tasks, error, busy, live, upsert, act } = useTaskList();
  const [prompt, setPrompt] = useState('');
  const [recipe, setRecipe] = useState('');
  const [executors, executor, setExecutor] = useExecutors();
  const [model, setModel] = useState('');
  const [continues, setContinues] = useState('');
  const promptField = useRef(/** @type {HTMLInputElement | null} */ (null));

  /** @param {import('../types').FormEvent} e */
  const delegate = (e) => {
    e.preventDefault();
    if (!prompt.trim()) return;
    return act(async () => {
      const r = await delegateJob({
        prompt,
        ...(recipe ? { recipe } : {}),
        ...(executor ? { executor } : {}),
        ...(model.trim() ? { model: model.trim() } : {}),
        ...(continues ? { taskId: continues } : {}),
      });
      setPrompt('');
      setContinues('');
      // The hub answers a delegation with its task; a plain message would mean no task was made.
      if ('task' in r) upsert(r.task);
      else throw new RequestError('NO_TASK', textOf(r.message.parts));
    });
  };
  /** @param {string} id */
  const cancel = (id) => act(async () => upsert(await cancelTask(id)));
  /**
   * A settled delegation's "Follow up": continue it, with the job box ready to type in.
   * @param {Task} t
   */
  const followUp = (t) => {
    pickContinued(t.id);
    promptField.current?.focus();
  };
  /**
   * The delegation the next job continues ('' for none); it goes to the same executor unless another is picked.
   * @param {string} id
   */
  const pickContinued = (id) => {
    setContinues(id);
    const earlier = tasks?.find((x) => x.id === id)?.metadata?.delegation?.executor;
    if (earlier && executors?.includes(earlier)) setExecutor(earlier);
  };
  /** @param {Task} t @param {string} text */
  const answer = (t, text) =>
    act(async () => {
      const r = await continueTask(t, text);
      if ('task' in r) upsert(r.task);
    });

  const settled = (tasks ?? []).filter(continuable);
  const open = tasks?.filter(running).length ?? 0;
  const waiting = tasks?.filter((t) => t.status.state === TASK_INPUT_REQUIRED).length ?? 0;
  return html`
    <h2>Tasks <small>${tasks ? `${tasks.length} listed · ${open} working${waiting ? ` · ${waiting} waiting for input` : ''} · ` : ''}<${LiveMark} live=${live} /></small></h2>
    <form class="delegate" onSubmit=${delegate}>
      <label class="grow">Job <input type="text" name="prompt" ref=${promptField} placeholder="Delegate a job to an executor, e.g. “fleet report”" value=${prompt} onInput=${valueTo(setPrompt)} /></label>
      <label>executor <select name="executor" value=${executor} onChange=${valueTo(setExecutor)} disabled=${!executors?.length}>
        ${executors?.length ? executors.map((n) => html`<option value=${n}>${n}</option>`) : html`<option value="">${executors ? "the hub's default" : 'reading the fleet…'}</option>`}
      </select></label>
      <label>recipe <select name="recipe" value=${recipe} onChange=${valueTo(setRecipe)}>
        <option value="">by keywords</option>${RECIPES.map((r) => html`<option value=${r}>${r}</option>`)}
      </select></label>
      <label>model <input type="text" name="model" size="12" placeholder="optional" value=${model} onInput=${valueTo(setModel)} /></label>
      <label>continues <select name="taskId" value=${continues} onChange=${valueTo(pickContinued)}>
        <option value="">nothing (a new job)</option>
        ${settled.map((t) => html`<option value=${t.id}>${t.id.slice(0, 8)} · ${(t.metadata?.delegation?.prompt ?? '').slice(0, 32)}</option>`)}
      </select></label>
      <button type="submit" disabled=${busy || !prompt.trim()}>${continues ? 'Continue delegation' : 'Delegate'}</button>
    </form>
    <${ErrorLine} error=${error} />
    ${!tasks && !error ? html`<p class="muted">Loading tasks…</p>` : ''}
    ${tasks && !tasks.length ? html`<p class="muted">No tasks yet. Delegate one above.</p>` : ''}
    ${(tasks ?? []).map((t) => html`<${TaskCard} key=${t.id} t=${t} busy=${busy} onCancel=${cancel} onAnswer=${answer} onFollowUp=${followUp} />`)}`;
}
