/**
 * @module lib/a2a/client/transport — how the A2A client reaches a node: the settings every call
 * reads (`ClientContext`), one HTTP request read as JSON within a bound and a time limit, one
 * JSON-RPC call read into the internal model, and the coded failures each of them ends with.
 */

import { readBodyBytes } from '../../body.ts';
import { A2A_ERRORS, type A2AErrorReason } from '../../errors/a2a.ts';
import type { CallFailure, CallFailureKind, Err } from '../../errors/result.ts';
import { currentTrace, traceHeaders } from '../../telemetry/trace-context.ts';
import type { ProtocolVersion } from '../types.ts';
import { readWith } from '../wire/read.ts';
import type { A2AClientOptions, ClientResult } from './types.ts';

/** The JSON-RPC method names of each wire form; ListTasks has no 0.3 name. */
const METHODS = {
  '1.0': {
    send: 'SendMessage',
    stream: 'SendStreamingMessage',
    get: 'GetTask',
    list: 'ListTasks',
    cancel: 'CancelTask',
    subscribe: 'SubscribeToTask',
  },
  '0.3': {
    send: 'message/send',
    stream: 'message/stream',
    get: 'tasks/get',
    list: '',
    cancel: 'tasks/cancel',
    subscribe: 'tasks/resubscribe',
  },
} as const;

/** What every call of one client reads; made once by `clientContext`. */
export interface ClientContext {
  readonly version: ProtocolVersion;
  /** The node's base URL, without a trailing slash. */
  readonly base: string;
  readonly endpoint: string;
  readonly fetch: typeof fetch;
  readonly maxAnswer: number;
  readonly timeoutMs: number;
  readonly methods: (typeof METHODS)[ProtocolVersion];
  /** The headers of every JSON-RPC request, the caller's own included. */
  readonly headers: Record<string, string>;
}

export function clientContext(opts: A2AClientOptions): ClientContext {
  const version = opts.version ?? '1.0';
  const base = opts.url.replace(/\/+$/, '');
  return {
    version,
    base,
    endpoint: opts.endpoint ?? `${base}/a2a`,
    fetch: opts.fetch ?? fetch,
    maxAnswer: opts.maxAnswerBytes ?? 8 * 1024 * 1024,
    timeoutMs: opts.timeoutMs ?? 30_000,
    methods: METHODS[version],
    headers: {
      'content-type': 'application/json',
      ...(version === '1.0' ? { 'A2A-Version': '1.0' } : {}),
      ...opts.headers,
    },
  };
}

/** The current W3C trace context goes along, unless the caller set its own `traceparent`. */
export const withTraceHeaders = (h: Record<string, string>): Record<string, string> => ({
  ...traceHeaders(currentTrace()),
  ...h,
});

export const failure = (
  code: string,
  kind: CallFailureKind,
  message: string,
  extra: Partial<CallFailure> = {},
): Err<CallFailure> => ({ ok: false, error: { code, kind, message, ...extra } });

/** JSON-RPC error numbers back to the A2A reason a node meant. */
const REASON_BY_RPC = new Map<number, A2AErrorReason>(
  Object.entries(A2A_ERRORS).map(([reason, e]) => [e.rpc, reason as A2AErrorReason]),
);

/** The JSON-RPC error of an answer as a failure, with the A2A reason when the number is a known one. */
export function rpcFailure(err: unknown): Err<CallFailure> {
  const e = (err && typeof err === 'object' ? err : {}) as { code?: unknown; message?: unknown };
  const reason = typeof e.code === 'number' ? REASON_BY_RPC.get(e.code) : undefined;
  const message = typeof e.message === 'string' ? e.message.slice(0, 500) : 'JSON-RPC error';
  return failure(reason ?? 'A2A_RPC_ERROR', 'failed', message);
}

/** One request; the parsed JSON of the answer, or a transport failure. */
export async function request(
  ctx: ClientContext,
  init: RequestInit & { url: string },
  timeoutMs: number,
): Promise<ClientResult<unknown>> {
  let res: Response;
  try {
    res = await ctx.fetch(init.url, { ...init, signal: AbortSignal.timeout(timeoutMs) });
  } catch (e) {
    const timedOut = (e as Error)?.name === 'TimeoutError';
    return failure(
      timedOut ? 'A2A_TIMEOUT' : 'A2A_UNREACHABLE',
      timedOut ? 'timeout' : 'unreachable',
      timedOut ? `no answer within ${timeoutMs} ms` : 'the node did not answer',
    );
  }
  const bytes = await readBodyBytes(res, ctx.maxAnswer).catch(() => undefined);
  if (!bytes)
    return failure(
      'A2A_BAD_ANSWER',
      'bad-answer',
      `the answer could not be read or is larger than ${ctx.maxAnswer} bytes`,
      { status: res.status },
    );
  try {
    return { ok: true, result: JSON.parse(new TextDecoder().decode(bytes)) };
  } catch {
    return failure('A2A_BAD_ANSWER', 'bad-answer', `the answer (HTTP ${res.status}) is not JSON`, {
      status: res.status,
    });
  }
}

/** One JSON-RPC call, its result read by `read`. */
export async function rpc<T>(
  ctx: ClientContext,
  method: string,
  params: unknown,
  read: (raw: unknown) => T,
  timeoutMs = ctx.timeoutMs,
): Promise<ClientResult<T>> {
  const body = JSON.stringify({ jsonrpc: '2.0', id: crypto.randomUUID(), method, params });
  const answer = await request(
    ctx,
    { url: ctx.endpoint, method: 'POST', headers: withTraceHeaders(ctx.headers), body },
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
