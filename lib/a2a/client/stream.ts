/**
 * @module lib/a2a/client/stream — SendStreamingMessage from the A2A client's side: opens the
 * stream, reads a refusal that comes before it as an ordinary JSON-RPC answer, then yields the
 * task's events as they arrive until a final state, ending every other way with one coded item.
 */

import { readBodyBytes } from '../../body.ts';
import { sseFrames } from '../../sse/frames.ts';
import { readStreamEvent, readWith } from '../wire/read.ts';
import { sendParams } from './message.ts';
import { type ClientContext, failure, rpcFailure, withTraceHeaders } from './transport.ts';
import type { MessageInput, StreamItem } from './types.ts';

const badAnswer = (message: string, status?: number): StreamItem => ({
  kind: 'error',
  error: {
    code: 'A2A_BAD_ANSWER',
    kind: 'bad-answer',
    message,
    ...(status !== undefined ? { status } : {}),
  },
});

/** Sends the message and yields the task's events; the last item is a final event or an error. */
export async function* streamMessage(
  ctx: ClientContext,
  input: MessageInput,
  o: { signal?: AbortSignal } = {},
): AsyncGenerator<StreamItem> {
  const body = JSON.stringify({
    jsonrpc: '2.0',
    id: crypto.randomUUID(),
    method: ctx.methods.stream,
    params: sendParams(ctx.version, input),
  });
  let res: Response;
  try {
    res = await ctx.fetch(ctx.endpoint, {
      method: 'POST',
      headers: { ...withTraceHeaders(ctx.headers), accept: 'text/event-stream' },
      body,
      ...(o.signal ? { signal: o.signal } : {}),
    });
  } catch {
    yield {
      kind: 'error',
      error: failure('A2A_UNREACHABLE', 'unreachable', 'the node did not answer').error,
    };
    return;
  }
  if (!res.body || !(res.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
    yield await refusalOf(ctx, res);
    return;
  }
  yield* eventsOf(ctx, res.body);
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

/** The events of an open stream, up to the final one; the body is cancelled however it ends. */
async function* eventsOf(
  ctx: ClientContext,
  body: ReadableStream<Uint8Array>,
): AsyncGenerator<StreamItem> {
  try {
    for await (const frame of sseFrames(body, ctx.maxAnswer)) {
      if ('tooLarge' in frame) {
        yield badAnswer(`a stream frame is larger than ${ctx.maxAnswer} bytes`);
        return;
      }
      let doc: { error?: unknown; result?: unknown };
      try {
        doc = JSON.parse(frame.data);
      } catch {
        yield badAnswer('a stream frame is not JSON');
        return;
      }
      if (doc.error) {
        yield { kind: 'error', error: rpcFailure(doc.error).error };
        return;
      }
      const event = readWith(() => readStreamEvent(ctx.version, doc.result));
      if ('invalid' in event) {
        yield badAnswer(event.invalid);
        return;
      }
      yield event;
      if (event.kind === 'message' || (event.kind === 'status' && event.final)) return;
    }
  } catch {
    yield {
      kind: 'error',
      error: failure('A2A_UNREACHABLE', 'unreachable', 'the stream broke off').error,
    };
    return;
  } finally {
    await body.cancel().catch(() => {});
  }
  yield badAnswer('the stream ended before a final state');
}
