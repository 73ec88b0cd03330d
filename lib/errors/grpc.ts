/**
 * @module lib/errors/grpc — what the gRPC binding refuses before an A2A operation runs: bytes that are
 * not protobuf of the method's type, a message past the size bound, an unknown method, a
 * compressed or missing request message. Each carries its google.rpc status name.
 */

import type { ErrorSpec } from './spec.ts';

export const GRPC_ERRORS = {
  PROTOBUF_MALFORMED: {
    http: 400,
    grpc: 'INVALID_ARGUMENT',
    message: 'The request is not a valid protobuf message of the method type',
  },
  PROTOBUF_TOO_DEEP: {
    http: 400,
    grpc: 'INVALID_ARGUMENT',
    message: 'The request nests messages deeper than 100 levels',
  },
  PROTOBUF_TOO_MANY_VALUES: {
    http: 400,
    grpc: 'INVALID_ARGUMENT',
    message: 'The request holds more than 100,000 values (messages and list items)',
  },
  GRPC_MESSAGE_TOO_LARGE: {
    http: 413,
    grpc: 'RESOURCE_EXHAUSTED',
    message: 'The gRPC message is larger than the bound',
  },
  GRPC_UNKNOWN_METHOD: {
    http: 404,
    grpc: 'UNIMPLEMENTED',
    message: 'No such method on lf.a2a.v1.A2AService',
  },
  GRPC_COMPRESSION_UNSUPPORTED: {
    http: 400,
    grpc: 'UNIMPLEMENTED',
    message: 'Compressed gRPC messages are not supported (send grpc-encoding identity)',
  },
  GRPC_ONE_MESSAGE: {
    http: 400,
    grpc: 'INVALID_ARGUMENT',
    message: 'A unary or server-streaming call carries exactly one request message',
  },
  GRPC_MESSAGE_TIMEOUT: {
    http: 408,
    grpc: 'DEADLINE_EXCEEDED',
    message: 'The request message did not arrive in time; its bytes were dropped',
  },
} as const satisfies Record<string, Required<Omit<ErrorSpec, 'rpc'>>>;

export type GrpcErrorCode = keyof typeof GRPC_ERRORS;
