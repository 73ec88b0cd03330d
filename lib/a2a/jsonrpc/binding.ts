/**
 * @module lib/a2a/jsonrpc/binding — the A2A JSON-RPC endpoint (`POST /a2a`) as a plain `Request -> Response`
 * function: it reads the version (`A2A-Version`, missing = 0.3), parses the envelope, calls the
 * task engine and answers in that version's wire form, streaming where the method streams. The
 * methods run through lib/a2a/jsonrpc/dispatch.ts (tables in operations.ts, operations-v03.ts).
 */

import type { TaskEngine } from '../engine/engine.ts';
import { a2aError, isA2AError, rpcStreamEnd, type A2AError } from '../errors.ts';
import {
  jsonResponse,
  parseBody,
  readBodyLimited,
  refusedContentType,
  rpcError,
  rpcResult,
  type JsonRpcRequest,
  type ParsedBody,
} from './envelope.ts';
import { answer, createDispatch, type Dispatch } from './dispatch.ts';
import { sseErrorResponse, sseResponse, type SseOptions } from '../../sse/sse.ts';
import type { ProtocolVersion } from '../types.ts';
import type { Log } from '../../log.ts';
import { ANONYMOUS, ownerKey, type Principal } from '../../auth/principal.ts';

export interface A2AHandlerOptions {
  engine: TaskEngine;
  log: Log;
  streaming: boolean;
  /** Largest request body accepted, in bytes. */
  maxBodyBytes?: number;
  maxBatch?: number;
  /** Queue bound and shutdown registry of the streams this handler answers. */
  sse?: Omit<SseOptions, 'ending'>;
}

/** Reads `A2A-Version`: empty or missing means 0.3 (A2A versioning); patch numbers are tolerated. */
export function requestedVersion(header: string | null): ProtocolVersion | A2AError {
  const raw = (header ?? '').trim();
  if (raw === '') return '0.3';
  const m = /^(\d+)\.(\d+)(?:\.\d+)?$/.exec(raw);
  const v = m ? `${Number(m[1])}.${Number(m[2])}` : '';
  if (v === '1.0' || v === '0.3') return v;
  return a2aError(
    'VERSION_NOT_SUPPORTED',
    `A2A version '${raw.slice(0, 32)}' is not supported; this node speaks 1.0 and 0.3`,
  );
}

export function createA2AHandler(
  opts: A2AHandlerOptions,
): (req: Request, caller?: Principal) => Promise<Response> {
  const maxBody = opts.maxBodyBytes ?? 4 * 1024 * 1024;
  const maxBatch = opts.maxBatch ?? 64;
  const dispatch = createDispatch(opts.engine, opts.streaming, opts.log);

  /** `caller`: who the node authenticated the request as (anonymous unless given). */
  return async function handleA2A(req: Request, caller: Principal = ANONYMOUS): Promise<Response> {
    const version = requestedVersion(req.headers.get('a2a-version'));
    const wireVersion: ProtocolVersion = isA2AError(version) ? '1.0' : version;
    const body = await readBody(req, maxBody, maxBatch, wireVersion);
    if (body instanceof Response) return body;
    if (isA2AError(version)) {
      const id = body.kind === 'single' && body.envelope.ok ? body.envelope.request.id : null;
      return jsonResponse(rpcError(id, version, '1.0'));
    }
    if (body.kind === 'batch') {
      const answers = (
        await Promise.all(body.envelopes.map((e) => dispatch.runEnvelope(e, version, caller)))
      ).filter((a) => a !== null);
      return answers.length ? jsonResponse(answers) : new Response(null, { status: 204 });
    }
    const e = body.envelope;
    if (!e.ok) return jsonResponse(rpcError(e.id, e.error, version));
    return answerOne(dispatch, e.request, version, caller, opts.sse);
  };
}

/**
 * The request's envelopes, or the answer that refuses them: a text/plain body is refused before
 * it is read, a body over the bound before it is parsed.
 */
async function readBody(
  req: Request,
  maxBody: number,
  maxBatch: number,
  wireVersion: ProtocolVersion,
): Promise<Exclude<ParsedBody, { kind: 'error' }> | Response> {
  const badType = refusedContentType(req.headers.get('content-type'));
  if (badType) return jsonResponse(rpcError(null, badType, wireVersion));
  let text: string | null;
  try {
    text = await readBodyLimited(req, maxBody);
  } catch {
    return jsonResponse(
      rpcError(null, a2aError('INVALID_REQUEST', 'Request body could not be read'), wireVersion),
      400,
    );
  }
  if (text === null)
    return jsonResponse(
      rpcError(
        null,
        a2aError('INVALID_REQUEST', `Request body is larger than ${maxBody} bytes`),
        wireVersion,
      ),
      413,
    );
  const body = parseBody(text, maxBatch);
  if (body.kind === 'error') return jsonResponse(rpcError(null, body.error, wireVersion));
  return body;
}

/** The answer to a lone request: nothing for a notification, a stream, or one JSON-RPC answer. */
async function answerOne(
  dispatch: Dispatch,
  request: JsonRpcRequest,
  version: ProtocolVersion,
  caller: Principal,
  sse: A2AHandlerOptions['sse'],
): Promise<Response> {
  const outcome = await dispatch.run(request, version, false, caller);
  if (request.notification) {
    if (!isA2AError(outcome) && 'stream' in outcome) outcome.stream.close();
    return new Response(null, { status: 204 });
  }
  const id = request.id;
  if (!isA2AError(outcome) && 'stream' in outcome) {
    const { stream: sub, frame } = outcome;
    return sseResponse(
      sub,
      (ev) => rpcResult(id, frame(ev)),
      () => sub.close(),
      {
        ...sse,
        owner: ownerKey(caller),
        ending: (code, message) => rpcStreamEnd(id, version, code, message),
      },
    );
  }
  // A v0.3 resubscribe always answers a stream (as the SDK does), its refusal an error event.
  if (isA2AError(outcome) && version === '0.3' && request.method === 'tasks/resubscribe')
    return sseErrorResponse(answer(id, outcome, version));
  // A lone request refused for want of credentials is a transport-level 401 (what an SDK's
  // authentication handler reacts to); inside a batch it stays an element's error.
  if (isA2AError(outcome) && outcome.code === 'UNAUTHENTICATED')
    return challenge(jsonResponse(answer(id, outcome, version), 401));
  return jsonResponse(answer(id, outcome, version));
}

/** Adds the `WWW-Authenticate` challenge a 401 carries (RFC 9110), naming the bearer scheme. */
export function challenge(res: Response): Response {
  res.headers.set('WWW-Authenticate', 'Bearer realm="lume-a2a"');
  return res;
}
