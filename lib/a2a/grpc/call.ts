/**
 * @module lib/a2a/grpc/call — one gRPC call of `lf.a2a.v1.A2AService` on an HTTP/2 stream: checks
 * the method, `a2a-version` and the caller's proof from the metadata, reads the one request
 * message, runs the same v1.0 operation the JSON-RPC and HTTP+JSON bindings run (in the call's
 * `traceparent` context), and answers one message or a server stream, ending with trailers that
 * carry the status (lib/a2a/grpc/status.ts).
 */

import type { IncomingHttpHeaders, ServerHttp2Stream } from 'node:http2';
import type { Principal } from '../../auth/principal.ts';
import type { Log } from '../../log.ts';
import { LIMITS } from '../../limits.ts';
import { contextFromHeaders, withTrace } from '../../telemetry/trace-context.ts';
import { a2aError, isA2AError, type A2AError } from '../errors.ts';
import { requestedVersion } from '../jsonrpc-binding.ts';
import type { Operation, Outcome, V1Method } from '../operations.ts';
import type { SseStreams } from '../sse.ts';
import { decodeMessage } from './decode.ts';
import { EncodeError, encodeMessage } from './encode.ts';
import { frame, RequestReader } from './frames.ts';
import type { GrpcMetrics } from './metrics.ts';
import { A2A_METHODS, A2A_SCHEMA, type Method } from './schema.ts';
import {
  failureTrailers,
  fromA2AError,
  grpcFailure,
  streamEndFailure,
  type GrpcFailure,
} from './status.ts';

export interface CallDeps {
  operations: Record<V1Method, Operation>;
  log: Log;
  metrics: GrpcMetrics;
  /** Who the call speaks for, from its metadata (the node's access policy), or the refusal. */
  identify: (metadata: Headers) => Principal | A2AError;
  maxMessageBytes: number;
  /** Bytes a stream's reader may fall behind before the stream is ended. */
  maxQueuedBytes: number;
  streams?: SseStreams;
}

/** How long a stream the server ended waits for its reader to take the rest before it is cut. */
const FINAL_GRACE_MS = 30_000;
const ANSWER_HEADERS = {
  ':status': 200,
  'content-type': 'application/grpc',
  'grpc-accept-encoding': 'identity',
};

/** Metadata as a Headers object; pseudo-headers and binary (`-bin`) entries are left out. */
function metadataOf(headers: IncomingHttpHeaders): Headers {
  const out = new Headers();
  for (const [k, v] of Object.entries(headers)) {
    if (k.startsWith(':') || k.endsWith('-bin') || v === undefined) continue;
    for (const one of Array.isArray(v) ? v : [v]) out.append(k, one);
  }
  return out;
}

/** The binding speaks A2A 1.0 only; a missing `a2a-version` means 0.3 (A2A 1.0 §3). */
function checkVersion(metadata: Headers): A2AError | undefined {
  const raw = metadata.get('a2a-version');
  if (requestedVersion(raw) === '1.0') return undefined;
  const asked =
    (raw ?? '').trim() === ''
      ? 'no a2a-version metadata (which means 0.3)'
      : `a2a-version '${raw!.trim().slice(0, 32)}'`;
  return a2aError(
    'VERSION_NOT_SUPPORTED',
    `The call sent ${asked}; the gRPC binding speaks A2A 1.0 only`,
  );
}

export function serveCall(
  stream: ServerHttp2Stream,
  headers: IncomingHttpHeaders,
  deps: CallDeps,
): void {
  const t0 = performance.now();
  const method: Method | undefined = A2A_METHODS.get(String(headers[':path'] ?? ''));
  const label = method?.name ?? 'other';
  let responded = false;
  let done = false;
  let trailers: Record<string, string> = { 'grpc-status': '0' };
  stream.on('error', () => {});
  stream.on('wantTrailers', () => {
    if (!stream.destroyed) stream.sendTrailers(trailers);
  });
  const respond = (failure?: GrpcFailure) => {
    if (responded || stream.destroyed) return;
    responded = true;
    stream.respond(ANSWER_HEADERS, { waitForTrailers: true });
    deps.metrics.answered(
      label,
      failure?.status ?? 'OK',
      failure?.reason,
      (performance.now() - t0) / 1000,
    );
  };
  /** Ends the call: OK, or the failure's status; at most once. `last`: a final message, sent with the end. */
  const finish = (failure?: GrpcFailure, last?: Uint8Array) => {
    if (done) return;
    done = true;
    respond(failure);
    if (failure) trailers = failureTrailers(failure);
    if (stream.destroyed) return;
    if (last) stream.end(last);
    else stream.end();
  };

  const type = String(headers['content-type'] ?? '');
  if (headers[':method'] !== 'POST' || !/^application\/grpc(\+proto)?(;|$)/.test(type)) {
    // Not a gRPC call at all: plain HTTP refuses it (gRPC over HTTP/2 says 415).
    stream.respond({ ':status': headers[':method'] === 'POST' ? 415 : 405 }, { endStream: true });
    return;
  }
  const metadata = metadataOf(headers);
  const refusal = !method
    ? grpcFailure('GRPC_UNKNOWN_METHOD', `No method ${String(headers[':path']).slice(0, 128)}`)
    : (() => {
        const bad = checkVersion(metadata);
        return bad ? fromA2AError(bad) : undefined;
      })();
  const who = refusal ? undefined : deps.identify(metadata);
  if (refusal || isA2AError(who)) {
    finish(refusal ?? fromA2AError(who as A2AError));
    stream.resume();
    return;
  }
  const caller = who as Principal;
  const reader = new RequestReader(deps.maxMessageBytes);
  stream.on('data', (chunk: Uint8Array) => {
    if (done) return;
    const bad = reader.push(chunk);
    if (bad) finish(bad);
  });
  stream.on('end', () => {
    if (done) return;
    const bytes = reader.message();
    if (!(bytes instanceof Uint8Array)) return finish(bytes);
    const decoded = decodeMessage(A2A_SCHEMA, method!.input, bytes);
    if (!decoded.ok) return finish(grpcFailure(decoded.error.code, decoded.error.message));
    void withTrace(contextFromHeaders(metadata), () =>
      run(method!, decoded.result, caller).catch((e: unknown) => fail(e)),
    );
  });

  function fail(e: unknown): void {
    deps.log('error', 'a2a grpc call failed', {
      method: label,
      error: (e as Error)?.message ?? String(e),
    });
    finish(fromA2AError(a2aError('INTERNAL_ERROR')));
  }

  async function run(m: Method, params: unknown, who: Principal): Promise<void> {
    const outcome: Outcome = await deps.operations[m.name as V1Method](params, false, who);
    if (done) {
      if (!isA2AError(outcome) && 'stream' in outcome) outcome.stream.close();
      return;
    }
    if (isA2AError(outcome)) return finish(fromA2AError(outcome));
    if ('result' in outcome) {
      let bytes: Uint8Array;
      try {
        bytes = frame(encodeMessage(A2A_SCHEMA, m.output, outcome.result));
      } catch (e) {
        if (e instanceof EncodeError) return fail(e);
        throw e;
      }
      return finish(undefined, bytes);
    }
    await pump(m, outcome);
  }

  /** A server stream: each event as one message while the task advances, then the trailers. */
  async function pump(m: Method, outcome: Extract<Outcome, { stream: unknown }>): Promise<void> {
    const { stream: sub, frame: toEvent } = outcome;
    respond();
    const closeGauge = deps.metrics.streamOpened(label);
    let grace: ReturnType<typeof setTimeout> | undefined;
    const stop = (failure?: GrpcFailure) => {
      unregister();
      sub.close();
      closeGauge();
      if (failure && !stream.destroyed)
        grace = setTimeout(() => stream.destroyed || stream.close(), FINAL_GRACE_MS);
      finish(failure);
    };
    const unregister =
      deps.streams?.add((code, message) => stop(streamEndFailure(code, message))) ?? (() => {});
    stream.on('close', () => {
      clearTimeout(grace);
      done = true;
      stop();
    });
    for await (const event of sub) {
      if (done) break;
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
}

export const GRPC_DEFAULTS = Object.freeze({
  maxMessageBytes: 4 * 1024 * 1024,
  maxQueuedBytes: LIMITS.sseQueueBytes,
});
