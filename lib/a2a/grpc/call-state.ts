/**
 * @module lib/a2a/grpc/call-state — what one gRPC call's parts share: its dependencies, its
 * stream and method label, whether it has ended, and the two steps every ending goes through
 * (the answer's headers once, with the call's metrics; the trailers that carry the status).
 */

import type { AgentExtension } from '../card/types.ts';
import { constants, type ServerHttp2Stream } from 'node:http2';
import type { Principal } from '../../auth/principal.ts';
import type { Log } from '../../log.ts';
import type { A2AError } from '../errors.ts';
import type { Operation, V1Method } from '../operations.ts';
import type { SseStreams } from '../../sse/sse.ts';
import type { GrpcMetrics } from './metrics.ts';
import { failureTrailers, type GrpcFailure } from './status.ts';

export interface CallDeps {
  operations: Readonly<Record<V1Method, Operation>>;
  log: Log;
  metrics: GrpcMetrics;
  /** Who the call speaks for, from its metadata (the node's access policy), or the refusal. */
  identify: (metadata: Headers) => Principal | A2AError | Promise<Principal | A2AError>;
  maxMessageBytes: number;
  /** Bytes a stream's reader may fall behind before the stream is ended. */
  maxQueuedBytes: number;
  /** Time a call has to send its whole request message before it ends DEADLINE_EXCEEDED. */
  messageMs: number;
  /** Time an ended call's reader has to take what is left before the stream is cut. */
  finalGraceMs: number;
  streams?: SseStreams;
  /** The extensions the card declares: `a2a-extensions` is negotiated against them (lib/a2a/extensions.ts). */
  extensions?: readonly AgentExtension[];
}

/** One call in progress; made by `openCall`. */
export interface GrpcCall {
  readonly stream: ServerHttp2Stream;
  readonly deps: CallDeps;
  /** The method's name, or `other`, as metrics and logs name it. */
  readonly label: string;
  /** Whether the call has ended or its client went away; nothing more is sent once it has. */
  done: boolean;
  /** The extensions the call activated, sent back in the answer's `a2a-extensions` metadata. */
  echo?: string;
  /** Sends the answer's headers, at most once, and counts the call with its outcome. */
  respond(failure?: GrpcFailure): void;
  /** Ends the call: OK, or the failure's status; at most once. `last`: a final message, sent with the end. */
  finish(failure?: GrpcFailure, last?: Uint8Array): void;
}

const CANCEL = constants.NGHTTP2_CANCEL;

const ANSWER_HEADERS = {
  ':status': 200,
  'content-type': 'application/grpc',
  'grpc-accept-encoding': 'identity',
};

/** Starts the bookkeeping of a call on `stream`: the trailers go out when the stream wants them. */
export function openCall(stream: ServerHttp2Stream, label: string, deps: CallDeps): GrpcCall {
  const t0 = performance.now();
  let responded = false;
  let trailers: Record<string, string> = { 'grpc-status': '0' };
  let grace: ReturnType<typeof setTimeout> | undefined;
  stream.on('error', () => {});
  stream.on('close', () => clearTimeout(grace));
  stream.on('wantTrailers', () => {
    if (!stream.destroyed) stream.sendTrailers(trailers);
  });
  const call: GrpcCall = {
    stream,
    deps,
    label,
    done: false,
    respond(failure) {
      if (responded || stream.destroyed) return;
      responded = true;
      const headers = call.echo
        ? { ...ANSWER_HEADERS, 'a2a-extensions': call.echo }
        : ANSWER_HEADERS;
      stream.respond(headers, { waitForTrailers: true });
      deps.metrics.answered(
        label,
        failure?.status ?? 'OK',
        failure?.reason,
        (performance.now() - t0) / 1000,
      );
    },
    finish(failure, last) {
      if (call.done) return;
      call.done = true;
      call.respond(failure);
      if (failure) trailers = failureTrailers(failure);
      if (stream.destroyed) return;
      // A reader that opens no flow-control window would hold the stream and its bytes for ever.
      // (CANCEL: Bun's close() with NO_ERROR waits behind the data the window holds back.)
      grace = setTimeout(() => {
        if (stream.destroyed) return;
        deps.metrics.cut('stalled');
        stream.close(CANCEL);
      }, deps.finalGraceMs);
      if (last) stream.end(last);
      else stream.end();
    },
  };
  return call;
}
