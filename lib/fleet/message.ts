/**
 * @module fleet-message — the A2A form of a fleet call: one A2A 1.0 `SendMessage` with a data part
 * `{skill, args}` to a fleet node's `/a2a` (its address from the fleet config, never from the
 * caller), answered with the completed task's first data artifact. `fleet.message` in
 * lib/fleet/invoke.ts wraps it with the trace.
 */

import { readBodyBytes } from '../body.ts';

export interface FleetMessageOptions {
  /** The conversation this message belongs to (the same for every turn of one exchange). */
  contextId: string;
  timeoutMs?: number;
}
export type FleetMessageResult = (
  | { ok: true; result: unknown; taskId: string; contextId: string }
  | { ok: false; error: { code: A2AMessageErrorCode; message: string; kind: 'bad-call' | 'unreachable' | 'timeout' | 'bad-answer' | 'failed'; taskId?: string } }
) & {
  /** Id of the trace record the call left. */
  traceId?: number;
};

/** Stable codes of a failed `message`, each once. */
export const A2A_MESSAGE_ERRORS = {
  A2A_NO_ROUTE: 'target is not a fleet node the hub can message',
  A2A_BAD_REQUEST: 'skill, args or contextId are malformed',
  A2A_UNREACHABLE: 'the node did not answer',
  A2A_TIMEOUT: 'the node did not answer in time',
  A2A_BAD_ANSWER: 'the answer is not an A2A 1.0 SendMessage result',
  A2A_RPC_ERROR: 'the node answered with a JSON-RPC error',
  A2A_TASK_FAILED: 'the task failed',
  A2A_TASK_REJECTED: 'the node rejected the task',
  A2A_INPUT_REQUIRED: 'the task needs more input',
  A2A_NOT_COMPLETED: 'the task did not complete',
} as const;
export type A2AMessageErrorCode = keyof typeof A2A_MESSAGE_ERRORS;


export const SKILL = /^[a-z][a-z0-9-]*(\.[a-z][a-z0-9-]*)+$/;
/** Context ids the hub makes or accepts: no spaces or characters that could mean anything else. */
const CONTEXT_ID = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;

type MessageFailure = Extract<FleetMessageResult, { ok: false }>;
const mfail = (code: A2AMessageErrorCode, kind: MessageFailure['error']['kind'], message?: string, taskId?: string): MessageFailure => ({
  ok: false,
  error: { code, message: message ?? A2A_MESSAGE_ERRORS[code], kind, ...(taskId ? { taskId } : {}) },
});

/** The text of a task's status message, if it has one. */
function statusText(status: Record<string, unknown>): string {
  const parts = (status.message as { parts?: unknown[] } | undefined)?.parts;
  const texts = Array.isArray(parts) ? parts.map((p) => (p as { text?: unknown })?.text).filter((t): t is string => typeof t === 'string') : [];
  return texts.join(' ').slice(0, 2000);
}

/** Reads a v1.0 SendMessage answer: the completed task's first data part, or a coded failure. */
function readTask(doc: unknown, contextId: string): FleetMessageResult {
  const d = doc as { result?: { task?: unknown }; error?: { code?: unknown; message?: unknown } } | null;
  if (d && typeof d === 'object' && d.error && typeof d.error === 'object')
    return mfail('A2A_RPC_ERROR', 'failed', `JSON-RPC error ${String(d.error.code)}: ${typeof d.error.message === 'string' ? d.error.message.slice(0, 500) : ''}`);
  const task = d?.result?.task as { id?: unknown; contextId?: unknown; status?: Record<string, unknown>; artifacts?: unknown[] } | undefined;
  if (!task || typeof task.id !== 'string' || !task.status || typeof task.status.state !== 'string') return mfail('A2A_BAD_ANSWER', 'bad-answer');
  if (task.contextId !== contextId) return mfail('A2A_BAD_ANSWER', 'bad-answer', `the task answered in context ${String(task.contextId)}, not ${contextId}`, task.id);
  const said = statusText(task.status);
  switch (task.status.state) {
    case 'TASK_STATE_COMPLETED': {
      for (const a of Array.isArray(task.artifacts) ? task.artifacts : []) {
        const part = ((a as { parts?: unknown[] })?.parts ?? []).find((p) => p !== null && typeof p === 'object' && 'data' in p) as { data: unknown } | undefined;
        if (part) return { ok: true, result: part.data, taskId: task.id, contextId };
      }
      // Completed without data: an empty answer, traced as such.
      return { ok: true, result: null, taskId: task.id, contextId };
    }
    case 'TASK_STATE_FAILED':
      return mfail('A2A_TASK_FAILED', 'failed', said || A2A_MESSAGE_ERRORS.A2A_TASK_FAILED, task.id);
    case 'TASK_STATE_REJECTED':
      return mfail('A2A_TASK_REJECTED', 'failed', said || A2A_MESSAGE_ERRORS.A2A_TASK_REJECTED, task.id);
    case 'TASK_STATE_INPUT_REQUIRED':
      return mfail('A2A_INPUT_REQUIRED', 'failed', said || A2A_MESSAGE_ERRORS.A2A_INPUT_REQUIRED, task.id);
    default:
      return mfail('A2A_NOT_COMPLETED', 'failed', `the task is ${task.status.state}${said ? `: ${said}` : ''}`, task.id);
  }
}

/** What the messenger needs: where the fleet's nodes answer (a subset of the fleet invoker's deps). */
export interface A2AMessengerDeps {
  fleet?: { nodes: ReadonlyArray<{ name: string; url: string }> };
  fetch?: typeof fetch;
  maxAnswerBytes?: number;
}

export function createA2AMessenger(deps: A2AMessengerDeps) {
  const doFetch = deps.fetch ?? fetch;
  const maxAnswer = deps.maxAnswerBytes ?? 8 * 1024 * 1024;
  return async (target: string, skill: string, args: Record<string, unknown>, contextId: string | undefined, timeout: number): Promise<FleetMessageResult> => {
    // Fleet nodes only: the hub does not message itself, and no caller supplies an address.
    const member = deps.fleet && typeof target === 'string' ? deps.fleet.nodes.find((n) => n.name === target) : undefined;
    if (!member) return mfail('A2A_NO_ROUTE', 'bad-call');
    if (typeof skill !== 'string' || !SKILL.test(skill)) return mfail('A2A_BAD_REQUEST', 'bad-call', 'skill is not a capability id');
    if (!args || typeof args !== 'object' || Array.isArray(args)) return mfail('A2A_BAD_REQUEST', 'bad-call', 'args must be an object');
    if (typeof contextId !== 'string' || !CONTEXT_ID.test(contextId)) return mfail('A2A_BAD_REQUEST', 'bad-call', 'contextId is missing or malformed');
    let body: string;
    try {
      body = JSON.stringify({
        jsonrpc: '2.0',
        id: crypto.randomUUID(),
        method: 'SendMessage',
        params: {
          message: { messageId: crypto.randomUUID(), contextId, role: 'ROLE_USER', parts: [{ data: { skill, args }, mediaType: 'application/json' }] },
          configuration: { returnImmediately: false },
        },
      });
    } catch {
      return mfail('A2A_BAD_REQUEST', 'bad-call', 'args are not serialisable as JSON');
    }
    try {
      const res = await doFetch(`${member.url}/a2a`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'A2A-Version': '1.0' },
        body,
        signal: AbortSignal.timeout(timeout),
      });
      const bytes = await readBodyBytes(res, maxAnswer);
      if (!bytes) return mfail('A2A_BAD_ANSWER', 'bad-answer', `answer is larger than ${maxAnswer} bytes`);
      let doc: unknown;
      try {
        doc = JSON.parse(new TextDecoder().decode(bytes));
      } catch {
        return mfail('A2A_BAD_ANSWER', 'bad-answer', `answer (HTTP ${res.status}) is not JSON`);
      }
      return readTask(doc, contextId);
    } catch (e) {
      const name = (e as Error)?.name;
      return name === 'TimeoutError' || name === 'AbortError'
        ? mfail('A2A_TIMEOUT', 'timeout', `${target} did not answer within ${timeout} ms`)
        : mfail('A2A_UNREACHABLE', 'unreachable', `${target} is unreachable`);
    }
  };
}
