/**
 * @module lib/errors/mesh — the mesh's codes: the hub's WebSocket `error` frame codes, its HTTP codes
 * (`/api/*`, `/v1/*`), and the client library's `A2A_*` codes. The spellings are the mesh
 * protocol's; lib/mesh/errors.ts translates hub codes into the client's vocabulary.
 */

import type { ErrorSpec } from './spec.ts';

/** Codes the hub sends in `error` frames; the status is what an HTTP surface would answer. */
export const MESH_WIRE_ERRORS = {
  protocol_mismatch: { http: 400, message: 'protocol version mismatch' },
  name_in_use: { http: 409, message: 'the name is taken in this project' },
  unknown_project: { http: 404, message: 'no such project' },
  claim_rejected: { http: 403, message: 'the claim was rejected' },
  invalid_frame: { http: 400, message: 'the frame is malformed' },
  recipient_not_present: { http: 404, message: 'the recipient is not connected' },
  message_id_conflict: { http: 409, message: 'the message id was used for different content' },
  unknown_reply: { http: 404, message: 'the reply names no known message' },
  payload_too_large: { http: 413, message: 'the payload is too large' },
  message_rejected: { http: 422, message: 'the message was rejected' },
} as const satisfies Record<string, ErrorSpec>;

/** Codes of the hub's HTTP answers (`/api/*` answers some of them in a 200 body; hub/mesh/http.ts). */
export const MESH_HTTP_ERRORS = {
  'bad-json': { http: 400, message: 'body is not valid JSON' },
  // Raised by the history query parser; answered on the wire as A2A_BAD_REQUEST.
  'missing-project': { http: 400, message: 'project is required' },
  'project-conflict': { http: 409, message: 'the project exists with other settings' },
  internal: { http: 500, message: 'internal error' },
  'not-found': { http: 404, message: 'not found' },
  unauthorized: { http: 401, message: 'missing or wrong bearer token' },
  'payload-too-large': { http: 413, message: 'body is too large' },
  // hub/mesh/http-reads.ts: open /v1/watch streams, per process and per client address.
  'watch-full': { http: 503, message: 'the hub has as many watch streams open as it serves' },
} as const satisfies Record<string, ErrorSpec>;

/** Codes the client library reports (`MeshClientError.code`); A2A_BAD_REQUEST is in lib/errors/fleet.ts. */
export const MESH_CLIENT_ERRORS = {
  A2A_CLIENT_CONNECT: { http: 502, message: 'could not connect to the hub' },
  A2A_CLIENT_TRANSPORT: { http: 502, message: 'the connection to the hub failed' },
  A2A_CLIENT_CLOSED: { http: 502, message: 'the client is closed' },
  A2A_HTTP_STATUS: { http: 502, message: 'the hub answered an unexpected HTTP status' },
  A2A_HTTP_TRANSPORT: { http: 502, message: 'the HTTP request to the hub failed' },
  A2A_PROJECT_CONFLICT: { http: 409, message: 'the project exists with other settings' },
  A2A_UNKNOWN_PROJECT: { http: 404, message: 'no such project' },
  A2A_NAME_IN_USE: { http: 409, message: 'the name is taken in this project' },
  A2A_MESSAGE_ID_CONFLICT: { http: 409, message: 'the message id was used for different content' },
  A2A_UNKNOWN_REPLY: { http: 404, message: 'the reply names no known message' },
  A2A_PAYLOAD_TOO_LARGE: { http: 413, message: 'the payload is too large' },
  A2A_MESSAGE_REJECTED: { http: 422, message: 'the message was rejected' },
  A2A_PROTOCOL_MISMATCH: { http: 400, message: 'protocol version mismatch' },
  A2A_CLAIM_REJECTED: { http: 403, message: 'the claim was rejected' },
  A2A_INVALID_FRAME: { http: 400, message: 'the frame is malformed' },
  A2A_RECIPIENT_NOT_PRESENT: { http: 404, message: 'the recipient is not connected' },
  A2A_UNAUTHORIZED: { http: 401, message: 'missing or wrong bearer token' },
  A2A_ATTACHMENT: { http: 400, message: 'the attachment cannot be used' },
  A2A_INTERNAL: { http: 500, message: 'the hub failed' },
  // A node's inbox (lib/node/mesh-inbox.ts) refuses past its bound; the sender reads it in `failed`.
  A2A_INBOX_FULL: { http: 503, message: "too many messages wait for the node's agent" },
} as const satisfies Record<string, ErrorSpec>;

export type WireCode = keyof typeof MESH_WIRE_ERRORS;
export type MeshHttpCode = keyof typeof MESH_HTTP_ERRORS | 'A2A_BAD_REQUEST';
export type ClientCode = keyof typeof MESH_CLIENT_ERRORS | 'A2A_BAD_REQUEST';
