/**
 * @module lib/fleet/message — the A2A form of a fleet call: one A2A 1.0 `SendMessage` with a data part
 * `{skill, args}` to a fleet node's `/a2a` (its address from the fleet config, never from the
 * caller), answered with the completed task's first data artifact. `fleet.message` in
 * lib/fleet/invoke.ts wraps it with the trace.
 */

import { isPlainObject } from '../json/guards.ts';
import { readBodyBytes } from '../body.ts';
import { FLEET_MESSAGE_ERRORS, type FleetMessageErrorCode } from '../errors/fleet.ts';
import { codedFailureOf } from '../errors/as-data.ts';
import type { CallFailure, CallFailureKind, Err, Ok } from '../errors/result.ts';
import { currentTrace, traceHeaders } from '../telemetry/trace-context.ts';
import type { CallMeter } from './traced-call.ts';
import { resultAttributes, type SpanAttributes } from '../telemetry/a2a-span.ts';

/** What a JSON-RPC answer adds to the call's span: its task, or the error's code as `error.type`. */
function answerAttributes(doc: unknown): SpanAttributes {
  if (!isPlainObject(doc)) return {};
  if (isPlainObject(doc.error) && typeof doc.error.code === 'number')
    return { 'error.type': String(doc.error.code) };
  return resultAttributes(doc.result);
}

export interface FleetMessageOptions {
  /** The conversation this message belongs to (the same for every turn of one exchange). */
  contextId: string;
  timeoutMs?: number;
}
/**
 * A `message` outcome. A task that ended with a coded error in its status message fails with the
 * node's own code (read from the data part, never from text); otherwise with an A2A_* code of
 * lib/errors/fleet.ts.
 */
export type FleetMessageResult = (
  | (Ok & { taskId: string; contextId: string })
  | Err<CallFailure>
) & {
  /** Id of the trace record the call left. */
  traceId?: number;
};

export const SKILL = /^[a-z][a-z0-9-]*(\.[a-z][a-z0-9-]*)+$/;
/** Context ids the hub makes or accepts: no spaces or characters that could mean anything else. */
const CONTEXT_ID = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;

const mfail = (
  code: FleetMessageErrorCode,
  kind: CallFailureKind,
  message?: string,
  taskId?: string,
): Err<CallFailure> => ({
  ok: false,
  error: {
    code,
    message: message ?? FLEET_MESSAGE_ERRORS[code].message,
    kind,
    ...(taskId ? { taskId } : {}),
  },
});

/** The parts of a task's status message, if it has one. */
function statusParts(status: Record<string, unknown>): unknown[] {
  const parts = (status.message as { parts?: unknown[] } | undefined)?.parts;
  return Array.isArray(parts) ? parts : [];
}

/** The text of a task's status message, for people. */
function statusText(parts: unknown[]): string {
  return parts
    .map((p) => (p as { text?: unknown })?.text)
    .filter((t): t is string => typeof t === 'string')
    .join(' ')
    .slice(0, 2000);
}

/** Reads a v1.0 SendMessage answer: the completed task's first data part, or a coded failure. */
function readTask(doc: unknown, contextId: string): FleetMessageResult {
  const d = doc as {
    result?: { task?: unknown };
    error?: { code?: unknown; message?: unknown };
  } | null;
  if (d && typeof d === 'object' && d.error && typeof d.error === 'object')
    return mfail(
      'A2A_RPC_ERROR',
      'failed',
      `JSON-RPC error ${String(d.error.code)}: ${typeof d.error.message === 'string' ? d.error.message.slice(0, 500) : ''}`,
    );
  const task = d?.result?.task as
    | { id?: unknown; contextId?: unknown; status?: Record<string, unknown>; artifacts?: unknown[] }
    | undefined;
  if (!task || typeof task.id !== 'string' || !task.status || typeof task.status.state !== 'string')
    return mfail('A2A_BAD_ANSWER', 'bad-answer');
  if (task.contextId !== contextId)
    return mfail(
      'A2A_BAD_ANSWER',
      'bad-answer',
      `the task answered in context ${String(task.contextId)}, not ${contextId}`,
      task.id,
    );
  const parts = statusParts(task.status);
  const said = statusText(parts);
  // The node's own code, when its status message carries one as data.
  const coded = codedFailureOf(parts);
  if (coded && task.status.state !== 'TASK_STATE_COMPLETED')
    return {
      ok: false,
      error: { code: coded.code, message: coded.message, kind: 'failed', taskId: task.id },
    };
  switch (task.status.state) {
    case 'TASK_STATE_COMPLETED': {
      for (const a of Array.isArray(task.artifacts) ? task.artifacts : []) {
        const part = ((a as { parts?: unknown[] })?.parts ?? []).find(
          (p) => p !== null && typeof p === 'object' && 'data' in p,
        ) as { data: unknown } | undefined;
        if (part) return { ok: true, result: part.data, taskId: task.id, contextId };
      }
      // Completed without data: an empty answer, traced as such.
      return { ok: true, result: null, taskId: task.id, contextId };
    }
    case 'TASK_STATE_FAILED':
      return mfail(
        'A2A_TASK_FAILED',
        'failed',
        said || FLEET_MESSAGE_ERRORS.A2A_TASK_FAILED.message,
        task.id,
      );
    case 'TASK_STATE_REJECTED':
      return mfail(
        'A2A_TASK_REJECTED',
        'failed',
        said || FLEET_MESSAGE_ERRORS.A2A_TASK_REJECTED.message,
        task.id,
      );
    case 'TASK_STATE_INPUT_REQUIRED':
      return mfail(
        'A2A_INPUT_REQUIRED',
        'failed',
        said || FLEET_MESSAGE_ERRORS.A2A_INPUT_REQUIRED.message,
        task.id,
      );
    default:
      return mfail(
        'A2A_NOT_COMPLETED',
        'failed',
        `the task is ${task.status.state}${said ? `: ${said}` : ''}`,
        task.id,
      );
  }
}

/** What the messenger needs: where the fleet's nodes answer (a subset of the fleet invoker's deps). */
interface A2AMessengerDeps {
  fleet?: { nodes: ReadonlyArray<{ name: string; url: string }> };
  /**
   * Signs the request as this fleet node (route `/a2a`, scope `a2a`), so the receiver knows a
   * fleet node is calling and lets it run capabilities that need a principal.
   */
  sign?: (target: string, body: Uint8Array) => Promise<Record<string, string>>;
  fetch?: typeof fetch;
  maxAnswerBytes?: number;
}

export function createA2AMessenger(deps: A2AMessengerDeps) {
  const doFetch = deps.fetch ?? fetch;
  const maxAnswer = deps.maxAnswerBytes ?? 8 * 1024 * 1024;
  return async (
    target: string,
    skill: string,
    args: Record<string, unknown>,
    contextId: string | undefined,
    timeout: number,
    meter?: CallMeter,
  ): Promise<FleetMessageResult> => {
    // Fleet nodes only: the hub does not message itself, and no caller supplies an address.
    const member =
      deps.fleet && typeof target === 'string'
        ? deps.fleet.nodes.find((n) => n.name === target)
        : undefined;
    if (!member) return mfail('A2A_NO_ROUTE', 'bad-call');
    if (typeof skill !== 'string' || !SKILL.test(skill))
      return mfail('A2A_BAD_REQUEST', 'bad-call', 'skill is not a capability id');
    if (!isPlainObject(args)) return mfail('A2A_BAD_REQUEST', 'bad-call', 'args must be an object');
    if (typeof contextId !== 'string' || !CONTEXT_ID.test(contextId))
      return mfail('A2A_BAD_REQUEST', 'bad-call', 'contextId is missing or malformed');
    const messageId = crypto.randomUUID();
    const at = new URL(member.url);
    if (meter)
      meter.detail = {
        name: 'SendMessage',
        attributes: {
          'a2a.protocol.version': '1.0',
          // A member's card carries its fleet name (a join is refused otherwise).
          'gen_ai.agent.name': member.name,
          'a2a.message.id': messageId,
          'gen_ai.conversation.id': contextId,
          'server.address': at.hostname,
          'server.port': Number(at.port || (at.protocol === 'https:' ? 443 : 80)),
        },
      };
    let body: Uint8Array;
    try {
      body = new TextEncoder().encode(
        JSON.stringify({
          jsonrpc: '2.0',
          id: crypto.randomUUID(),
          method: 'SendMessage',
          params: {
            message: {
              messageId,
              contextId,
              role: 'ROLE_USER',
              parts: [{ data: { skill, args }, mediaType: 'application/json' }],
            },
            configuration: { returnImmediately: false },
          },
        }),
      );
    } catch {
      return mfail('A2A_BAD_REQUEST', 'bad-call', 'args are not serialisable as JSON');
    }
    let signature: Record<string, string> = {};
    try {
      if (deps.sign) signature = await deps.sign(target, body);
    } catch {
      return mfail('A2A_BAD_REQUEST', 'bad-call', 'this node has no key to sign with');
    }
    try {
      const res = await doFetch(`${member.url}/a2a`, {
        method: 'POST',
        headers: {
          ...traceHeaders(currentTrace()),
          ...signature,
          'content-type': 'application/json',
          'A2A-Version': '1.0',
        },
        body: body as Uint8Array<ArrayBuffer>,
        signal: AbortSignal.timeout(timeout),
      });
      const bytes = await readBodyBytes(res, maxAnswer);
      if (!bytes)
        return mfail('A2A_BAD_ANSWER', 'bad-answer', `answer is larger than ${maxAnswer} bytes`);
      if (meter) meter.answerBytes = bytes.byteLength;
      let doc: unknown;
      try {
        doc = JSON.parse(new TextDecoder().decode(bytes));
      } catch {
        return mfail('A2A_BAD_ANSWER', 'bad-answer', `answer (HTTP ${res.status}) is not JSON`);
      }
      if (meter?.detail) Object.assign(meter.detail.attributes, answerAttributes(doc));
      return readTask(doc, contextId);
    } catch (e) {
      const name = (e as Error)?.name;
      return name === 'TimeoutError' || name === 'AbortError'
        ? mfail('A2A_TIMEOUT', 'timeout', `${target} did not answer within ${timeout} ms`)
        : mfail('A2A_UNREACHABLE', 'unreachable', `${target} is unreachable`);
    }
  };
}
