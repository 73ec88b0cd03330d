/**
 * @module lib/mesh/errors — the mesh's error vocabulary: its codes are declared in the error registry
 * (lib/errors/mesh.ts); this file translates a code received from the hub (a WebSocket `error`
 * frame or an HTTP answer) into the client's `A2A_*` code.
 */

import type { ClientCode, MeshHttpCode, WireCode } from '../errors/mesh.ts';
import { MESH_CLIENT_ERRORS } from '../errors/mesh.ts';
import type { Failure, Result as OneResult } from '../errors/result.ts';

export type { ClientCode, MeshHttpCode, WireCode } from '../errors/mesh.ts';
export { fail, ok } from '../errors/result.ts';

/** The one result shape (lib/errors/result.ts), typed by the codes a mesh operation can fail with. */
export type Result<T, C extends string = string> = OneResult<T, Failure<C>>;

/** A mesh failure: a code and a message (the one Failure shape). */
export type MeshError<C extends string = string> = Failure<C>;

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

const FROM_HTTP: Readonly<Record<MeshHttpCode, ClientCode>> = Object.freeze({
  'bad-json': 'A2A_BAD_REQUEST',
  'missing-project': 'A2A_BAD_REQUEST',
  'project-conflict': 'A2A_PROJECT_CONFLICT',
  A2A_BAD_REQUEST: 'A2A_BAD_REQUEST',
  internal: 'A2A_INTERNAL',
  'not-found': 'A2A_UNKNOWN_PROJECT',
  unauthorized: 'A2A_UNAUTHORIZED',
  'payload-too-large': 'A2A_PAYLOAD_TOO_LARGE',
  'watch-full': 'A2A_HTTP_STATUS',
});

/** Maps a code received from the hub (wire or HTTP) to the client's vocabulary. */
export function clientCode(code: unknown): ClientCode {
  if (typeof code !== 'string') return 'A2A_CLIENT_TRANSPORT';
  if (Object.hasOwn(FROM_WIRE, code)) return FROM_WIRE[code as WireCode];
  if (Object.hasOwn(FROM_HTTP, code)) return FROM_HTTP[code as MeshHttpCode];
  return code === 'A2A_BAD_REQUEST' || Object.hasOwn(MESH_CLIENT_ERRORS, code)
    ? (code as ClientCode)
    : 'A2A_CLIENT_TRANSPORT';
}
