/**
 * @module console/pages/task-card — one task on the Tasks page: where a delegated job stands
 * (executor, recipe, model, job, the delegation it continues, progress, output), what the hub
 * answered itself, a question waiting for an answer, and the Cancel and Follow-up buttons.
 */
import { useState } from 'preact/hooks';
import { RUNNING_TASK_STATES, TASK_COMPLETED, TASK_INPUT_REQUIRED } from '../constants.js';
import { valueTo } from '../forms.js';
import { html } from '../html.js';
import { fmtTime } from './common.js';

/** @typedef {import('../types').Task} Task */

/** @param {Task} t */
export const running = (t) => RUNNING_TASK_STATES.has(t.status.state);
/** A delegation that has settled, so a follow-up can continue it (`taskId`). @param {Task} t */
export const continuable = (t) => t.metadata?.delegation !== undefined && !running(t);
/** @param {string} s `TASK_STATE_INPUT_REQUIRED` → `input required` */
const stateName = (s) =>
  s
    .replace(/^TASK_STATE_/, '')
    .toLowerCase()
    .replace(/_/g, ' ');
/** @param {import('../types').Part[] | undefined} parts */
export const textOf = (parts) =>
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
export function TaskCard({ t, onCancel, onAnswer, onFollowUp, busy }) {
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
