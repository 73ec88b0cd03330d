/**
 * @module mesh/errors — the one table of mesh error codes: wire codes (WebSocket `error` frames),
 * HTTP codes (`/api/*` and `/v1/*` answers, with their status) and the client's `A2A_*` codes.
 */

/** Codes the hub sends in `error` frames. The first four close the socket with 1008 at claim time. */
export const WIRE_CODES = [
  'protocol_mismatch',
  'name_in_use',
  'unknown_project',
  'claim_rejected',
  'invalid_frame',
  'recipient_not_present',
  'message_id_conflict',
  'unknown_reply',
  'payload_too_large',
  'message_rejected',
] as const;
export type WireCode = (typeof WIRE_CODES)[number];

/** HTTP error codes and the status each one is answered with on `/api/*` (which answers 200 for most). */
export const API_STATUS = Object.freeze({
  'bad-json': 200,
  'project-conflict': 200,
  A2A_BAD_REQUEST: 200,
  internal: 200,
  'not-found': 404,
  // Added for the optional join token; a refused caller must not look like a success.
  unauthorized: 401,
  'payload-too-large': 413,
});
export type ApiCode = keyof typeof API_STATUS;

/** Status for `GET /v1/history` and other `/v1/*` reads, which use plain HTTP semantics. */
export const READ_STATUS: Readonly<Record<ApiCode, number>> = Object.freeze({
  'bad-json': 400,
  'project-conflict': 409,
  A2A_BAD_REQUEST: 400,
  internal: 500,
  'not-found': 404,
  unauthorized: 401,
  'payload-too-large': 413,
});

/** Codes the client library reports (`MeshClientError.code`). */
export const CLIENT_CODES = [
  'A2A_CLIENT_CONNECT',
  'A2A_CLIENT_TRANSPORT',
  'A2A_CLIENT_CLOSED',
  'A2A_HTTP_STATUS',
  'A2A_HTTP_TRANSPORT',
  'A2A_BAD_REQUEST',
  'A2A_PROJECT_CONFLICT',
  'A2A_UNKNOWN_PROJECT',
  'A2A_NAME_IN_USE',
  'A2A_MESSAGE_ID_CONFLICT',
  'A2A_UNKNOWN_REPLY',
  'A2A_PAYLOAD_TOO_LARGE',
  'A2A_MESSAGE_REJECTED',
  'A2A_PROTOCOL_MISMATCH',
  'A2A_CLAIM_REJECTED',
  'A2A_INVALID_FRAME',
  'A2A_RECIPIENT_NOT_PRESENT',
  'A2A_UNAUTHORIZED',
  'A2A_ATTACHMENT',
  'A2A_INTERNAL',
] as const;
export type ClientCode = (typeof CLIENT_CODES)[number];

const FROM_WIRE: Readonly<Record<WireCode, ClientCode>> = Object.freeze({
  protocol_mismatch: 'A2A_PROTOCOL_MISMATCH',
  name_in_use: 'A2A_NAME_IN_USE',
  unknown_project: 'A2A_UNKNOWN_PROJECT',
  claim_rejected: 'A2A_CLAIM_REJECTED',
  invalid_frame: 'A2A_INVALID_FRAME',
  recipient_not_present: 'A2A_RECIPIENT_NOT_PRESENT',
  message_id_conflict: 'A2A_MESSAGE_ID_CONFLICT',
  unknown_reply: 'A2A_UNKNOWN_REPLY',
  payload_too_large: 'A2A_PAYLOAD_TOO_LARGE',
  message_rejected: 'A2A_MESSAGE_REJECTED',
});

const FROM_API: Readonly<Record<ApiCode, ClientCode>> = Object.freeze({
  'bad-json': 'A2A_BAD_REQUEST',
  'project-conflict': 'A2A_PROJECT_CONFLICT',
  A2A_BAD_REQUEST: 'A2A_BAD_REQUEST',
  internal: 'A2A_INTERNAL',
  'not-found': 'A2A_UNKNOWN_PROJECT',
  unauthorized: 'A2A_UNAUTHORIZED',
  'payload-too-large': 'A2A_PAYLOAD_TOO_LARGE',
});

/** Maps a code received from the hub (wire or HTTP) to the client's vocabulary. */
export function clientCode(code: unknown): ClientCode {
  if (typeof code !== 'string') return 'A2A_CLIENT_TRANSPORT';
  if (code in FROM_WIRE) return FROM_WIRE[code as WireCode];
  if (code in FROM_API) return FROM_API[code as ApiCode];
  return (CLIENT_CODES as readonly string[]).includes(code) ? (code as ClientCode) : 'A2A_CLIENT_TRANSPORT';
}

export interface MeshError<C extends string = string> {
  code: C;
  message: string;
}

/** An expected failure as a value. */
export type Result<T, C extends string = string> = { ok: true; value: T } | { ok: false; error: MeshError<C> };

export const ok = <T>(value: T): { ok: true; value: T } => ({ ok: true, value });
export const fail = <C extends string>(code: C, message: string): { ok: false; error: MeshError<C> } => ({
  ok: false,
  error: { code, message },
});
