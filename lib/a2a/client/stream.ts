/**
 * @module lib/a2a/client/stream — SendStreamingMessage and SubscribeToTask from the A2A client's
 * side: opens the stream, reads a refusal that comes before it as an ordinary JSON-RPC answer,
 * then yields the task's events as they arrive until a final state. A stream that drops (the
 * connection broke, the server ended it early or went away) is resumed by itself: a subscribe
 * with `Last-Event-ID` and `lastGeneration` naming the last event seen, so each generation comes
 * once and in order; a bounded number of tries in a row, with a growing wait. Every other end is
 * one coded item.
 */

import { readBodyBytes } from '../../body.ts';
import { sseFrames } from '../../sse/frames.ts';
import type { TaskEvent } from '../types.ts';
import { readStreamEvent, readWith } from '../wire/read.ts';
import { sendParams } from './message.ts';
import { type ClientContext, failure, rpcFailure, withTraceHeaders } from './transport.ts';
import type { MessageInput, ResumeOptions, StreamItem } from './types.ts';

interface StreamOptions {
  signal?: AbortSignal;
  resume?: ResumeOptions;
}

/** Where a stream stands: the task and the last generation seen. */
interface Cursor {
  taskId: string;
  generation: number;
}

const badAnswer = (message: string, status?: number): StreamItem => ({
  kind: 'error',
  error: {
    code: 'A2A_BAD_ANSWER',
    kind: 'bad-answer',
    message,
    ...(status !== undefined ? { status } : {}),
  },
});
const broken = (message: string): StreamItem => ({
  kind: 'error',
  error: failure('A2A_UNREACHABLE', 'unreachable', message).error,
});
/** Ends that a resume may mend: the stream broke, ended early, or the server ended it to go or for falling behind. */
const RESUMABLE = new Set(['A2A_UNREACHABLE', 'STREAM_TOO_SLOW', 'SHUTTING_DOWN', 'STREAM_CUT']);
/** A stream that ended without a final state (the server went away): resumable, a bad answer otherwise. */
const ENDED_EARLY = {
  kind: 'error',
  error: {
    code: 'STREAM_CUT',
    kind: 'unreachable',
    message: 'the stream ended before a final state',
  },
} as const satisfies StreamItem;

/** Sends the message and yields the task's events; the last item is a final event or an error. */
export function streamMessage(
  ctx: ClientContext,
  input: MessageInput,
  o: StreamOptions = {},
): AsyncGenerator<StreamItem> {
  return follow(ctx, ctx.methods.stream, sendParams(ctx.version, input), undefined, o);
}

/** Follows a task's events after `lastGeneration` (none: from the task as it is now). */
export function subscribeTask(
  ctx: ClientContext,
  taskId: string,
  o: StreamOptions & { lastGeneration?: number } = {},
): AsyncGenerator<StreamItem> {
  const at = o.lastGeneration === undefined ? undefined : { taskId, generation: o.lastGeneration };
  return follow(ctx, ctx.methods.subscribe, subscribeParams(taskId, at), at, o);
}

function subscribeParams(taskId: string, at: Cursor | undefined): Record<string, unknown> {
  return at ? { id: taskId, lastGeneration: String(at.generation) } : { id: taskId };
}

/** Opens one stream (POST with `Accept: text/event-stream`); a fetch that fails is a broken item. */
async function open(
  ctx: ClientContext,
  method: string,
  params: unknown,
  at: Cursor | undefined,
  signal: AbortSignal | undefined,
): Promise<Response | StreamItem> {
  const body = JSON.stringify({ jsonrpc: '2.0', id: crypto.randomUUID(), method, params });
  const headers: Record<string, string> = {
    ...withTraceHeaders(ctx.headers),
    accept: 'text/event-stream',
    ...(at ? { 'last-event-id': `${at.taskId}:${at.generation}` } : {}),
  };
  try {
    return await ctx.fetch(ctx.endpoint, {
      method: 'POST',
      headers,
      body,
      ...(signal ? { signal } : {}),
    });
  } catch {
    return broken('the node did not answer');
  }
}

async function* follow(
  ctx: ClientContext,
  method: string,
  params: unknown,
  from: Cursor | undefined,
  o: StreamOptions,
): AsyncGenerator<StreamItem> {
  const attempts = o.resume?.attempts ?? 6;
  const firstWait = o.resume?.backoffMs ?? 200;
  let at = from;
  let failures = 0;
  let res = await open(ctx, method, params, at, o.signal);
  for (;;) {
    let end: Extract<StreamItem, { kind: 'error' }>;
    if (!(res instanceof Response)) end = res as typeof end;
    else if (
      !res.body ||
      !(res.headers.get('content-type') ?? '').startsWith('text/event-stream')
    ) {
      yield await refusalOf(ctx, res);
      return;
    } else {
      end = ENDED_EARLY;
      for await (const [item, id] of eventsOf(ctx, res.body)) {
        if (item.kind === 'error') {
          end = item;
          break;
        }
        const moved = position(item, id);
        if (moved) {
          at = moved;
          failures = 0;
        }
        yield withGeneration(item, moved);
        if (item.kind === 'message' || (item.kind === 'status' && item.final)) return;
        if (item.kind === 'task' && isEnded(item)) return;
      }
    }
    if (!RESUMABLE.has(end.error.code) || !at || failures >= attempts || o.signal?.aborted) {
      yield end === ENDED_EARLY ? badAnswer(end.error.message) : end;
      return;
    }
    await wait(Math.min(firstWait * 2 ** failures++, 5_000), o.signal);
    res = await open(ctx, ctx.methods.subscribe, subscribeParams(at.taskId, at), at, o.signal);
  }
}

/** A Task that ends the stream it opens (terminal): nothing more will come. */
function isEnded(item: Extract<StreamItem, { kind: 'task' }>): boolean {
  const s = item.task.status.state;
  return s === 'completed' || s === 'failed' || s === 'canceled' || s === 'rejected';
}

/** The stream's new position after an event: from its SSE `id:`, else from the event itself. */
function position(e: TaskEvent, id: string | undefined): Cursor | undefined {
  const colon = id ? id.lastIndexOf(':') : -1;
  if (id && colon > 0 && /^\d{1,15}$/.test(id.slice(colon + 1)))
    return { taskId: id.slice(0, colon), generation: Number(id.slice(colon + 1)) };
  if (e.kind === 'task' && e.task.generation !== undefined)
    return { taskId: e.task.id, generation: e.task.generation };
  if ((e.kind === 'status' || e.kind === 'artifact') && e.generation !== undefined)
    return { taskId: e.taskId, generation: e.generation };
  return undefined;
}

/** The event with the generation its `id:` told, when its JSON (the 1.0 form) has none. */
function withGeneration(e: TaskEvent, at: Cursor | undefined): TaskEvent {
  if (!at) return e;
  if (e.kind === 'task' && e.task.generation === undefined)
    return { ...e, task: { ...e.task, generation: at.generation } };
  if ((e.kind === 'status' || e.kind === 'artifact') && e.generation === undefined)
    return { ...e, generation: at.generation };
  return e;
}

function wait(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        resolve();
      },
      { once: true },
    );
  });
}

/** A refusal before the stream starts is an ordinary JSON-RPC answer; anything else is a bad answer. */
async function refusalOf(ctx: ClientContext, res: Response): Promise<StreamItem> {
  const bytes = await readBodyBytes(res, ctx.maxAnswer).catch(() => undefined);
  let doc: { error?: unknown } | undefined;
  try {
    doc = bytes ? JSON.parse(new TextDecoder().decode(bytes)) : undefined;
  } catch {
    /* not JSON: a bad answer below */
  }
  return doc?.error
    ? { kind: 'error', error: rpcFailure(doc.error).error }
    : badAnswer(`not an event stream (HTTP ${res.status})`, res.status);
}

/** The reason a server's final error frame names (`STREAM_TOO_SLOW`, `SHUTTING_DOWN`), if any. */
function endReason(err: unknown): string | undefined {
  const data = (err as { data?: unknown })?.data;
  const info = Array.isArray(data) ? data[0] : data;
  const reason = (info as { reason?: unknown } | undefined)?.reason;
  return typeof reason === 'string' ? reason : undefined;
}

/** The events of an open stream with their SSE ids, up to the final one or an error item; the body is cancelled however it ends. */
async function* eventsOf(
  ctx: ClientContext,
  body: ReadableStream<Uint8Array>,
): AsyncGenerator<[StreamItem, string | undefined]> {
  try {
    for await (const frame of sseFrames(body, ctx.maxAnswer)) {
      if ('tooLarge' in frame) {
        yield [badAnswer(`a stream frame is larger than ${ctx.maxAnswer} bytes`), undefined];
        return;
      }
      let doc: { error?: unknown; result?: unknown };
      try {
        doc = JSON.parse(frame.data);
      } catch {
        yield [badAnswer('a stream frame is not JSON'), undefined];
        return;
      }
      if (doc.error) {
        const item: StreamItem = { kind: 'error', error: rpcFailure(doc.error).error };
        const reason = endReason(doc.error);
        if (reason && RESUMABLE.has(reason)) item.error = { ...item.error, code: reason };
        yield [item, undefined];
        return;
      }
      const event = readWith(() => readStreamEvent(ctx.version, doc.result));
      if ('invalid' in event) {
        yield [badAnswer(event.invalid), undefined];
        return;
      }
      yield [event, frame.id];
    }
  } catch {
    yield [broken('the stream broke off'), undefined];
    return;
  } finally {
    await body.cancel().catch(() => {});
  }
}
