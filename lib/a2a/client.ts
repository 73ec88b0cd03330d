/**
 * @module lib/a2a/client — a typed client for any A2A node over JSON-RPC, in the 1.0 or the 0.3 wire
 * form: `send`, `stream`, `get`, `list`, `cancel`, `card`, and `call` (a capability by its skill
 * id). Answers are read into the internal model (lib/a2a/types.ts); every outcome is a value with
 * a stable code, nothing throws for a node that is down, slow or wrong.
 */

import { currentTrace, traceHeaders } from '../telemetry/trace-context.ts';
import { readBodyBytes } from '../body.ts';
import { sseFrames } from '../sse-frames.ts';
import { A2A_ERRORS, type A2AErrorReason } from '../errors/a2a.ts';
import { codedFailureOf } from '../errors/as-data.ts';
import type { CallFailure, CallFailureKind, Result } from '../errors/result.ts';
import type {
  ListTasksPage,
  Message,
  Metadata,
  Part,
  ProtocolVersion,
  Task,
  TaskEvent,
  TaskState,
} from './types.ts';
import {
  readSendAnswer,
  readStreamEvent,
  readTaskAnswer,
  readTaskPage,
  readWith,
} from './wire-read.ts';
import { messageToV1 } from './wire-v1.ts';
import { messageToV03 } from './wire-v03.ts';

export interface A2AClientOptions {
  /** The node's base URL (`http://host:port`); JSON-RPC goes to `<url>/a2a` unless `endpoint` says otherwise. */
  url: string;
  /** The JSON-RPC endpoint, when it is not `<url>/a2a` (read it from the card's `url`). */
  endpoint?: string;
  /** The wire form spoken (default 1.0). */
  version?: ProtocolVersion;
  /** Extra headers on every request (e.g. `traceparent`); never logged. */
  headers?: Record<string, string>;
  /** Per-call limit for non-streaming calls (default 30 s). */
  timeoutMs?: number;
  /** Largest answer or stream frame read, in bytes (default 8 MiB). */
  maxAnswerBytes?: number;
  fetch?: typeof fetch;
}

/** What to send: a text, or parts with an optional conversation and task to continue. */
export type MessageInput =
  | string
  | {
      text?: string;
      data?: unknown;
      parts?: Part[];
      contextId?: string;
      taskId?: string;
      messageId?: string;
      metadata?: Metadata;
    };

export interface SendOptions {
  /** Answer at once with the task as it is, instead of waiting for a final state. */
  returnImmediately?: boolean;
  historyLength?: number;
  timeoutMs?: number;
}

export interface ListOptions {
  contextId?: string;
  status?: TaskState;
  pageSize?: number;
  pageToken?: string;
  historyLength?: number;
  includeArtifacts?: boolean;
}

/** A stream item: an event, or the failure that ended the stream (always the last item). */
export type StreamItem = TaskEvent | { kind: 'error'; error: CallFailure };

export type ClientResult<T> = Result<T, CallFailure>;

export interface A2AClient {
  readonly version: ProtocolVersion;
  /** The agent card (`/.well-known/agent-card.json`). */
  card(): Promise<ClientResult<Record<string, unknown>>>;
  send(
    input: MessageInput,
    opts?: SendOptions,
  ): Promise<ClientResult<{ task: Task } | { message: Message }>>;
  /** Sends and streams the task's events; ends after a final state or with an `error` item. */
  stream(input: MessageInput, opts?: { signal?: AbortSignal }): AsyncGenerator<StreamItem>;
  get(taskId: string, opts?: { historyLength?: number }): Promise<ClientResult<Task>>;
  /** ListTasks is an A2A 1.0 method; a 0.3 client answers `VERSION_NOT_SUPPORTED` without a request. */
  list(opts?: ListOptions): Promise<ClientResult<ListTasksPage>>;
  cancel(taskId: string): Promise<ClientResult<Task>>;
  /**
   * Calls one capability by its skill id with a data part `{skill, args}` and answers with the
   * completed task's first data artifact (the node's own error code when it failed with one).
   */
  call(
    skill: string,
    args?: Record<string, unknown>,
    opts?: SendOptions & { contextId?: string },
  ): Promise<ClientResult<unknown> & { taskId?: string }>;
}

const METHODS = {
  '1.0': {
    send: 'SendMessage',
    stream: 'SendStreamingMessage',
    get: 'GetTask',
    list: 'ListTasks',
    cancel: 'CancelTask',
  },
  '0.3': {
    send: 'message/send',
    stream: 'message/stream',
    get: 'tasks/get',
    list: '',
    cancel: 'tasks/cancel',
  },
} as const;

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

/** JSON-RPC error numbers back to the A2A reason a node meant. */
const REASON_BY_RPC = new Map<number, A2AErrorReason>(
  Object.entries(A2A_ERRORS).map(([reason, e]) => [e.rpc, reason as A2AErrorReason]),
);

const failure = (
  code: string,
  kind: CallFailureKind,
  message: string,
  extra: Partial<CallFailure> = {},
): { ok: false; error: CallFailure } => ({ ok: false, error: { code, kind, message, ...extra } });

function toMessage(input: MessageInput): Message {
  const m = typeof input === 'string' ? { text: input } : input;
  const parts: Part[] = [...(m.parts ?? [])];
  if (m.text !== undefined) parts.push({ text: m.text });
  if (m.data !== undefined) parts.push({ data: m.data, mediaType: 'application/json' });
  const message: Message = { messageId: m.messageId ?? crypto.randomUUID(), role: 'user', parts };
  if (m.contextId) message.contextId = m.contextId;
  if (m.taskId) message.taskId = m.taskId;
  if (m.metadata) message.metadata = m.metadata;
  return message;
}

/** The JSON-RPC error of an answer as a failure, with the A2A reason when the number is a known one. */
function rpcFailure(err: unknown): { ok: false; error: CallFailure } {
  const e = (err && typeof err === 'object' ? err : {}) as { code?: unknown; message?: unknown };
  const reason = typeof e.code === 'number' ? REASON_BY_RPC.get(e.code) : undefined;
  const message = typeof e.message === 'string' ? e.message.slice(0, 500) : 'JSON-RPC error';
  return failure(reason ?? 'A2A_RPC_ERROR', 'failed', message);
}

export function createA2AClient(opts: A2AClientOptions): A2AClient {
  const version = opts.version ?? '1.0';
  const base = opts.url.replace(/\/+$/, '');
  const endpoint = opts.endpoint ?? `${base}/a2a`;
  const doFetch = opts.fetch ?? fetch;
  const maxAnswer = opts.maxAnswerBytes ?? 8 * 1024 * 1024;
  const methods = METHODS[version];
  const headers = {
    'content-type': 'application/json',
    ...(version === '1.0' ? { 'A2A-Version': '1.0' } : {}),
    ...opts.headers,
  };
  const wireMessage = version === '1.0' ? messageToV1 : messageToV03;
  // The current W3C trace context goes along, unless the caller set its own `traceparent`.
  const withTraceHeaders = (h: Record<string, string>) => ({
    ...traceHeaders(currentTrace()),
    ...h,
  });

  /** One request; the parsed JSON of the answer, or a transport failure. */
  async function request(
    init: RequestInit & { url: string },
    timeoutMs: number,
  ): Promise<ClientResult<unknown>> {
    let res: Response;
    try {
      res = await doFetch(init.url, { ...init, signal: AbortSignal.timeout(timeoutMs) });
    } catch (e) {
      const timedOut = (e as Error)?.name === 'TimeoutError';
      return failure(
        timedOut ? 'A2A_TIMEOUT' : 'A2A_UNREACHABLE',
        timedOut ? 'timeout' : 'unreachable',
        timedOut ? `no answer within ${timeoutMs} ms` : 'the node did not answer',
      );
    }
    const bytes = await readBodyBytes(res, maxAnswer).catch(() => undefined);
    if (!bytes)
      return failure(
        'A2A_BAD_ANSWER',
        'bad-answer',
        `the answer could not be read or is larger than ${maxAnswer} bytes`,
        { status: res.status },
      );
    try {
      return { ok: true, result: JSON.parse(new TextDecoder().decode(bytes)) };
    } catch {
      return failure(
        'A2A_BAD_ANSWER',
        'bad-answer',
        `the answer (HTTP ${res.status}) is not JSON`,
        { status: res.status },
      );
    }
  }

  /** One JSON-RPC call, its result read by `read`. */
  async function rpc<T>(
    method: string,
    params: unknown,
    read: (raw: unknown) => T,
    timeoutMs = opts.timeoutMs ?? 30_000,
  ): Promise<ClientResult<T>> {
    const body = JSON.stringify({ jsonrpc: '2.0', id: crypto.randomUUID(), method, params });
    const answer = await request(
      { url: endpoint, method: 'POST', headers: withTraceHeaders(headers), body },
      timeoutMs,
    );
    if (!answer.ok) return answer;
    const doc = answer.result as { error?: unknown; result?: unknown } | null;
    if (doc && typeof doc === 'object' && doc.error) return rpcFailure(doc.error);
    if (!doc || typeof doc !== 'object' || !('result' in doc))
      return failure('A2A_BAD_ANSWER', 'bad-answer', 'the answer is not a JSON-RPC result');
    const value = readWith(() => read(doc.result));
    if (value && typeof value === 'object' && 'invalid' in value)
      return failure('A2A_BAD_ANSWER', 'bad-answer', String(value.invalid));
    return { ok: true, result: value as T };
  }

  function sendParams(input: MessageInput, o: SendOptions = {}): Record<string, unknown> {
    const configuration: Record<string, unknown> =
      version === '1.0'
        ? { returnImmediately: o.returnImmediately ?? false }
        : { blocking: !(o.returnImmediately ?? false) };
    if (o.historyLength !== undefined) configuration.historyLength = o.historyLength;
    return { message: wireMessage(toMessage(input)), configuration };
  }

  const client: A2AClient = {
    version,
    async card() {
      const r = await request(
        { url: `${base}/.well-known/agent-card.json`, method: 'GET' },
        opts.timeoutMs ?? 30_000,
      );
      if (!r.ok) return r;
      return r.result && typeof r.result === 'object' && !Array.isArray(r.result)
        ? { ok: true, result: r.result as Record<string, unknown> }
        : failure('A2A_BAD_ANSWER', 'bad-answer', 'the agent card is not a JSON object');
    },
    send: (input, o) =>
      rpc(methods.send, sendParams(input, o), (raw) => readSendAnswer(version, raw), o?.timeoutMs),
    get: (taskId, o = {}) =>
      rpc(
        methods.get,
        {
          id: taskId,
          ...(o.historyLength !== undefined ? { historyLength: o.historyLength } : {}),
        },
        (raw) => readTaskAnswer(version, raw),
      ),
    cancel: (taskId) => rpc(methods.cancel, { id: taskId }, (raw) => readTaskAnswer(version, raw)),
    async list(o = {}) {
      if (version !== '1.0')
        return failure(
          'VERSION_NOT_SUPPORTED',
          'bad-call',
          'ListTasks is an A2A 1.0 method; make the client with version 1.0',
        );
      const params: Record<string, unknown> = { ...o };
      if (o.status) params.status = STATE_V1[o.status];
      return rpc(methods.list, params, readTaskPage);
    },
    async *stream(input, o = {}) {
      const body = JSON.stringify({
        jsonrpc: '2.0',
        id: crypto.randomUUID(),
        method: methods.stream,
        params: sendParams(input),
      });
      let res: Response;
      try {
        res = await doFetch(endpoint, {
          method: 'POST',
          headers: { ...withTraceHeaders(headers), accept: 'text/event-stream' },
          body,
          ...(o.signal ? { signal: o.signal } : {}),
        });
      } catch {
        yield {
          kind: 'error',
          error: {
            code: 'A2A_UNREACHABLE',
            kind: 'unreachable',
            message: 'the node did not answer',
          },
        };
        return;
      }
      if (!res.body || !(res.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
        // A refusal before the stream starts is an ordinary JSON-RPC answer.
        const bytes = await readBodyBytes(res, maxAnswer).catch(() => undefined);
        let doc: { error?: unknown } | undefined;
        try {
          doc = bytes ? JSON.parse(new TextDecoder().decode(bytes)) : undefined;
        } catch {
          /* not JSON: a bad answer below */
        }
        yield {
          kind: 'error',
          error: doc?.error
            ? rpcFailure(doc.error).error
            : {
                code: 'A2A_BAD_ANSWER',
                kind: 'bad-answer',
                message: `not an event stream (HTTP ${res.status})`,
                status: res.status,
              },
        };
        return;
      }
      try {
        for await (const frame of sseFrames(res.body, maxAnswer)) {
          if ('tooLarge' in frame) {
            yield {
              kind: 'error',
              error: {
                code: 'A2A_BAD_ANSWER',
                kind: 'bad-answer',
                message: `a stream frame is larger than ${maxAnswer} bytes`,
              },
            };
            return;
          }
          let doc: { error?: unknown; result?: unknown };
          try {
            doc = JSON.parse(frame.data);
          } catch {
            yield {
              kind: 'error',
              error: {
                code: 'A2A_BAD_ANSWER',
                kind: 'bad-answer',
                message: 'a stream frame is not JSON',
              },
            };
            return;
          }
          if (doc.error) {
            yield { kind: 'error', error: rpcFailure(doc.error).error };
            return;
          }
          const event = readWith(() => readStreamEvent(version, doc.result));
          if ('invalid' in event) {
            yield {
              kind: 'error',
              error: { code: 'A2A_BAD_ANSWER', kind: 'bad-answer', message: event.invalid },
            };
            return;
          }
          yield event;
          if (event.kind === 'message' || (event.kind === 'status' && event.final)) return;
        }
      } catch {
        yield {
          kind: 'error',
          error: { code: 'A2A_UNREACHABLE', kind: 'unreachable', message: 'the stream broke off' },
        };
        return;
      } finally {
        await res.body.cancel().catch(() => {});
      }
      yield {
        kind: 'error',
        error: {
          code: 'A2A_BAD_ANSWER',
          kind: 'bad-answer',
          message: 'the stream ended before a final state',
        },
      };
    },
    async call(skill, args = {}, o = {}) {
      const sent = await client.send(
        { data: { skill, args }, ...(o.contextId ? { contextId: o.contextId } : {}) },
        o,
      );
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
    },
  };
  return client;
}
