/**
 * @module lib/a2a/jsonrpc/binding — the A2A JSON-RPC endpoint (`POST /a2a`) as a plain `Request -> Response`
 * function: it reads the version (`A2A-Version`, missing = 0.3), parses the envelope, calls the
 * task engine and answers in that version's wire form, streaming where the method streams. The
 * methods run through lib/a2a/jsonrpc/dispatch.ts on the node's one operation table
 * (lib/a2a/operation-table.ts).
 */

import { a2aError, isA2AError, rpcStreamEnd, type A2AError } from '../errors.ts';
import {
  parseBody,
  refusedContentType,
  rpcError,
  rpcResult,
  type JsonRpcRequest,
  type ParsedBody,
} from './envelope.ts';
import { answer, codeOf, createDispatch, type Dispatch } from './dispatch.ts';
import {
  asks11,
  challenge,
  jsonResponse,
  readBodyLimited,
  requestedVersion,
} from '../binding/shared.ts';
import type { OperationTable } from '../operation-table.ts';
import { sseErrorResponse, sseResponse, type SseOptions } from '../../sse/sse.ts';
import type { ProtocolVersion } from '../types.ts';
import type { Log } from '../../log.ts';
import { ANONYMOUS, ownerKey, type Principal } from '../../auth/principal.ts';
import { eventId, type RequestContext } from '../wire/cursor.ts';

export interface A2AHandlerOptions {
  /** The node's operation table, shared with the other bindings. */
  operations: OperationTable;
  log: Log;
  /** Largest request body accepted, in bytes. */
  maxBodyBytes?: number;
  maxBatch?: number;
  /** Queue bound and shutdown registry of the streams this handler answers. */
  sse?: Omit<SseOptions, 'ending'>;
}

/**
 * The handler: `caller` is who the node authenticated the request as (anonymous unless given);
 * `body`, the request's bytes when the node has read them already (to check a signature).
 */
export type A2AHandler = (req: Request, caller?: Principal, body?: Uint8Array) => Promise<Response>;

export function createA2AHandler(opts: A2AHandlerOptions): A2AHandler {
  const maxBody = opts.maxBodyBytes ?? 4 * 1024 * 1024;
  const maxBatch = opts.maxBatch ?? 64;
  const dispatch10 = createDispatch(opts.operations, opts.log);
  // A2A-Version 1.1: the same operations, their answers with 1.1's members.
  const dispatch11 = createDispatch(
    { ...opts.operations, '1.0': opts.operations['1.1'] },
    opts.log,
  );

  return async function handleA2A(req, caller = ANONYMOUS, bytes) {
    const version = requestedVersion(req.headers.get('a2a-version'));
    const dispatch = asks11(req.headers.get('a2a-version')) ? dispatch11 : dispatch10;
    const wireVersion: ProtocolVersion = isA2AError(version) ? '1.0' : version;
    const body = await readBody(req, bytes, { maxBody, maxBatch }, wireVersion);
    if (body instanceof Response) return body;
    if (isA2AError(version)) {
      const id = body.kind === 'single' && body.envelope.ok ? body.envelope.request.id : null;
      return jsonResponse(rpcError(id, version, '1.0'), 200, version.code);
    }
    if (body.kind === 'batch') {
      const answers = (
        await Promise.all(body.envelopes.map((e) => dispatch.runEnvelope(e, version, caller)))
      ).filter((a) => a !== null);
      // A batch's answer carries one code per element; the metrics count none for it.
      return answers.length
        ? jsonResponse(answers, 200, null)
        : new Response(null, { status: 204 });
    }
    const e = body.envelope;
    if (!e.ok) return jsonResponse(rpcError(e.id, e.error, version), 200, e.error.code);
    const ctx = {
      lastEventId: req.headers.get('last-event-id'),
      asks11: asks11(req.headers.get('a2a-version')),
      signal: req.signal,
    };
    return answerOne(dispatch, e.request, version, caller, opts.sse, ctx);
  };
}

/** The JSON-RPC error answer to a request refused before its envelope is read. */
const refused = (err: A2AError, version: ProtocolVersion, status = 200) =>
  jsonResponse(rpcError(null, err, version), status, err.code);

/**
 * The request's envelopes, or the answer that refuses them: a text/plain body is refused before
 * it is read, a body over the bound before it is parsed.
 */
async function readBody(
  req: Request,
  bytes: Uint8Array | undefined,
  bounds: { maxBody: number; maxBatch: number },
  wireVersion: ProtocolVersion,
): Promise<Exclude<ParsedBody, { kind: 'error' }> | Response> {
  const badType = refusedContentType(req.headers.get('content-type'));
  if (badType) return refused(badType, wireVersion);
  let text: string | null;
  try {
    text = await readBodyLimited(req, bounds.maxBody, bytes);
  } catch {
    return refused(a2aError('INVALID_REQUEST', 'Request body could not be read'), wireVersion, 400);
  }
  if (text === null)
    return refused(
      a2aError('INVALID_REQUEST', `Request body is larger than ${bounds.maxBody} bytes`),
      wireVersion,
      413,
    );
  const body = parseBody(text, bounds.maxBatch);
  if (body.kind === 'error') return refused(body.error, wireVersion);
  return body;
}

/** The answer to a lone request: nothing for a notification, a stream, or one JSON-RPC answer. */
async function answerOne(
  dispatch: Dispatch,
  request: JsonRpcRequest,
  version: ProtocolVersion,
  caller: Principal,
  sse: A2AHandlerOptions['sse'],
  ctx: RequestContext,
): Promise<Response> {
  const outcome = await dispatch.run(request, version, false, caller, ctx);
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
      eventId,
    );
  }
  // A v0.3 resubscribe always answers a stream (as the SDK does), its refusal an error event.
  if (isA2AError(outcome) && version === '0.3' && request.method === 'tasks/resubscribe')
    return sseErrorResponse(answer(id, outcome, version));
  // A lone request refused for want of credentials is a transport-level 401 (what an SDK's
  // authentication handler reacts to); inside a batch it stays an element's error.
  if (isA2AError(outcome) && outcome.code === 'UNAUTHENTICATED')
    return challenge(jsonResponse(answer(id, outcome, version), 401, outcome.code));
  return jsonResponse(answer(id, outcome, version), 200, codeOf(outcome));
}
