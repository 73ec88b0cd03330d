/**
 * @module console/pages/tasks — the hub's tasks: for a delegated job, where it stands (executor, recipe,
 * model, job, the delegation it continues, progress, the output when done, a cancel button while
 * running, a follow-up once settled); for a task the hub answered itself, the question or skill and
 * the answer; for a task waiting for input, its question and a box to answer it, which continues
 * the task. A job is delegated to one of the fleet's executors (nodes whose card lists
 * `exec.submit`). The page is an A2A client of the hub: it delegates, continues and cancels over
 * the hub's HTTP+JSON binding, and the hub pushes the task list (`/api/tasks/stream`) whenever it
 * changes — its reading also advances delegated jobs.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import {
  RequestError,
  cancelTask,
  continueTask,
  delegate as delegateJob,
  fleet,
  tasksStream,
  toApiError,
} from '../api.js';
import { RECIPES, RUNNING_TASK_STATES, TASK_COMPLETED, TASK_INPUT_REQUIRED } from '../constants.js';
import { valueTo } from '../forms.js';
import { html } from '../html.js';
import { ErrorLine, LiveMark, fmtTime, useStream } from './common.js';

/**
 * Whether `a`'s status is later than `b`'s (ISO timestamps of one format compare as text); in
 * the same millisecond a settled state is the later one.
 * @param {Task} a @param {Task} b
 */
const newerThan = (a, b) => {
  const ta = a.status.timestamp ?? '';
  const tb = b.status.timestamp ?? '';
  if (ta !== tb) return ta > tb;
  return !RUNNING_TASK_STATES.has(a.status.state) && RUNNING_TASK_STATES.has(b.status.state);
};

/** @typedef {import('../types').Task} Task */

/** @param {Task} t */
const running = (t) => RUNNING_TASK_STATES.has(t.status.state);
/** A delegation that has settled, so a follow-up can continue it (`taskId`). @param {Task} t */
const continuable = (t) => t.metadata?.delegation !== undefined && !running(t);
/** @param {string} s `TASK_STATE_INPUT_REQUIRED` → `input required` */
const stateName = (s) =>
  s
    .replace(/^TASK_STATE_/, '')
    .toLowerCase()
    .replace(/_/g, ' ');
/** @param {import('../types').Part[] | undefined} parts */
const textOf = (parts) =>
  (parts ?? []).map((p) => p.text ?? (p.data ? JSON.stringify(p.data) : '')).join('\n');

/**
 * The executor's progress when it is the `{done, total}` the page draws as a bar.
 * @param {unknown} p
 * @returns {{done: number, total: number} | null}
 */
function progressOf(p) {
  if (!p || typeof p !== 'object' || !('done' in p) || !('total' in p)) return null;
  return typeof p.done === 'number' && typeof p.total === 'number' && p.total > 0
    ? { done: p.done, total: p.total }
    : null;
}

/**
 * What was asked of the task: a delegated job's prompt, a delegation still waiting for its
 * executor, or what the hub answered itself (a question, or one of its skills by name).
 * @param {Task} t
 * @returns {{kind: 'delegated' | 'waiting' | 'hub', what: string, prompt: string}}
 */
export function askedOf(t) {
  const d = t.metadata?.delegation;
  if (d) return { kind: 'delegated', what: `delegated to ${d.executor}`, prompt: d.prompt };
  const request = t.metadata?.delegationRequest;
  if (
    request &&
    typeof request === 'object' &&
    'prompt' in request &&
    typeof request.prompt === 'string'
  )
    return { kind: 'waiting', what: 'delegation waiting for the executor', prompt: request.prompt };
  const first = (t.history ?? []).find((m) => m.role === 'ROLE_USER');
  const call = first?.parts
    .map((p) => p.data)
    .find((d) => d && typeof d === 'object' && 'skill' in d);
  if (call && typeof call === 'object' && 'skill' in call) {
    const args =
      'args' in call && call.args && typeof call.args === 'object' && 'prompt' in call.args
        ? String(call.args.prompt)
        : '';
    return { kind: 'hub', what: `hub skill ${String(call.skill)}`, prompt: args };
  }
  // Only the last messages are listed; the hub's answer to a question repeats the question.
  const answered = (t.artifacts ?? [])
    .flatMap((a) => a.parts)
    .map((p) => p.data)
    .find((d) => d && typeof d === 'object' && 'question' in d);
  const question =
    answered &&
    typeof answered === 'object' &&
    'question' in answered &&
    typeof answered.question === 'string'
      ? answered.question
      : '';
  const text =
    question ||
    (first?.parts
      .map((p) => p.text ?? '')
      .join(' ')
      .trim() ??
      '');
  return {
    kind: 'hub',
    what: text ? 'question answered by the hub' : 'answered by the hub',
    prompt: text,
  };
}

/**
 * What a delegated task was given and got: executor, recipe, model, job, and the delegation it continues.
 * @param {{ d: import('../types').Delegation }} props
 */
function DelegationFields({ d }) {
  /** @type {[string, string, string][]} */
  const fields = [
    ['executor', 'executor', d.executor],
    ['recipe', 'recipe', d.recipe ?? '–'],
    ['model', 'model', d.model ?? '–'],
    ['job', 'job', d.job_id],
    ...(d.continues
      ? [
          /** @type {[string, string, string]} */ ([
            'continues',
            'continues',
            `${d.continues.slice(0, 8)} (${d.turns?.length ?? 0} earlier turn${d.turns?.length === 1 ? '' : 's'})`,
          ]),
        ]
      : []),
  ];
  return html`<dl class="delegation">${fields.map(([key, label, value]) => html`<div data-field=${key}><dt>${label}</dt><dd>${value}</dd></div>`)}</dl>`;
}

/** @param {{ t: Task, onCancel: (id: string) => void, onAnswer: (t: Task, text: string) => Promise<void>, onFollowUp: (t: Task) => void, busy: boolean }} props */
function TaskCard({ t, onCancel, onAnswer, onFollowUp, busy }) {
  const [reply, setReply] = useState('');
  const state = t.status.state;
  const asked = askedOf(t);
  const p = progressOf(t.metadata?.progress);
  // The output is the artifacts' text parts (a job's output, the hub's answer); data parts are metadata.
  const output = (t.artifacts ?? [])
    .flatMap((a) => a.parts ?? [])
    .filter((x) => typeof x.text === 'string')
    .map((x) => x.text)
    .join('\n');
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
        ${continuable(t) ? html`<button type="button" class="follow-up" onClick=${() => onFollowUp(t)} aria-label=${`Follow up on task ${t.id.slice(0, 8)}`}>Follow up</button>` : ''}
      </div>
      ${t.metadata?.delegation ? html`<${DelegationFields} d=${t.metadata.delegation} />` : ''}
      ${asked.prompt ? html`<div class="prompt"><span class="muted">asked:</span> “${asked.prompt}”</div>` : ''}
      ${p ? html`<div class="progress"><progress max=${p.total} value=${p.done} aria-label="progress" /> ${p.done}/${p.total}</div>` : ''}
      ${note ? html`<div class=${needsInput ? 'question' : running(t) || state === TASK_COMPLETED ? 'muted' : 'warning'}>${needsInput ? html`<strong>The task asks: </strong>` : ''}${note}</div>` : ''}
      ${
        needsInput
          ? html`
        <form class="continue" onSubmit=${answer}>
          <label for=${answerId}>Your answer</label>
          <input id=${answerId} type="text" name="answer" placeholder="e.g. fleet report" value=${reply} onInput=${valueTo(setReply)} />
          <button type="submit" disabled=${busy || !reply.trim()}>Continue task</button>
        </form>`
          : ''
      }
      ${output ? html`<pre class="output" tabindex="0" aria-label="output">${output}</pre>` : ''}
    </article>`;
}

export function Tasks() {
  const [tasks, setTasks] = useState(/** @type {Task[] | null} */ (null));
  const [error, setError] = useState(/** @type {import('../types').ApiError | null} */ (null));
  const [prompt, setPrompt] = useState('');
  const [recipe, setRecipe] = useState('');
  const [executor, setExecutor] = useState('');
  const [model, setModel] = useState('');
  const [continues, setContinues] = useState('');
  /** The fleet's executors, or null while the fleet is being read. */
  const [executors, setExecutors] = useState(/** @type {string[] | null} */ (null));
  const [busy, setBusy] = useState(false);
  const promptField = useRef(/** @type {HTMLInputElement | null} */ (null));

  // The executors are the nodes whose card lists exec.submit; resolve, the hub's default, comes first.
  useEffect(() => {
    fleet().then(
      (snap) => {
        const names = snap.nodes
          .filter((n) => n.skills.some((s) => s.id === 'exec.submit'))
          .map((n) => n.name);
        setExecutors(names);
        setExecutor((e) => e || (names.includes('resolve') ? 'resolve' : (names[0] ?? '')));
      },
      () => setExecutors([]),
    );
  }, []);

  /**
   * Puts a task the page changed in place (newest first for one not listed yet). The stream may
   * have brought a later state before the answer that changed it arrives (a job that settles at
   * once): an answer never replaces a state newer than its own.
   * @param {Task} t
   */
  const upsert = (t) =>
    setTasks((ts) =>
      ts?.some((x) => x.id === t.id)
        ? ts.map((x) => (x.id === t.id && !newerThan(x, t) ? t : x))
        : [t, ...(ts ?? [])],
    );
  const live = useStream(
    tasksStream,
    (/** @type {import('../types').TaskPage} */ p) => (setTasks(p.tasks), setError(null)),
    [],
  );

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
