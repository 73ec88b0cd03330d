/**
 * @module lib/a2a/client/call — a capability called by its skill id, from the A2A client's side:
 * what the node's answer to a `{skill, args}` data part means for the caller (the first data
 * artifact of the completed task, or the node's own coded failure).
 */

import { codedFailureOf } from '../../errors/as-data.ts';
import { failure } from './transport.ts';
import type { ClientResult, SendAnswer } from './types.ts';

/** The caller's result of a call whose message was answered with `sent`. */
export function callOutcome(
  sent: ClientResult<SendAnswer>,
): ClientResult<unknown> & { taskId?: string } {
  if (!sent.ok) return sent;
  if ('message' in sent.result) {
    const data = sent.result.message.parts.find((p) => p.data !== undefined);
    return { ok: true, result: data?.data ?? null };
  }
  const task = sent.result.task;
  const said = task.status.message?.parts;
  if (task.status.state !== 'completed') {
    // A node built on this kit puts its coded failure in the status message as data.
    const coded = codedFailureOf(said ?? []);
    const text = said
      ?.map((p) => p.text)
      .filter(Boolean)
      .join(' ')
      .slice(0, 2000);
    return {
      ...failure(
        coded?.code ?? 'A2A_NOT_COMPLETED',
        'failed',
        coded?.message ?? (text || `the task is ${task.status.state}`),
        { taskId: task.id },
      ),
      taskId: task.id,
    };
  }
  for (const a of task.artifacts) {
    const part = a.parts.find((p) => p.data !== undefined);
    if (part) return { ok: true, result: part.data, taskId: task.id };
  }
  return { ok: true, result: null, taskId: task.id };
}
