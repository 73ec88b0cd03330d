/**
 * @module lib/a2a/grpc/call-run — a gRPC call's work once its request is read: runs the v1.0
 * operation and answers one message, or pumps the task's events as a server stream while the
 * task advances, bounded by what the reader may fall behind.
 */

import { ownerKey, type Principal } from '../../auth/principal.ts';
import { a2aError, isA2AError } from '../errors.ts';
import type { Outcome, V1Method } from '../operations.ts';
import type { GrpcCall } from './call-state.ts';
import { EncodeError, encodeMessage } from './encode.ts';
import { frame } from './frames.ts';
import { A2A_SCHEMA, type Method } from '../proto/schema.ts';
import { fromA2AError, streamEndFailure, type GrpcFailure } from './status.ts';
import type { RequestContext } from '../wire/cursor.ts';

/** Logs a call that threw and ends it with INTERNAL. */
export function failCall(call: GrpcCall, e: unknown): void {
  call.deps.log('error', 'a2a grpc call failed', {
    method: call.label,
    error: (e as Error)?.message ?? String(e),
  });
  call.finish(fromA2AError(a2aError('INTERNAL_ERROR')));
}

/** Runs the method on the decoded request for `who` and answers. */
export async function runCall(
  call: GrpcCall,
  m: Method,
  params: unknown,
  who: Principal,
  ctx?: RequestContext,
): Promise<void> {
  const outcome: Outcome = await call.deps.operations[m.name as V1Method](params, false, who, ctx);
  if (call.done) {
    if (!isA2AError(outcome) && 'stream' in outcome) outcome.stream.close();
    return;
  }
  if (isA2AError(outcome)) return call.finish(fromA2AError(outcome));
  if ('result' in outcome) {
    let bytes: Uint8Array;
    try {
      bytes = frame(encodeMessage(A2A_SCHEMA, m.output, outcome.result));
    } catch (e) {
      if (e instanceof EncodeError) return failCall(call, e);
      throw e;
    }
    return call.finish(undefined, bytes);
  }
  await pump(call, m, outcome, ownerKey(who));
}

/** A server stream: each event as one message while the task advances, then the trailers. */
async function pump(
  call: GrpcCall,
  m: Method,
  outcome: Extract<Outcome, { stream: unknown }>,
  owner: string,
): Promise<void> {
  const { stream, deps } = call;
  const { stream: sub, frame: toEvent } = outcome;
  call.respond();
  const closeGauge = deps.metrics.streamOpened(call.label);
  const stop = (failure?: GrpcFailure) => {
    unregister();
    sub.close();
    closeGauge();
    call.finish(failure);
  };
  // Counted with the SSE streams, under the same per-principal bound.
  const unregister =
    deps.streams?.add((code, message) => stop(streamEndFailure(code, message)), owner) ??
    (() => {});
  stream.on('close', () => {
    call.done = true;
    stop();
  });
  for await (const event of sub) {
    if (call.done) break;
    stream.write(frame(encodeMessage(A2A_SCHEMA, m.output, toEvent(event))));
    if (stream.writableLength > deps.maxQueuedBytes) {
      stop(
        streamEndFailure(
          'STREAM_TOO_SLOW',
          `The stream was ended: the client fell more than ${deps.maxQueuedBytes} bytes behind`,
        ),
      );
      break;
    }
  }
  stop();
}
