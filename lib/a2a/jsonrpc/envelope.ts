/**
 * @module lib/a2a/jsonrpc/envelope — JSON-RPC 2.0 envelopes: telling single requests, batches and
 * notifications apart, and building answers (the body is read by lib/a2a/binding/shared.ts).
 */

import { isPlainObject } from '../../json/guards.ts';
import { a2aError, isA2AError, toJsonRpcError, type A2AError } from '../errors.ts';
import { parseRequestJson } from '../binding/shared.ts';
import type { ProtocolVersion } from '../types.ts';

export type JsonRpcId = string | number | null;

export interface JsonRpcRequest {
  method: string;
  params: unknown;
  id: JsonRpcId;
  /** A request without an `id` member: it runs, but nothing is answered. */
  notification: boolean;
}

/** One element of a request body: a well-formed request, or the error to answer in its place. */
export type Envelope =
  | { ok: true; request: JsonRpcRequest }
  | { ok: false; id: JsonRpcId; error: A2AError };

export type ParsedBody =
  | { kind: 'single'; envelope: Envelope }
  | { kind: 'batch'; envelopes: Envelope[] }
  | { kind: 'error'; error: A2AError };

/**
 * The CONTENT_TYPE_NOT_SUPPORTED a request's `Content-Type` earns, or undefined when it is JSON:
 * `application/json` (or A2A's `application/a2a+json`), parameters such as charset ignored. A
 * missing header is refused too: a POST without one is what a page on another site can send
 * without a preflight.
 */
export function refusedContentType(header: string | null): A2AError | undefined {
  const refuse = (why: string) => a2aError('CONTENT_TYPE_NOT_SUPPORTED', why);
  if (header === null || header.trim() === '')
    return refuse('Content-Type must be application/json; the request has none');
  const type = header.split(';')[0]!.trim().toLowerCase();
  if (type === 'application/json' || type === 'application/a2a+json') return undefined;
  return refuse(`Content-Type must be application/json, not '${type.slice(0, 64)}'`);
}

function validId(v: unknown): v is JsonRpcId {
  return v === null || typeof v === 'string' || (typeof v === 'number' && Number.isFinite(v));
}

function envelope(v: unknown): Envelope {
  if (!isPlainObject(v))
    return {
      ok: false,
      id: null,
      error: a2aError('INVALID_REQUEST', 'A JSON-RPC request must be an object'),
    };
  const o = v as Record<string, unknown>;
  const hasId = 'id' in o;
  if (hasId && !validId(o.id))
    return {
      ok: false,
      id: null,
      error: a2aError('INVALID_REQUEST', 'id must be a string, a number or null', 'id'),
    };
  const id: JsonRpcId = hasId ? (o.id as JsonRpcId) : null;
  if (o.jsonrpc !== '2.0')
    return {
      ok: false,
      id,
      error: a2aError('INVALID_REQUEST', 'jsonrpc must be "2.0"', 'jsonrpc'),
    };
  if (typeof o.method !== 'string' || o.method.length === 0 || o.method.length > 128)
    return {
      ok: false,
      id,
      error: a2aError('INVALID_REQUEST', 'method must be a non-empty string', 'method'),
    };
  if (
    'params' in o &&
    (typeof o.params !== 'object' || o.params === null) &&
    o.params !== undefined
  )
    return {
      ok: false,
      id,
      error: a2aError('INVALID_REQUEST', 'params must be an object or an array', 'params'),
    };
  return { ok: true, request: { method: o.method, params: o.params, id, notification: !hasId } };
}

/** Splits a body into envelopes. Within a batch, a repeated id is refused (answers must be matchable). */
export function parseBody(text: string, maxBatch: number): ParsedBody {
  const parsed = parseRequestJson(text);
  if (isA2AError(parsed)) return { kind: 'error', error: parsed };
  const doc = parsed.doc;
  if (!Array.isArray(doc)) return { kind: 'single', envelope: envelope(doc) };
  if (doc.length === 0)
    return { kind: 'error', error: a2aError('INVALID_REQUEST', 'A batch must not be empty') };
  if (doc.length > maxBatch)
    return {
      kind: 'error',
      error: a2aError('INVALID_REQUEST', `A batch holds at most ${maxBatch} requests`),
    };
  const seen = new Set<string>();
  const envelopes = doc.map((item): Envelope => {
    const e = envelope(item);
    if (!e.ok || e.request.notification || e.request.id === null) return e;
    const key = `${typeof e.request.id}:${e.request.id}`;
    if (seen.has(key))
      return {
        ok: false,
        id: e.request.id,
        error: a2aError(
          'INVALID_REQUEST',
          `Duplicate id ${JSON.stringify(e.request.id)} in batch`,
          'id',
        ),
      };
    seen.add(key);
    return e;
  });
  return { kind: 'batch', envelopes };
}

export function rpcResult(id: JsonRpcId, result: unknown): object {
  return { jsonrpc: '2.0', id, result };
}

export function rpcError(id: JsonRpcId, err: A2AError, version: ProtocolVersion): object {
  return { jsonrpc: '2.0', id, error: toJsonRpcError(err, version) };
}
