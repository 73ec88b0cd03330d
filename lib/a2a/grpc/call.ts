/**
 * @module lib/a2a/grpc/call — one gRPC call of `lf.a2a.v1.A2AService` on an HTTP/2 stream: checks
 * the method, `a2a-version` and the caller's proof from the metadata, reads the one request
 * message, runs the same v1.0 operation the JSON-RPC and HTTP+JSON bindings run (in the call's
 * `traceparent` context; lib/a2a/grpc/call-run.ts), and answers one message or a server stream,
 * ending with trailers that carry the status (lib/a2a/grpc/call-state.ts, status.ts).
 */

import { echoOf, negotiateExtensions, withExtensions } from '../extensions.ts';
import type { IncomingHttpHeaders, ServerHttp2Stream } from 'node:http2';
import { ownerKey } from '../../auth/principal.ts';
import { contextFromHeaders, withTrace } from '../../telemetry/trace-context.ts';
import { a2aError, isA2AError, type A2AError } from '../errors.ts';
import { asks11, requestedVersion } from '../binding/shared.ts';
import { failCall, runCall } from './call-run.ts';
import { openCall, type CallDeps } from './call-state.ts';
import { decodeMessage } from './decode.ts';
import { RequestReader } from './frames.ts';
import { A2A_METHODS, A2A_SCHEMA, type Method } from '../proto/schema.ts';
import { fromA2AError, grpcFailure, streamEndFailure, type GrpcFailure } from './status.ts';

export type { CallDeps } from './call-state.ts';

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

/** How many `authorization` entries the metadata held (HTTP/2 keeps only the first in `headers`). */
const authorizations = (raw: readonly string[]): number =>
  raw.filter((v, i) => i % 2 === 0 && v.toLowerCase() === 'authorization').length;

/** Why a call is refused before its message is read (unknown method, wrong version, two proofs), if it is. */
function refusalOf(
  method: Method | undefined,
  path: string,
  metadata: Headers,
  raw: readonly string[],
): GrpcFailure | undefined {
  if (!method) return grpcFailure('GRPC_UNKNOWN_METHOD', `No method ${path.slice(0, 128)}`);
  // Which of two proofs counts is not the server's to guess, as HTTP refuses two Authorization headers.
  if (authorizations(raw) > 1)
    return fromA2AError(
      a2aError('UNAUTHENTICATED', 'The call carries more than one authorization entry; send one'),
    );
  const bad = checkVersion(metadata);
  return bad ? fromA2AError(bad) : undefined;
}

export function serveCall(
  stream: ServerHttp2Stream,
  headers: IncomingHttpHeaders,
  deps: CallDeps,
  rawHeaders: readonly string[] = [],
): void {
  const method: Method | undefined = A2A_METHODS.get(String(headers[':path'] ?? ''));
  const call = openCall(stream, method?.name ?? 'other', deps);
  const type = String(headers['content-type'] ?? '');
  if (headers[':method'] !== 'POST' || !/^application\/grpc(\+proto)?(;|$)/.test(type)) {
    // Not a gRPC call at all: plain HTTP refuses it (gRPC over HTTP/2 says 415).
    stream.respond({ ':status': headers[':method'] === 'POST' ? 415 : 405 }, { endStream: true });
    return;
  }
  const metadata = metadataOf(headers);
  const activated = negotiateExtensions(metadata.get('a2a-extensions'), deps.extensions ?? []);
  const refusal =
    refusalOf(method, String(headers[':path']), metadata, rawHeaders) ??
    (isA2AError(activated) ? fromA2AError(activated) : undefined);
  if (refusal || isA2AError(activated)) {
    call.finish(refusal);
    stream.resume();
    return;
  }
  call.echo = echoOf(activated);
  const m = method!;
  let reader: RequestReader | undefined = new RequestReader(deps.maxMessageBytes);
  // A message that never finishes would hold its bytes and its stream for ever.
  const deadline = setTimeout(() => {
    reader = undefined;
    call.finish(grpcFailure('GRPC_MESSAGE_TIMEOUT'));
  }, deps.messageMs);
  // Aborted when the stream closes: a held long-poll whose client went away frees its slot.
  const gone = new AbortController();
  stream.on('close', () => {
    clearTimeout(deadline);
    gone.abort();
  });
  stream.on('data', (chunk: Uint8Array) => {
    if (call.done || !reader) return;
    const bad = reader.push(chunk);
    if (!bad) return;
    reader = undefined;
    call.finish(bad);
  });
  // Who calls may take a key fetch (an issuer's token): the message is read meanwhile, bounded
  // as always, and nothing runs until both are known.
  const identified = Promise.resolve(deps.identify(metadata));
  // A refused caller is answered at once; its message is not read.
  void identified.then(
    (who) => {
      if (!isA2AError(who) || call.done) return;
      reader = undefined;
      clearTimeout(deadline);
      call.finish(fromA2AError(who));
      stream.resume();
    },
    (e: unknown) => failCall(call, e),
  );
  stream.on('end', () => {
    clearTimeout(deadline);
    if (call.done || !reader) return;
    const bytes = reader.message();
    reader = undefined;
    void identified.then((who) => {
      if (call.done || isA2AError(who)) return;
      if (!(bytes instanceof Uint8Array)) return call.finish(bytes);
      const full = m.serverStreaming ? deps.streams?.full(ownerKey(who)) : undefined;
      if (full) return call.finish(streamEndFailure(full, undefined, 'RESOURCE_EXHAUSTED'));
      const decoded = decodeMessage(A2A_SCHEMA, m.input, bytes);
      if (!decoded.ok) return call.finish(grpcFailure(decoded.error.code, decoded.error.message));
      void withTrace(contextFromHeaders(metadata), () =>
        withExtensions(activated, () =>
          runCall(call, m, decoded.result, who, {
            lastEventId: metadata.get('last-event-id'),
            lastGeneration: metadata.get('a2a-last-generation'),
            asks11: asks11(metadata.get('a2a-version')),
            signal: gone.signal,
          }),
        ).catch((e: unknown) => failCall(call, e)),
      );
    });
  });
}

/** Largest request message by default: 4 MiB, gRPC's own default. */
export const GRPC_MAX_MESSAGE_BYTES = 4 * 1024 * 1024;
