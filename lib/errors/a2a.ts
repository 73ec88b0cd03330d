/**
 * @module lib/errors/a2a — the A2A protocol's errors: JSON-RPC code, stable UPPER_SNAKE reason, default
 * message, and for the HTTP+JSON binding the HTTP status and google.rpc status name (A2A v1.0 §5.4,
 * as the conformance kit checks). lib/a2a/errors.ts renders them on both bindings.
 */

import type { ErrorSpec } from './spec.ts';

export const A2A_ERRORS = {
  PARSE_ERROR: {
    rpc: -32700,
    http: 400,
    grpc: 'INVALID_ARGUMENT',
    message: 'Invalid JSON payload',
  },
  INVALID_REQUEST: {
    rpc: -32600,
    http: 400,
    grpc: 'INVALID_ARGUMENT',
    message: 'Request payload validation error',
  },
  METHOD_NOT_FOUND: { rpc: -32601, http: 404, grpc: 'NOT_FOUND', message: 'Method not found' },
  INVALID_PARAMS: {
    rpc: -32602,
    http: 400,
    grpc: 'INVALID_ARGUMENT',
    message: 'Invalid parameters',
  },
  INTERNAL_ERROR: { rpc: -32603, http: 500, grpc: 'INTERNAL', message: 'Internal error' },
  TASK_NOT_FOUND: { rpc: -32001, http: 404, grpc: 'NOT_FOUND', message: 'Task not found' },
  TASK_NOT_CANCELABLE: {
    rpc: -32002,
    http: 409,
    grpc: 'FAILED_PRECONDITION',
    message: 'Task cannot be canceled',
  },
  PUSH_NOTIFICATION_NOT_SUPPORTED: {
    rpc: -32003,
    http: 400,
    grpc: 'UNIMPLEMENTED',
    message: 'Push notifications are not supported',
  },
  UNSUPPORTED_OPERATION: {
    rpc: -32004,
    http: 400,
    grpc: 'UNIMPLEMENTED',
    message: 'This operation is not supported',
  },
  CONTENT_TYPE_NOT_SUPPORTED: {
    rpc: -32005,
    http: 415,
    grpc: 'INVALID_ARGUMENT',
    message: 'Incompatible content types',
  },
  INVALID_AGENT_RESPONSE: {
    rpc: -32006,
    http: 502,
    grpc: 'INTERNAL',
    message: 'Invalid agent response',
  },
  EXTENDED_AGENT_CARD_NOT_CONFIGURED: {
    rpc: -32007,
    http: 400,
    grpc: 'FAILED_PRECONDITION',
    message: 'Extended agent card is not configured',
  },
  EXTENSION_SUPPORT_REQUIRED: {
    rpc: -32008,
    http: 400,
    grpc: 'FAILED_PRECONDITION',
    message: 'A required extension is not supported',
  },
  VERSION_NOT_SUPPORTED: {
    rpc: -32009,
    http: 400,
    grpc: 'UNIMPLEMENTED',
    message: 'Protocol version is not supported',
  },
  // A2A 1.1 (the dev-1.1 branch, §3.2.7): a continuation whose `ifGenerationMatch` is not the
  // task's generation; nothing is changed, the client re-reads the task.
  TASK_GENERATION_MISMATCH: {
    rpc: -32010,
    http: 409,
    grpc: 'ABORTED',
    message: 'Task generation mismatch',
  },
  // Not an A2A code (the protocol leaves authentication to the transport: HTTP 401); -32000 is
  // JSON-RPC's implementation-defined server error, outside the range A2A reserves for itself.
  UNAUTHENTICATED: {
    rpc: -32000,
    http: 401,
    grpc: 'UNAUTHENTICATED',
    message: 'This request needs an authenticated caller: a bearer token or a signed fleet node',
  },
  // Not an A2A code: a token's issuer cannot be reached for a key the node has not cached; the
  // caller may try again (cached keys keep working meanwhile). -32000 as above.
  ISSUER_UNAVAILABLE: {
    rpc: -32000,
    http: 503,
    grpc: 'UNAVAILABLE',
    message: "The access token's issuer cannot be reached to fetch its keys; try again shortly",
  },
  // Not an A2A code: the caller is known, but its access token's scopes do not cover the request
  // (lib/auth/scopes.ts). -32000 as above.
  INSUFFICIENT_SCOPE: {
    rpc: -32000,
    http: 403,
    grpc: 'PERMISSION_DENIED',
    message: "The access token's scopes do not cover this request",
  },
  // Not an A2A code: a tenant the node does not serve, or one the caller's token does not name
  // (lib/node/tenants.ts). -32000 as above.
  TENANT_FORBIDDEN: {
    rpc: -32000,
    http: 403,
    grpc: 'PERMISSION_DENIED',
    message: 'This caller may not act in that tenant',
  },
  // Not an A2A code either: the node's task store is at its hard bound (docs/limits.md), so a
  // SendMessage that would create a task is refused and nothing is stored; -32000 as above.
  TASK_STORE_FULL: {
    rpc: -32000,
    http: 503,
    grpc: 'UNAVAILABLE',
    message: 'This node stores as many tasks as it may; try again once its tasks have finished',
  },
  // Not an A2A code: the caller already has as many agent turns running on this node as one may
  // (docs/limits.md; all anonymous callers are one), so the send is refused and nothing is stored.
  TOO_MANY_TURNS: {
    rpc: -32000,
    http: 429,
    grpc: 'RESOURCE_EXHAUSTED',
    message:
      'This caller already has as many turns running on this node as one may (all anonymous callers together are one); send again once one has finished',
  },
  // Not an A2A code: a GetTask long-poll (`currentGeneration`) past the long-polls this caller may
  // hold on the node (docs/limits.md; all anonymous callers are one); nothing is held.
  TOO_MANY_LONG_POLLS: {
    rpc: -32000,
    http: 429,
    grpc: 'RESOURCE_EXHAUSTED',
    message:
      'This caller already holds as many long-polls on this node as one may (all anonymous callers together are one); poll again once one has answered',
  },
  // Not an A2A code: the process holds as many long-polls as it may (docs/limits.md).
  LONG_POLLS_FULL: {
    rpc: -32000,
    http: 503,
    grpc: 'UNAVAILABLE',
    message: 'This node holds as many long-polls as it may; poll again shortly',
  },
  // Not an A2A code: a SendMessage whose `messageId` this caller already sent with another message
  // within the retry window (docs/decisions.md "Tasks and stores"); nothing is run or stored.
  MESSAGE_ID_REUSED: {
    rpc: -32000,
    http: 409,
    grpc: 'ALREADY_EXISTS',
    message:
      'This messageId was already sent with a different message; send a new message with a new messageId',
  },
  // Not A2A codes: a stream resume's cursor (`Last-Event-ID`, `lastGeneration`) that is not one
  // (malformed, longer than 128 characters, or two that disagree), and one past the task's
  // generation. A cursor naming another task is TASK_NOT_FOUND (nothing about it is told).
  EVENT_CURSOR_INVALID: {
    rpc: -32602,
    http: 400,
    grpc: 'INVALID_ARGUMENT',
    message:
      'The resume cursor is not one: send Last-Event-ID <taskId>:<generation> or lastGeneration',
  },
  EVENT_CURSOR_AHEAD: {
    rpc: -32602,
    http: 400,
    grpc: 'OUT_OF_RANGE',
    message: "The resume cursor is past the task's generation",
  },
} as const satisfies Record<string, Required<ErrorSpec>>;

export type A2AErrorReason = keyof typeof A2A_ERRORS;

/** Codes of this project carried in the protocol's error shape: their ErrorInfo domain is `lume-a2a`. */
export const OWN_A2A_REASONS: ReadonlySet<string> = new Set([
  'UNAUTHENTICATED',
  'ISSUER_UNAVAILABLE',
  'INSUFFICIENT_SCOPE',
  'TENANT_FORBIDDEN',
  'TASK_STORE_FULL',
  'TOO_MANY_TURNS',
  'TOO_MANY_LONG_POLLS',
  'LONG_POLLS_FULL',
  'EVENT_CURSOR_INVALID',
  'EVENT_CURSOR_AHEAD',
  'MESSAGE_ID_REUSED',
]);
