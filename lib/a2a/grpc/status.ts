/**
 * @module lib/a2a/grpc/status — how the gRPC binding says no: an A2A error (or one of the binding's
 * own refusals) becomes a gRPC status code, a percent-encoded `grpc-message` and a
 * `grpc-status-details-bin` trailer holding a `google.rpc.Status` whose details carry a
 * `google.rpc.ErrorInfo` with the error's reason code (A2A 1.0 §10) and, for a bad parameter, a
 * `google.rpc.BadRequest` naming the field.
 */

import { A2A_ERRORS, OWN_A2A_REASONS } from '../../errors/a2a.ts';
import { GRPC_ERRORS, type GrpcErrorCode } from '../../errors/grpc.ts';
import { LIMIT_ERRORS, type LimitErrorCode } from '../../errors/limits.ts';
import type { A2AError } from '../errors.ts';
import { encodeMessage } from './encode.ts';
import { A2A_SCHEMA } from '../proto/schema.ts';

/** gRPC status codes (grpc/doc/statuscodes.md). */
export const GRPC_STATUS = {
  OK: 0,
  CANCELLED: 1,
  UNKNOWN: 2,
  INVALID_ARGUMENT: 3,
  DEADLINE_EXCEEDED: 4,
  NOT_FOUND: 5,
  ALREADY_EXISTS: 6,
  PERMISSION_DENIED: 7,
  RESOURCE_EXHAUSTED: 8,
  FAILED_PRECONDITION: 9,
  ABORTED: 10,
  OUT_OF_RANGE: 11,
  UNIMPLEMENTED: 12,
  INTERNAL: 13,
  UNAVAILABLE: 14,
  DATA_LOSS: 15,
  UNAUTHENTICATED: 16,
} as const;
export type GrpcStatusName = keyof typeof GRPC_STATUS;

/** A refusal on the gRPC binding: its reason code, message, status name and offending field. */
export interface GrpcFailure {
  reason: string;
  message: string;
  status: GrpcStatusName;
  field?: string;
}

/** The ErrorInfo domain: the protocol's for A2A errors, this project's for its own codes. */
const A2A_DOMAIN = 'a2a-protocol.org';
const OWN_DOMAIN = 'lume-a2a';

export function fromA2AError(err: A2AError): GrpcFailure {
  return {
    reason: err.code,
    message: err.message,
    status: A2A_ERRORS[err.code].grpc,
    ...(err.field ? { field: err.field } : {}),
  };
}

export function grpcFailure(code: GrpcErrorCode, message?: string): GrpcFailure {
  const spec = GRPC_ERRORS[code];
  return { reason: code, message: message ?? spec.message, status: spec.grpc };
}

/**
 * A stream the server ends early (a reader too far behind, a shutdown): UNAVAILABLE; or one it
 * refuses at a bound of open streams (`RESOURCE_EXHAUSTED`, gRPC's code for a quota).
 */
export function streamEndFailure(
  code: LimitErrorCode,
  message?: string,
  status: GrpcStatusName = 'UNAVAILABLE',
): GrpcFailure {
  return { reason: code, message: message ?? LIMIT_ERRORS[code].message, status };
}

/** `grpc-message` is percent-encoded: bytes outside printable ASCII, and `%` itself. */
function percentEncode(text: string): string {
  let out = '';
  for (const b of new TextEncoder().encode(text))
    out +=
      b >= 0x20 && b <= 0x7e && b !== 0x25
        ? String.fromCharCode(b)
        : `%${b.toString(16).toUpperCase().padStart(2, '0')}`;
  return out;
}

function any(typeName: string, value: unknown): { typeUrl: string; value: Uint8Array } {
  return {
    typeUrl: `type.googleapis.com/${typeName}`,
    value: encodeMessage(A2A_SCHEMA, typeName, value),
  };
}

/** The trailers that end a failed call. */
export function failureTrailers(f: GrpcFailure): Record<string, string> {
  const code = GRPC_STATUS[f.status];
  const domain =
    Object.hasOwn(A2A_ERRORS, f.reason) && !OWN_A2A_REASONS.has(f.reason) ? A2A_DOMAIN : OWN_DOMAIN;
  const details = [any('google.rpc.ErrorInfo', { reason: f.reason, domain })];
  if (f.field)
    details.push(
      any('google.rpc.BadRequest', {
        fieldViolations: [{ field: f.field, description: f.message }],
      }),
    );
  const status = encodeMessage(A2A_SCHEMA, 'google.rpc.Status', {
    code,
    message: f.message,
    details,
  });
  return {
    'grpc-status': String(code),
    'grpc-message': percentEncode(f.message),
    // Binary metadata is base64 without padding (gRPC over HTTP/2).
    'grpc-status-details-bin': Buffer.from(status).toString('base64').replace(/=+$/, ''),
  };
}
