/**
 * @module lib/node/card-keys — the keys a node's agent card is signed with, from its data folder:
 * its own Ed25519 pair and, during a rotation, the previous public key (which its JWKS keeps).
 */

import { cardKeyOf } from '../a2a/card/signature.ts';
import { loadCardSeeds } from '../peer/keys.ts';
import type { NodeOptions } from './node-types.ts';

/** Undefined for a node without a pair here. @throws Error when a key file is malformed. */
export async function loadCardKeys(
  dataDir: string,
  node: string,
): Promise<NodeOptions['cardKeys']> {
  const seeds = await loadCardSeeds(dataDir, node);
  if (!seeds) return undefined;
  const previous = seeds.previous ? cardKeyOf(seeds.previous) : undefined;
  return {
    current: cardKeyOf(seeds.current),
    previous: previous ? [{ kid: previous.kid, publicKey: previous.publicKey }] : [],
  };
}
