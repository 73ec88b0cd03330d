/**
 * @module lib/a2a/binding/shared — what the three A2A bindings (JSON-RPC, HTTP+JSON, gRPC) and the
 * node's caller check share, so no binding imports another's files: the `A2A-Version` reading,
 * the 401 challenge, the bounded body read and JSON parse, and JSON answers that carry the error
 * code they render to the request metrics.
 */

import { MAX_JSON_DEPTH, MAX_JSON_VALUES, parseJsonBody, readBodyBytes } from '../../body.ts';
import { codedJsonResponse } from '../../metrics/answer-code.ts';
import { a2aError, type A2AError } from '../errors.ts';
import type { ProtocolVersion } from '../types.ts';

/** Reads `A2A-Version`: empty or missing means 0.3 (A2A versioning); patch numbers are tolerated. */
export function requestedVersion(header: string | null): ProtocolVersion | A2AError {
  const raw = (header ?? '').trim();
  if (raw === '') return '0.3';
  const m = /^(\d+)\.(\d+)(?:\.\d+)?$/.exec(raw);
  const v = m ? `${Number(m[1])}.${Number(m[2])}` : '';
  if (v === '1.0' || v === '0.3') return v;
  // 1.1 (the dev-1.1 branch) is the 1.0 wire plus members: answered as 1.0 with them.
  if (v === '1.1') return '1.0';
  return a2aError(
    'VERSION_NOT_SUPPORTED',
    `A2A version '${raw.slice(0, 32)}' is not supported; this node speaks 1.0 (with 1.1's generation) and 0.3`,
  );
}

/** Whether the request asks for A2A 1.1, whose answers carry its added members (`generation`). */
export function asks11(header: string | null): boolean {
  const m = /^\s*1\.(\d+)(?:\.\d+)?\s*$/.exec(header ?? '');
  return m !== null && Number(m[1]) === 1;
}

/** Adds the `WWW-Authenticate` challenge a 401 carries (RFC 9110), naming the bearer scheme. */
export function challenge(res: Response): Response {
  res.headers.set('WWW-Authenticate', 'Bearer realm="lume-a2a"');
  return res;
}

/**
 * A JSON answer, and the error code it renders (null: none) for the request metrics
 * (lib/metrics/answer-code.ts): the binding says what it rendered, nothing reads it back.
 */
export function jsonResponse(body: unknown, status: number, code: string | null): Response {
  return codedJsonResponse(body, status, code);
}

/** Bytes as UTF-8 text, without a copy of the bytes. */
function utf8(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');
}

/**
 * The body as text, refusing more than `limit` bytes (`null` when over). `read`: the bytes
 * already read (a signed request's, checked by the node), used instead of the request's body.
 */
export async function readBodyLimited(
  req: Request,
  limit: number,
  read?: Uint8Array,
): Promise<string | null> {
  const bytes = read ?? (await readBodyBytes(req, limit));
  return bytes === undefined || bytes.byteLength > limit ? null : utf8(bytes);
}

/**
 * A request body's JSON under the depth and value bounds (counted over the text, so a body of
 * empty items is refused before one object is built), or the A2A error that refuses it.
 */
export function parseRequestJson(text: string): { ok: true; doc: unknown } | A2AError {
  const parsed = parseJsonBody(text, MAX_JSON_DEPTH, MAX_JSON_VALUES);
  if (parsed.ok) return { ok: true, doc: parsed.result };
  if (parsed.error.code === 'BODY_TOO_MANY_VALUES')
    return a2aError(
      'INVALID_REQUEST',
      `The request holds more than ${MAX_JSON_VALUES} JSON values (items and members)`,
    );
  return parsed.error.code === 'BODY_TOO_DEEP'
    ? a2aError('INVALID_REQUEST', `The request nests JSON deeper than ${MAX_JSON_DEPTH} levels`)
    : a2aError('PARSE_ERROR');
}
