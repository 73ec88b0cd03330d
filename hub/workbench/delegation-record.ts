/**
 * @module hub/workbench/delegation-record — what a delegation keeps on the hub's task
 * (`metadata.delegation`: executor, job, prompt, earlier turns), read back through checks, and
 * the earlier turns as the executor's bounded `context` argument.
 */

import { isPlainObject } from '../../lib/json/guards.ts';
import type { Task } from '../../lib/a2a/types.ts';
import { isString } from './fleet-answers.ts';

/** One earlier exchange of a delegation chain: what was asked and what the job answered. */
export interface Turn {
  prompt: string;
  output: string;
  job_id: string;
  taskId: string;
}

/** What the hub keeps on a delegated task, as `metadata.delegation`. */
export interface Delegation {
  executor: string;
  job_id: string;
  recipe?: string;
  model?: string;
  /** The prompt of this task's job. */
  prompt: string;
  submittedAt: string;
  /** The hub task this one continues, and the turns before this one (oldest first). */
  continues?: string;
  turns?: Turn[];
}

/** What a client asks with task.delegate (checked against the capability's specs first). */
export interface DelegateArgs {
  prompt: string;
  executor?: string;
  recipe?: string;
  model?: string;
  taskId?: string;
}

/** Earlier turns sent with a continued job, at most this many and this long as JSON. */
const MAX_TURNS = 20;
const MAX_CONTEXT = 16_000;
const MAX_OUTPUT_PER_TURN = 2_000;

// The task's metadata is the hub's own, but typed as any JSON: read it through checks.
const isTurn = (t: unknown): t is Turn =>
  isPlainObject(t) &&
  isString(t.prompt) &&
  isString(t.output) &&
  isString(t.job_id) &&
  isString(t.taskId);
const isDelegation = (d: unknown): d is Delegation =>
  isPlainObject(d) &&
  isString(d.job_id) &&
  isString(d.executor) &&
  isString(d.prompt) &&
  (d.turns === undefined || (Array.isArray(d.turns) && d.turns.every(isTurn)));
/** A delegation request an interrupted task kept to retry. */
export const isRequest = (r: unknown): r is DelegateArgs =>
  isPlainObject(r) &&
  isString(r.prompt) &&
  ['executor', 'recipe', 'model', 'taskId'].every((k) => r[k] === undefined || isString(r[k]));
/** The delegation a task carries, if it is one. */
export const delegationOf = (task: Readonly<Task>): Delegation | undefined => {
  const d = task.metadata?.delegation;
  return isDelegation(d) ? d : undefined;
};

/** The text of a settled delegation's `job-output` artifact. */
export const outputOf = (task: Readonly<Task>): string =>
  task.artifacts
    ?.find((a) => a.name === 'job-output')
    ?.parts.map((p) => ('text' in p && typeof p.text === 'string' ? p.text : ''))
    .join('') ?? '';

/** The newest turns that fit the executor's `context` argument. */
export function contextOf(turns: Turn[]): string {
  let kept = turns
    .slice(-MAX_TURNS)
    .map((t) => ({ prompt: t.prompt, output: t.output.slice(0, MAX_OUTPUT_PER_TURN) }));
  while (kept.length && JSON.stringify(kept).length > MAX_CONTEXT) kept = kept.slice(1);
  return JSON.stringify(kept);
}
