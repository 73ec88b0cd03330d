/**
 * @module lib/kit/peer — the package's signed peer channel (`lume-a2a/peer`): key files, the signer
 * and verifier, the signed client, and the two route handlers for an app that mounts them itself.
 */

export { createPeerClient, type PeerClient, type PeerResult } from '../peer/client.ts';
export {
  ensureKeys,
  listKeys,
  loadPeerIdentity,
  publicIdentity,
  retireKeys,
  rotateKey,
  trustRemoteKey,
} from '../peer/keys.ts';
export { parseRing } from '../peer/key-files.ts';
export type { PeerMode, PeerRing, RingMode } from '../peer/signature.ts';
export { createVerifier, type PeerVerifier, type VerifierOptions } from '../peer/verifier.ts';
export { createSigner, type PeerSigner } from '../peer/signer.ts';
export { handlePeerInvoke, handlePeerRelay, type PeerRouteDeps } from '../fleet/peer-routes.ts';
