/**
 * @module lib/a2a/client/client — a typed client for any A2A node over JSON-RPC, in the 1.0 or the 0.3 wire
 * form: `send`, `stream`, `get`, `list`, `cancel`, `card`, and `call` (a capability by its skill
 * id). Answers are read into the internal model (lib/a2a/types.ts); every outcome is a value with
 * a stable code, nothing throws for a node that is down, slow or wrong. This file wires the parts
 * (lib/a2a/client/transport.ts, message.ts, stream.ts, call.ts; the shapes in types.ts).
 */

import { isPlainObject } from '../../json/guards.ts';
import type { TaskState } from '../types.ts';
import { readSendAnswer, readTaskAnswer, readTaskPage } from '../wire/read.ts';
import { callOutcome } from './call.ts';
import { sendParams } from './message.ts';
import { streamMessage, subscribeTask } from './stream.ts';
import { clientContext, failure, request, rpc } from './transport.ts';
import type { A2AClient, A2AClientOptions } from './types.ts';

export type {
  A2AClient,
  A2AClientOptions,
  ClientResult,
  ListOptions,
  MessageInput,
  ResumeOptions,
  SendAnswer,
  SendOptions,
  StreamItem,
} from './types.ts';

const STATE_V1: Record<TaskState, string> = {
  submitted: 'TASK_STATE_SUBMITTED',
  working: 'TASK_STATE_WORKING',
  completed: 'TASK_STATE_COMPLETED',
  failed: 'TASK_STATE_FAILED',
  canceled: 'TASK_STATE_CANCELED',
  'input-required': 'TASK_STATE_INPUT_REQUIRED',
  rejected: 'TASK_STATE_REJECTED',
  'auth-required': 'TASK_STATE_AUTH_REQUIRED',
};

export function createA2AClient(opts: A2AClientOptions): A2AClient {
  const ctx = clientContext(opts);
  const { version, methods } = ctx;
  const client: A2AClient = {
    version,
    async card() {
      const r = await request(
        ctx,
        { url: `${ctx.base}/.well-known/agent-card.json`, method: 'GET' },
        ctx.timeoutMs,
      );
      if (!r.ok) return r;
      return isPlainObject(r.result)
        ? { ok: true, result: r.result as Record<string, unknown> }
        : failure('A2A_BAD_ANSWER', 'bad-answer', 'the agent card is not a JSON object');
    },
    send: (input, o) =>
      rpc(
        ctx,
        methods.send,
        sendParams(version, input, o),
        (raw) => readSendAnswer(version, raw),
        o?.timeoutMs,
      ),
    get: (taskId, o = {}) =>
      rpc(
        ctx,
        methods.get,
        {
          id: taskId,
          ...(o.historyLength !== undefined ? { historyLength: o.historyLength } : {}),
        },
        (raw) => readTaskAnswer(version, raw),
      ),
    cancel: (taskId) =>
      rpc(ctx, methods.cancel, { id: taskId }, (raw) => readTaskAnswer(version, raw)),
    async list(o = {}) {
      if (version !== '1.0')
        return failure(
          'VERSION_NOT_SUPPORTED',
          'bad-call',
          'ListTasks is an A2A 1.0 method; make the client with version 1.0',
        );
      const params: Record<string, unknown> = { ...o };
      if (o.status) params.status = STATE_V1[o.status];
      return rpc(ctx, methods.list, params, readTaskPage);
    },
    stream: (input, o) => streamMessage(ctx, input, o),
    subscribe: (taskId, o) => subscribeTask(ctx, taskId, o),
    async call(skill, args = {}, o = {}) {
      const data = { skill, args };
      const input = { data, ...(o.contextId ? { contextId: o.contextId } : {}) };
      return callOutcome(await client.send(input, o));
    },
  };
  return client;
}
