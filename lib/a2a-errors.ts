/**
 * @module a2a-errors — the one table of JSON-RPC and A2A error codes, and the error value every
 * A2A operation returns instead of throwing.
 */

import type { ProtocolVersion } from './a2a-types.ts';

/** Each error once: JSON-RPC code, stable UPPER_SNAKE reason, default message. */
export const A2A_ERRORS = {
  PARSE_ERROR: { code: -32700, message: 'Invalid JSON payload' },
  INVALID_REQUEST: { code: -32600, message: 'Request payload validation error' },
  METHOD_NOT_FOUND: { code: -32601, message: 'Method not found' },
  INVALID_PARAMS: { code: -32602, message: 'Invalid parameters' },
  INTERNAL_ERROR: { code: -32603, message: 'Internal error' },
  TASK_NOT_FOUND: { code: -32001, message: 'Task not found' },
  TASK_NOT_CANCELABLE: { code: -32002, message: 'Task cannot be canceled' },
  PUSH_NOTIFICATION_NOT_SUPPORTED: { code: -32003, message: 'Push notifications are not supported' },
  UNSUPPORTED_OPERATION: { code: -32004, message: 'This operation is not supported' },
  CONTENT_TYPE_NOT_SUPPORTED: { code: -32005, message: 'Incompatible content types' },
  INVALID_AGENT_RESPONSE: { code: -32006, message: 'Invalid agent response' },
  EXTENDED_AGENT_CARD_NOT_CONFIGURED: { code: -32007, message: 'Extended agent card is not configured' },
  EXTENSION_SUPPORT_REQUIRED: { code: -32008, message: 'A required extension is not supported' },
  VERSION_NOT_SUPPORTED: { code: -32009, message: 'Protocol version is not supported' },
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
 * The JSON-RPC `error` member for a version. v1.0 carries a `google.rpc.ErrorInfo` in `data[]`
 * for A2A errors (codes -32001…-32099) and a `BadRequest` field violation for bad params; v0.3's
 * `data` is free-form, so it gets `{reason, field}`.
 */
export function toJsonRpcError(err: A2AError, version: ProtocolVersion): JsonRpcErrorObject {
  const { code } = A2A_ERRORS[err.error];
  const out: JsonRpcErrorObject = { code, message: err.message };
  if (version === '1.0') {
    const data: unknown[] = [];
    if (code <= -32001 && code >= -32099) data.push({ '@type': ERROR_INFO, reason: err.error, domain: 'a2a-protocol.org' });
    if (err.field) data.push({ '@type': BAD_REQUEST, fieldViolations: [{ field: err.field, description: err.message }] });
    if (data.length) out.data = data;
  } else {
    out.data = err.field ? { reason: err.error, field: err.field } : { reason: err.error };
  }
  return out;
}
