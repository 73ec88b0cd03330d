/**
 * @module lib/a2a/errors — the error value every A2A operation returns instead of throwing, and its
 * rendering on both bindings. The codes themselves are declared once, in lib/errors/a2a.ts.
 */

import { A2A_ERRORS, type A2AErrorReason, OWN_A2A_REASONS } from '../errors/a2a.ts';
import type { Failure } from '../errors/result.ts';
import type { ProtocolVersion } from './types.ts';

export { A2A_ERRORS, type A2AErrorReason };

/**
 * An expected failure, carried as a value: a coded failure (lib/errors/result.ts) whose code is one
 * of the protocol's reasons (lib/errors/a2a.ts). `field` names the offending parameter, if any.
 */
export interface A2AError extends Failure<A2AErrorReason> {}

export function a2aError(reason: A2AErrorReason, message?: string, field?: string): A2AError {
  return {
    code: reason,
    message: message ?? A2A_ERRORS[reason].message,
    ...(field ? { field } : {}),
  };
}

export function isA2AError(value: unknown): value is A2AError {
  return (
    typeof value === 'object' &&
    value !== null &&
    'code' in value &&
    typeof (value as A2AError).code === 'string' &&
    (value as A2AError).code in A2A_ERRORS &&
    typeof (value as A2AError).message === 'string'
  );
}

export interface JsonRpcErrorObject {
  code: number;
  message: string;
  data?: unknown;
}

const ERROR_INFO = 'type.googleapis.com/google.rpc.ErrorInfo';
const BAD_REQUEST = 'type.googleapis.com/google.rpc.BadRequest';

/**
 * The `google.rpc` detail objects for an error: an `ErrorInfo` for A2A errors (codes
 * -32001…-32099) and a `BadRequest` field violation for bad params. Both bindings carry them.
 */
/**
 * The ErrorInfo domain an error is sent with: the protocol's for its own codes (-32001…-32099),
 * this kit's for its codes in the protocol's shape, none for the rest (UNAUTHENTICATED is the
 * transport's 401, told by its status).
 */
export function errorInfoDomain(reason: A2AErrorReason): string | undefined {
  const code = A2A_ERRORS[reason].rpc;
  if (code <= -32001 && code >= -32099) return 'a2a-protocol.org';
  if (OWN_A2A_REASONS.has(reason) && reason !== 'UNAUTHENTICATED') return 'lume-a2a';
  return undefined;
}

function errorDetails(err: A2AError): unknown[] {
  const details: unknown[] = [];
  const domain = errorInfoDomain(err.code);
  if (domain) details.push({ '@type': ERROR_INFO, reason: err.code, domain });
  if (err.field)
    details.push({
      '@type': BAD_REQUEST,
      fieldViolations: [{ field: err.field, description: err.message }],
    });
  return details;
}

/**
 * The JSON-RPC `error` member for a version. v1.0 carries the `google.rpc` details in `data[]`;
 * v0.3's `data` is free-form, so it gets `{reason, field}`.
 */
export function toJsonRpcError(err: A2AError, version: ProtocolVersion): JsonRpcErrorObject {
  const out: JsonRpcErrorObject = { code: A2A_ERRORS[err.code].rpc, message: err.message };
  if (version === '1.0') {
    const data = errorDetails(err);
    if (data.length) out.data = data;
  } else {
    out.data = err.field ? { reason: err.code, field: err.field } : { reason: err.code };
  }
  return out;
}

/**
 * The HTTP+JSON binding's AIP-193 error body, `{"error": google.rpc.Status}`, and its HTTP
 * status. `http`/`status` override the table for transport-level refusals (405, 413).
 */
export function toRestError(
  err: A2AError,
  http?: number,
  status?: string,
): { http: number; body: { error: Record<string, unknown> } } {
  const entry = A2A_ERRORS[err.code];
  const code = http ?? entry.http;
  const error: Record<string, unknown> = {
    code,
    status: status ?? entry.grpc,
    message: err.message,
  };
  const details = errorDetails(err);
  if (details.length) error.details = details;
  return { http: code, body: { error } };
}

/**
 * The final frame of an A2A stream the server ends early (a client too far behind, a shutdown).
 * JSON-RPC: an `event: error` frame holding a JSON-RPC error (-32603) whose reason is the code;
 * HTTP+JSON: an `event: error` frame holding the binding's error body (503 UNAVAILABLE).
 */
export function rpcStreamEnd(
  id: string | number | null,
  version: ProtocolVersion,
  code: string,
  message: string,
): { event: string; data: unknown } {
  const data =
    version === '1.0'
      ? [{ '@type': ERROR_INFO, reason: code, domain: 'lume-a2a' }]
      : { reason: code };
  return { event: 'error', data: { jsonrpc: '2.0', id, error: { code: -32603, message, data } } };
}

export function restStreamEnd(code: string, message: string): { event: string; data: unknown } {
  return {
    event: 'error',
    data: {
      error: {
        code: 503,
        status: 'UNAVAILABLE',
        message,
        details: [{ '@type': ERROR_INFO, reason: code, domain: 'lume-a2a' }],
      },
    },
  };
}
