/**
 * @module kit/peer — the package's signed peer channel (`lume-a2a/peer`): key files, the signer
 * and verifier, the signed client, and the two route handlers for an app that mounts them itself.
 */

export { createPeerClient, type PeerCallOptions, type PeerClient, type PeerClientDeps, type PeerResult } from '../peer/client.ts';
export { ensureKeys, keyId, listKeys, loadPeerIdentity, parseRing, retireKeys, rotateKey, type RingFile, type RingKey } from '../peer/keys.ts';
export {
  PEER_HEADERS, createSigner, createVerifier, type PeerMode, type PeerRing, type PeerSigner, type PeerVerifier, type RingMode, type SignerOptions, type VerifierOptions,
} from '../peer/signature.ts';
export { handlePeerInvoke, handlePeerRelay, type PeerRouteDeps } from '../peer/routes.ts';
