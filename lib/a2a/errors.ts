/**
 * @module a2a-errors — the one table of JSON-RPC and A2A error codes, and the error value every
 * A2A operation returns instead of throwing.
 */

import type { ProtocolVersion } from './types.ts';

/**
 * Each error once: JSON-RPC code, stable UPPER_SNAKE reason, default message, and for the
 * HTTP+JSON binding the HTTP status and google.rpc status name (A2A v1.0 §5.4, as the kit checks).
 */
export const A2A_ERRORS = {
  PARSE_ERROR: { code: -32700, http: 400, status: 'INVALID_ARGUMENT', message: 'Invalid JSON payload' },
  INVALID_REQUEST: { code: -32600, http: 400, status: 'INVALID_ARGUMENT', message: 'Request payload validation error' },
  METHOD_NOT_FOUND: { code: -32601, http: 404, status: 'NOT_FOUND', message: 'Method not found' },
  INVALID_PARAMS: { code: -32602, http: 400, status: 'INVALID_ARGUMENT', message: 'Invalid parameters' },
  INTERNAL_ERROR: { code: -32603, http: 500, status: 'INTERNAL', message: 'Internal error' },
  TASK_NOT_FOUND: { code: -32001, http: 404, status: 'NOT_FOUND', message: 'Task not found' },
  TASK_NOT_CANCELABLE: { code: -32002, http: 409, status: 'FAILED_PRECONDITION', message: 'Task cannot be canceled' },
  PUSH_NOTIFICATION_NOT_SUPPORTED: { code: -32003, http: 400, status: 'UNIMPLEMENTED', message: 'Push notifications are not supported' },
  UNSUPPORTED_OPERATION: { code: -32004, http: 400, status: 'UNIMPLEMENTED', message: 'This operation is not supported' },
  CONTENT_TYPE_NOT_SUPPORTED: { code: -32005, http: 415, status: 'INVALID_ARGUMENT', message: 'Incompatible content types' },
  INVALID_AGENT_RESPONSE: { code: -32006, http: 502, status: 'INTERNAL', message: 'Invalid agent response' },
  EXTENDED_AGENT_CARD_NOT_CONFIGURED: { code: -32007, http: 400, status: 'FAILED_PRECONDITION', message: 'Extended agent card is not configured' },
  EXTENSION_SUPPORT_REQUIRED: { code: -32008, http: 400, status: 'FAILED_PRECONDITION', message: 'A required extension is not supported' },
  VERSION_NOT_SUPPORTED: { code: -32009, http: 400, status: 'UNIMPLEMENTED', message: 'Protocol version is not supported' },
} as const;

export type A2AErrorReason = keyof typeof A2A_ERRORS;

/** An expected failure, carried as a value. `field` names the offending parameter, if any. */
export interface A2AError {
  error: A2AErrorReason;
  message: string;
  field?: string;
}

export function a2aError(reason: A2AErrorReason, message?: string, field?: string): A2AError {
  return { error: reason, message: message ?? A2A_ERRORS[reason].message, ...(field ? { field } : {}) };
}

export function isA2AError(value: unknown): value is A2AError {
  return typeof value === 'object' && value !== null && 'error' in value && typeof (value as A2AError).error === 'string'
    && (value as A2AError).error in A2A_ERRORS;
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
function errorDetails(err: A2AError): unknown[] {
  const { code } = A2A_ERRORS[err.error];
  const details: unknown[] = [];
  if (code <= -32001 && code >= -32099) details.push({ '@type': ERROR_INFO, reason: err.error, domain: 'a2a-protocol.org' });
  if (err.field) details.push({ '@type': BAD_REQUEST, fieldViolations: [{ field: err.field, description: err.message }] });
  return details;
}

/**
 * The JSON-RPC `error` member for a version. v1.0 carries the `google.rpc` details in `data[]`;
 * v0.3's `data` is free-form, so it gets `{reason, field}`.
 */
export function toJsonRpcError(err: A2AError, version: ProtocolVersion): JsonRpcErrorObject {
  const out: JsonRpcErrorObject = { code: A2A_ERRORS[err.error].code, message: err.message };
  if (version === '1.0') {
    const data = errorDetails(err);
    if (data.length) out.data = data;
  } else {
    out.data = err.field ? { reason: err.error, field: err.field } : { reason: err.error };
  }
  return out;
}

/**
 * The HTTP+JSON binding's AIP-193 error body, `{"error": google.rpc.Status}`, and its HTTP
 * status. `http`/`status` override the table for transport-level refusals (405, 413).
 */
export function toRestError(err: A2AError, http?: number, status?: string): { http: number; body: { error: Record<string, unknown> } } {
  const entry = A2A_ERRORS[err.error];
  const code = http ?? entry.http;
  const error: Record<string, unknown> = { code, status: status ?? entry.status, message: err.message };
  const details = errorDetails(err);
  if (details.length) error.details = details;
  return { http: code, body: { error } };
}
