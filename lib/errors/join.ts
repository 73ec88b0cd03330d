/**
 * @module lib/errors/join — joining a hub's fleet (`lume-node --join`, `serveNode({ join })`, the hub's
 * `POST /peer/join`) and leaving it (`bun run fleet remove`). Each message says what to do.
 */

import type { ErrorSpec } from './spec.ts';

export const JOIN_ERRORS = {
  JOIN_BAD_REQUEST: {
    http: 400,
    message: 'a join names the node, its base URL (http(s)://host[:port]) and its Ed25519 key',
  },
  JOIN_BAD_PROOF: {
    http: 401,
    message: 'the join is not signed with the key it presents',
  },
  JOIN_NAME_TAKEN: {
    http: 409,
    message: 'another key holds that name in this fleet',
  },
  // One answer for every way the probe fails (no answer, another node, another key, interfaces
  // not its own): a token holder learns nothing of what runs at a host and port.
  JOIN_URL_NOT_YOURS: {
    http: 403,
    message:
      'the node at that URL did not prove to be the one asking: it must answer there (set PEER_PUBLIC_URL to a URL the hub reaches), name itself in its card and /peer/identity, publish this key, and list only interfaces on its own host and port',
  },
  JOIN_BUSY: { http: 503, message: 'too many joins are waiting; try again' },
  JOIN_FLEET_FILE_INVALID: {
    http: 503,
    message:
      "the hub's fleet file does not read; the hub's operator must fix it before a node can join",
  },
  JOIN_NOT_OFFERED: {
    http: 404,
    message: 'this hub takes no joins: it was started without a fleet file it may write',
  },
  // The node's side.
  JOIN_HUB_UNREACHABLE: { http: 502, message: 'the hub does not answer' },
  JOIN_HUB_BAD_IDENTITY: {
    http: 502,
    message: 'that URL publishes no hub identity at /peer/identity',
  },
  JOIN_HUB_CHANGED: {
    http: 409,
    message: 'the hub at that URL publishes another key than the one this node pinned',
  },
  // `bun run fleet remove <name>`.
  FLEET_REMOVE_UNKNOWN: { http: 404, message: 'the fleet file names no node by that name' },
  FLEET_REMOVE_LOCAL: {
    http: 409,
    message: 'that node runs with this fleet (its file is named here); edit the fleet file instead',
  },
} as const satisfies Record<string, ErrorSpec>;

export type JoinErrorCode = keyof typeof JOIN_ERRORS;
