/**
 * @module peer-codes — the one table of peer-channel error codes with their HTTP status and
 * default message. Refusals of the verifier are 401; the rest belong to the routes and client.
 */

export const PEER_ERRORS = Object.freeze({
  PEER_UNSIGNED: { status: 401, message: 'request carries no complete peer signature' },
  PEER_UNKNOWN_NODE: { status: 401, message: 'calling node is not in the key ring' },
  PEER_BAD_SIGNATURE: { status: 401, message: 'signature does not verify' },
  PEER_STALE: { status: 401, message: 'timestamp outside the accepted window' },
  PEER_REPLAY: { status: 401, message: 'nonce already used' },
  PEER_DOWNGRADE: { status: 401, message: 'a stronger signing mode is known for this node' },
  PEER_SCOPE: { status: 401, message: 'signed scope does not match the requested capability' },
  PEER_WRONG_RECEIVER: { status: 401, message: 'request was signed for another node or route' },
  PEER_BAD_REQUEST: { status: 400, message: 'malformed peer request' },
  PEER_TOO_LARGE: { status: 413, message: 'request body too large' },
  PEER_METHOD: { status: 405, message: 'peer routes accept POST only' },
  PEER_NO_ROUTE: { status: 404, message: 'relay target is not a fleet node' },
  PEER_LOOP: { status: 508, message: 'relay route visits a node twice' },
  PEER_HOPS: { status: 508, message: 'relay route exceeds the hop limit' },
  PEER_UNREACHABLE: { status: 502, message: 'peer node is unreachable' },
  PEER_TIMEOUT: { status: 504, message: 'peer node did not answer in time' },
  PEER_BAD_ANSWER: { status: 502, message: 'peer node answered something that is not a peer answer' },
  PEER_FAILED: { status: 500, message: 'capability failed' },
  PEER_NO_KEY: { status: 500, message: 'this node has no key for the requested signing mode' },
  PEER_NOT_CONFIGURED: { status: 503, message: 'this node has no peer keys; run `bun run keys`' },
});
export type PeerErrorCode = keyof typeof PEER_ERRORS;
export type PeerRefusalCode =
  | 'PEER_UNSIGNED'
  | 'PEER_UNKNOWN_NODE'
  | 'PEER_BAD_SIGNATURE'
  | 'PEER_STALE'
  | 'PEER_REPLAY'
  | 'PEER_DOWNGRADE'
  | 'PEER_SCOPE'
  | 'PEER_WRONG_RECEIVER';
