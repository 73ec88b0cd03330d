/**
 * @module lib/peer/live-identity — a node's signer and verifier that follow its key ring: when a node
 * joins (or leaves) the ring on disk, `reload()` loads the identity again and every holder of the
 * signer and verifier uses the new one. The replay cache carries over, so a request accepted before
 * a reload is still a replay after it.
 */

import { loadPeerIdentity } from './keys.ts';
import { createNonceCache } from './nonces.ts';
import type { PeerRing } from './signature.ts';
import type { PeerVerifier, VerifierOptions } from './verifier.ts';
import type { PeerSigner } from './signer.ts';

export interface LiveIdentity {
  readonly signer: PeerSigner;
  readonly verifier: PeerVerifier;
  /** The ring as last loaded. */
  ring(): PeerRing;
  /** Reads the key files again. @throws Error as loadPeerIdentity (the old identity stays). */
  reload(): Promise<void>;
}

type Options = Omit<VerifierOptions, 'self' | 'ring' | 'secret' | 'seeds' | 'nonces'>;

/** Loads `node`'s identity from `<dataDir>/keys/`. @throws Error as loadPeerIdentity. */
export async function liveIdentity(
  dataDir: string,
  node: string,
  opts: Options = {},
): Promise<LiveIdentity> {
  const nonces = createNonceCache(opts.windowMs ?? 60_000, opts.nonceCapacity ?? 100_000);
  const load = () => loadPeerIdentity(dataDir, node, { ...opts, nonces });
  let current = await load();
  const signer: PeerSigner = Object.freeze({
    node,
    get modes() {
      return current.signer.modes;
    },
    sign: (...a: Parameters<PeerSigner['sign']>) => current.signer.sign(...a),
  });
  const verifier: PeerVerifier = Object.freeze({
    verify: (...a: Parameters<PeerVerifier['verify']>) => current.verifier.verify(...a),
    // Without it the peer routes take every relay but the hub for a stranger (PEER_NOT_DELEGATE).
    isRelay: (peer: string) => current.ring.get(peer)?.relay === true,
  });
  return {
    signer,
    verifier,
    ring: () => current.ring,
    async reload() {
      current = await load();
    },
  };
}
