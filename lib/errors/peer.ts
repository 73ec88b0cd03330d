/**
 * @module lib/errors/peer — the signed peer channel's codes (lib/peer/*). The verifier's refusals are
 * 401; the rest belong to the routes and the client.
 */

import type { ErrorSpec } from './spec.ts';

export const PEER_ERRORS = {
  PEER_UNSIGNED: { http: 401, message: 'request carries no complete peer signature' },
  PEER_BAD_HEADER: {
    http: 401,
    message: 'the X-Peer-Signature header is not v1 and its eight fields, each once',
  },
  PEER_UNKNOWN_NODE: { http: 401, message: 'calling node is not in the key ring' },
  PEER_BAD_SIGNATURE: { http: 401, message: 'signature does not verify' },
  PEER_STALE: { http: 401, message: 'timestamp outside the accepted window' },
  PEER_REPLAY: { http: 401, message: 'nonce already used' },
  PEER_DOWNGRADE: { http: 401, message: 'a stronger signing mode is known for this node' },
  PEER_SCOPE: { http: 401, message: 'signed scope does not match the requested capability' },
  PEER_WRONG_RECEIVER: { http: 401, message: 'request was signed for another node or route' },
  PEER_BAD_REQUEST: { http: 400, message: 'malformed peer request' },
  // lib/fleet/peer-routes.ts: only the hub, or a node the ring marks a relay, acts for another principal.
  PEER_NOT_DELEGATE: {
    http: 403,
    message:
      'only the hub or a node marked a relay (ring or fleet file) may act on behalf of another principal',
  },
  PEER_TOO_LARGE: { http: 413, message: 'request body too large' },
  PEER_METHOD: { http: 405, message: 'peer routes accept POST only' },
  PEER_NO_ROUTE: { http: 404, message: 'relay target is not a fleet node' },
  PEER_LOOP: { http: 400, message: 'relay route visits a node twice' },
  PEER_HOPS: { http: 400, message: 'relay route exceeds the hop limit' },
  PEER_UNREACHABLE: { http: 502, message: 'peer node is unreachable' },
  PEER_TIMEOUT: { http: 504, message: 'peer node did not answer in time' },
  PEER_BAD_ANSWER: { http: 502, message: 'peer node answered something that is not a peer answer' },
  PEER_FAILED: { http: 500, message: 'capability failed' },
  PEER_NO_KEY: { http: 500, message: 'this node has no key for the requested signing mode' },
  PEER_NOT_CONFIGURED: { http: 503, message: 'this node has no peer keys; run `bun run keys`' },
} as const satisfies Record<string, ErrorSpec>;

export type PeerErrorCode = keyof typeof PEER_ERRORS;
/** The verifier's refusals (lib/peer/signature.ts). */
export type PeerRefusalCode =
  | 'PEER_UNSIGNED'
  | 'PEER_BAD_HEADER'
  | 'PEER_UNKNOWN_NODE'
  | 'PEER_BAD_SIGNATURE'
  | 'PEER_STALE'
  | 'PEER_REPLAY'
  | 'PEER_DOWNGRADE'
  | 'PEER_SCOPE'
  | 'PEER_WRONG_RECEIVER';
