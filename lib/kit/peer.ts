/**
 * @module lib/kit/peer — the package's signed peer channel (`lume-a2a/peer`): key files, the signer
 * and verifier, the signed client, and the two route handlers for an app that mounts them itself.
 */

export { createPeerClient, type PeerClient, type PeerResult } from '../peer/client.ts';
export {
  ensureKeys,
  listKeys,
  loadPeerIdentity,
  parseRing,
  publicIdentity,
  retireKeys,
  rotateKey,
  trustRemoteKey,
} from '../peer/keys.ts';
export {
  createSigner,
  createVerifier,
  type PeerMode,
  type PeerRing,
  type PeerSigner,
  type PeerVerifier,
  type RingMode,
  type VerifierOptions,
} from '../peer/signature.ts';
export { handlePeerInvoke, handlePeerRelay, type PeerRouteDeps } from '../peer/routes.ts';
