/**
 * @module hub/mcp/task-follow — a hub A2A task followed as an MCP task (the tasks extension, for
 * `delegate`): read on each poll (a read advances a delegation) until it ends, its end the MCP
 * task's result (`completed`; `isError` when it failed, was rejected or canceled); an A2A
 * interruption becomes the MCP task's `input_required` with one input request: input-required a
 * form asking for the reply (sent to the A2A task as its next message), auth-required its own
 * kind — a URL-mode elicitation to the address the agent gave (else a form saying what to
 * authorize), its key `authorize`, its `_meta` naming `TASK_STATE_AUTH_REQUIRED` (and the hub
 * task, as every request's does) — answered by
 * authorizing out of band and accepting. A declined or cancelled request, or the MCP task
 * cancelled, cancels the A2A task; an MCP task deleted (its TTL ran out) leaves it be.
 */

import type { Principal } from '../../lib/auth/principal.ts';
import type { TaskEngine } from '../../lib/a2a/engine/engine.ts';
import { isA2AError } from '../../lib/a2a/errors.ts';
import type { Task } from '../../lib/a2a/types.ts';
import { parseSendParamsV1, taskToV1 } from '../../lib/a2a/wire/v1.ts';
import type { InputRequest } from '../../lib/mcp/exchange.ts';
import { errorResult, okResult, type ToolResult } from '../../lib/mcp/protocol.ts';
import { TASK_GONE, type TaskRun } from '../../lib/mcp/tasks.ts';

/** Where an input request says which A2A state asked for it, and of which hub task. */
export const A2A_STATE_META = 'dev.lume-a2a/a2a-state';
export const A2A_TASK_META = 'dev.lume-a2a/a2a-task';

const ENDED = new Set(['completed', 'failed', 'rejected', 'canceled']);

/** The text of the task's status message (at most 1,000 characters). */
const statusText = (t: Task): string =>
  (t.status.message?.parts ?? [])
    .map((p) => p.text ?? '')
    .filter(Boolean)
    .join('\n')
    .slice(0, 1000);

/** The first http(s) address of the task's status message, where an agent asks to be authorized. */
function authUrl(t: Task): string | undefined {
  for (const p of t.status.message?.parts ?? []) {
    const found = p.url ?? /https?:\/\/\S+/.exec(p.text ?? '')?.[0];
    if (found && /^https?:\/\//.test(found) && found.length <= 2048) return found;
  }
  return undefined;
}

/** What an interrupted A2A task asks of the MCP client; undefined when it is not interrupted. */
export function interruption(
  t: Task,
): { key: 'reply' | 'authorize'; request: InputRequest; statusMessage: string } | undefined {
  const said = statusText(t);
  if (t.status.state === 'input-required')
    return {
      key: 'reply',
      statusMessage: `input-required: ${said || 'the task needs input'}`,
      request: {
        method: 'elicitation/create',
        params: {
          message: said || 'The task needs input to go on.',
          requestedSchema: {
            type: 'object',
            properties: { reply: { type: 'string', description: 'Your answer to the task' } },
            required: ['reply'],
          },
          _meta: { [A2A_STATE_META]: 'TASK_STATE_INPUT_REQUIRED', [A2A_TASK_META]: t.id },
        },
      },
    };
  if (t.status.state !== 'auth-required') return undefined;
  const url = authUrl(t);
  const message = `Authorization required: ${said || 'the agent needs you to authorize it'}`;
  const _meta = { [A2A_STATE_META]: 'TASK_STATE_AUTH_REQUIRED', [A2A_TASK_META]: t.id };
  return {
    key: 'authorize',
    statusMessage: `auth-required: ${said || 'the agent needs authorization'}`,
    request: {
      method: 'elicitation/create',
      params: url
        ? { mode: 'url', elicitationId: `${t.id}:auth`, url, message, _meta }
        : { message, requestedSchema: { type: 'object', properties: {} }, _meta },
    },
  };
}

const pause = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const t = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => (clearTimeout(t), resolve()), { once: true });
  });

/** The A2A task's end as the tool's result. */
function ended(t: Task): ToolResult {
  const r = okResult({ task: taskToV1(t) });
  return t.status.state === 'completed' ? r : { ...r, isError: true };
}

const accepted = (answer: unknown): Record<string, unknown> | undefined => {
  const a = answer as { action?: unknown; content?: unknown } | undefined;
  return a?.action === 'accept'
    ? ((a.content as Record<string, unknown> | undefined) ?? {})
    : undefined;
};

/** Follows the hub task `id` of `caller` until it ends; polls every `pollMs`. */
export async function followTask(
  engine: () => TaskEngine,
  id: string,
  caller: Principal,
  run: TaskRun,
  pollMs: number,
): Promise<ToolResult> {
  const cancel = async (why: string) => {
    await engine().cancel(id, caller);
    return errorResult('TASK_CANCELED', why);
  };
  for (;;) {
    // A task deleted (its TTL ran out) leaves the hub task as it is, to read with get_task.
    if (run.signal.aborted && run.signal.reason === TASK_GONE)
      return errorResult('TASK_GONE', 'the MCP task was deleted');
    if (run.signal.aborted) return cancel('the MCP task was cancelled');
    const t = await engine().getTask(id, 0, caller);
    if (isA2AError(t)) return errorResult(t.code, t.message);
    if (ENDED.has(t.status.state)) return ended(t);
    const asks = interruption(t);
    if (!asks) {
      run.say(statusText(t) || `the task is ${t.status.state}`);
      await pause(pollMs, run.signal);
      continue;
    }
    const got = await run.gather({ [asks.key]: asks.request }, asks.statusMessage);
    if ('resultType' in got || !got.ok) return cancel('the client could not answer the task');
    const content = accepted(got.result[asks.key]);
    if (!content) return cancel(`the client declined the task's ${asks.key} request`);
    if (asks.key === 'authorize') {
      // Authorized out of band: the agent goes on by itself; read it again after a pause.
      await pause(pollMs, run.signal);
      continue;
    }
    const params = parseSendParamsV1({
      message: {
        messageId: crypto.randomUUID(),
        role: 'ROLE_USER',
        taskId: id,
        parts: [{ text: String(content.reply ?? '').slice(0, 10_000) }],
      },
    });
    if (isA2AError(params)) return errorResult(params.code, params.message);
    const sent = await engine().send({ params, version: '1.0', caller });
    if (isA2AError(sent)) return errorResult(sent.code, sent.message);
  }
}
