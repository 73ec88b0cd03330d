/**
 * @module lib/a2a/jsonrpc-binding — the A2A JSON-RPC endpoint (`POST /a2a`) as a plain `Request -> Response`
 * function: it reads the version (`A2A-Version`, missing = 0.3), parses the envelope, calls the
 * task engine and answers in that version's wire form, streaming where the method streams.
 */

import type { SendResult, TaskEngine } from './engine.ts';
import { a2aError, isA2AError, rpcStreamEnd, type A2AError } from './errors.ts';
import {
  jsonResponse,
  parseBody,
  readBodyLimited,
  refusedContentType,
  rpcError,
  rpcResult,
  type Envelope,
  type JsonRpcId,
  type JsonRpcRequest,
} from './jsonrpc.ts';
import {
  V1_METHODS,
  operationSteps,
  v1Operations,
  type Operation,
  type Outcome,
} from './operations.ts';
import { sseErrorResponse, sseResponse, type SseOptions } from './sse.ts';
import type { ProtocolVersion, PushConfig } from './types.ts';
import * as v03 from './wire-v03.ts';
import type { Log } from '../log.ts';
import { ANONYMOUS, ownerKey, type Principal } from '../auth/principal.ts';

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

const V03_METHODS = [
  'message/send',
  'message/stream',
  'tasks/get',
  'tasks/cancel',
  'tasks/resubscribe',
  'tasks/pushNotificationConfig/set',
  'tasks/pushNotificationConfig/get',
  'tasks/pushNotificationConfig/list',
  'tasks/pushNotificationConfig/delete',
  'agent/getAuthenticatedExtendedCard',
] as const;
const STREAMING = new Set([
  'SendStreamingMessage',
  'SubscribeToTask',
  'message/stream',
  'tasks/resubscribe',
]);

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
  const { engine } = opts;
  const maxBody = opts.maxBodyBytes ?? 4 * 1024 * 1024;
  const maxBatch = opts.maxBatch ?? 64;
  const { send, stream, subscribe, value } = operationSteps(engine, opts.streaming);
  const sendResultV03 = (r: SendResult) =>
    'task' in r ? v03.taskToV03(r.task) : v03.messageToV03(r.message);
  const v1Methods = v1Operations(engine, opts.streaming);

  const v03Methods: Record<(typeof V03_METHODS)[number], Operation> = {
    'message/send': (p, _n, caller) =>
      send(v03.parseSendParamsV03(p), '0.3', caller, sendResultV03),
    'message/stream': (p, n, caller) =>
      stream(v03.parseSendParamsV03(p), '0.3', n, caller, v03.eventToV03),
    'tasks/get': async (p, _n, caller) => {
      const q = v03.parseTaskQueryV03(p);
      return isA2AError(q)
        ? q
        : value(await engine.getTask(q.id, q.historyLength, caller), v03.taskToV03);
    },
    'tasks/cancel': async (p, _n, caller) => {
      const q = v03.parseTaskQueryV03(p);
      return isA2AError(q) ? q : value(await engine.cancel(q.id, caller), v03.taskToV03);
    },
    'tasks/resubscribe': (p, _n, caller) =>
      subscribe(v03.parseTaskQueryV03(p), caller, v03.eventToV03),
    'tasks/pushNotificationConfig/set': async (p, _n, caller) => {
      const c = v03.parseSetPushV03(p);
      return isA2AError(c) ? c : value(await engine.setPush(c, '0.3', caller), v03.pushConfigToV03);
    },
    'tasks/pushNotificationConfig/get': async (p, _n, caller) => {
      const r = v03.parsePushRefV03(p, false);
      return isA2AError(r)
        ? r
        : value(await engine.getPush(r.taskId, r.id, caller), v03.pushConfigToV03);
    },
    'tasks/pushNotificationConfig/list': async (p, _n, caller) => {
      const r = v03.parsePushRefV03(p, false);
      return isA2AError(r)
        ? r
        : value(await engine.listPush(r.taskId, caller), (cs: PushConfig[]) =>
            cs.map(v03.pushConfigToV03),
          );
    },
    'tasks/pushNotificationConfig/delete': async (p, _n, caller) => {
      const r = v03.parsePushRefV03(p, true);
      return isA2AError(r)
        ? r
        : value(await engine.deletePush(r.taskId, r.id!, caller), () => null);
    },
    'agent/getAuthenticatedExtendedCard': () =>
      a2aError('UNSUPPORTED_OPERATION', 'This agent has no extended agent card'),
  };

  function lookup(method: string, version: ProtocolVersion): Operation | A2AError {
    const table: Record<string, Operation> = version === '1.0' ? v1Methods : v03Methods;
    if (Object.hasOwn(table, method)) return table[method]!;
    if (version === '0.3' && (V1_METHODS as readonly string[]).includes(method))
      return a2aError(
        'VERSION_NOT_SUPPORTED',
        `${method} is an A2A 1.0 method, but the request did not send A2A-Version: 1.0 (a missing header means 0.3)`,
      );
    if (version === '1.0' && (V03_METHODS as readonly string[]).includes(method))
      return a2aError(
        'METHOD_NOT_FOUND',
        `${method} is an A2A 0.3 method; with A2A-Version: 1.0 use the 1.0 names (e.g. SendMessage)`,
      );
    return a2aError('METHOD_NOT_FOUND', `Method not found: ${method.slice(0, 128)}`);
  }

  async function run(
    req: JsonRpcRequest,
    version: ProtocolVersion,
    inBatch: boolean,
    caller: Principal,
  ): Promise<Outcome> {
    const method = lookup(req.method, version);
    if (isA2AError(method)) return method;
    if (inBatch && STREAMING.has(req.method))
      return a2aError('INVALID_REQUEST', `${req.method} streams and cannot be part of a batch`);
    try {
      return await method(req.params, req.notification, caller);
    } catch (e) {
      opts.log('error', 'a2a method failed', {
        method: req.method,
        error: (e as Error)?.message ?? String(e),
      });
      return a2aError('INTERNAL_ERROR');
    }
  }

  function answer(id: JsonRpcId, outcome: Outcome, version: ProtocolVersion): object {
    if (isA2AError(outcome)) return rpcError(id, outcome, version);
    return rpcResult(id, 'result' in outcome ? outcome.result : null);
  }

  async function runEnvelope(
    e: Envelope,
    version: ProtocolVersion,
    caller: Principal,
  ): Promise<object | null> {
    if (!e.ok) return rpcError(e.id, e.error, version);
    const outcome = await run(e.request, version, true, caller);
    return e.request.notification ? null : answer(e.request.id, outcome, version);
  }

  /** `caller`: who the node authenticated the request as (anonymous unless given). */
  return async function handleA2A(req: Request, caller: Principal = ANONYMOUS): Promise<Response> {
    const version = requestedVersion(req.headers.get('a2a-version'));
    const wireVersion: ProtocolVersion = isA2AError(version) ? '1.0' : version;
    // Refused before the body is read or parsed: a text/plain body is not JSON-RPC.
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
    if (isA2AError(version)) {
      const id = body.kind === 'single' && body.envelope.ok ? body.envelope.request.id : null;
      return jsonResponse(rpcError(id, version, '1.0'));
    }
    if (body.kind === 'batch') {
      const answers = (
        await Promise.all(body.envelopes.map((e) => runEnvelope(e, version, caller)))
      ).filter((a) => a !== null);
      return answers.length ? jsonResponse(answers) : new Response(null, { status: 204 });
    }
    const e = body.envelope;
    if (!e.ok) return jsonResponse(rpcError(e.id, e.error, version));
    const outcome = await run(e.request, version, false, caller);
    if (e.request.notification) {
      if (!isA2AError(outcome) && 'stream' in outcome) outcome.stream.close();
      return new Response(null, { status: 204 });
    }
    if (!isA2AError(outcome) && 'stream' in outcome) {
      const { stream: sub, frame } = outcome;
      const id = e.request.id;
      return sseResponse(
        sub,
        (ev) => rpcResult(id, frame(ev)),
        () => sub.close(),
        {
          ...opts.sse,
          owner: ownerKey(caller),
          ending: (code, message) => rpcStreamEnd(id, version, code, message),
        },
      );
    }
    // A v0.3 resubscribe always answers a stream (as the SDK does), its refusal an error event.
    if (isA2AError(outcome) && version === '0.3' && e.request.method === 'tasks/resubscribe')
      return sseErrorResponse(answer(e.request.id, outcome, version));
    // A lone request refused for want of credentials is a transport-level 401 (what an SDK's
    // authentication handler reacts to); inside a batch it stays an element's error.
    if (isA2AError(outcome) && outcome.code === 'UNAUTHENTICATED')
      return challenge(jsonResponse(answer(e.request.id, outcome, version), 401));
    return jsonResponse(answer(e.request.id, outcome, version));
  };
}

/** Adds the `WWW-Authenticate` challenge a 401 carries (RFC 9110), naming the bearer scheme. */
export function challenge(res: Response): Response {
  res.headers.set('WWW-Authenticate', 'Bearer realm="lume-a2a"');
  return res;
}
