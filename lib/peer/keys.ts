/**
 * @module lib/peer/keys — key files of the signed peer channel under `<dataDir>/keys/`: the fleet
 * secret, each member's Ed25519 pair (and, during a rotation, its previous one) and the public key
 * ring (formats in docs/peer.md). Makes, rotates and loads them; the files themselves are read and
 * written by lib/peer/key-files.ts, the signing is lib/peer/signer.ts.
 *
 * API:
 *   ensureKeys(dataDir, fleet, { force? })   create what is missing (idempotent)
 *   ensureOwnKey(dataDir, node)              one node's pair and ring entry, nothing else
 *   rotateKey(dataDir, fleet, node)          new pair; the ring holds new + previous key, the
 *                                            previous pair is kept as <node>.ed25519.previous.json
 *   retireKeys(dataDir, fleet, node)         drop the previous key from the ring and its pair
 *   loadPeerIdentity(dataDir, node, opts)    -> { signer, verifier } for one node at start
 *   parseRing(doc) / listKeys(dataDir)       ring file -> PeerRing; a key-free summary
 */

import { chmod, mkdir, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { randomBytes } from '@noble/hashes/utils.js';
import type { Fleet } from '../config/fleet-file.ts';
import type { PeerRing, RingMode } from './signature.ts';
import { fromB64url, toB64url } from './base64url.ts';
import { createVerifier, type PeerVerifier, type VerifierOptions } from './verifier.ts';
import { createSigner, type PeerSigner } from './signer.ts';
import {
  SECRET_FILE,
  RING_FILE,
  privateKeyFile,
  previousKeyFile,
  MAX_RING_KEYS,
  keyId,
  keysDir,
  checkNode,
  readText,
  writeKeyFile,
  readSecret,
  readPrivateKey,
  newPrivateKey,
  readRingFile,
  writeRing,
  parseRing,
} from './key-files.ts';

const members = (fleet: Fleet) => [fleet.hub, ...fleet.nodes].map((m) => m.name);

interface KeyOptions {
  /** Replace existing secret and pairs (all peers must then restart). */
  force?: boolean;
  now?: () => Date;
}

/**
 * Creates the fleet secret, a pair for every fleet member and the ring, keeping whatever exists.
 * Returns the names of the files it created or changed (never their content).
 * @throws Error when an existing key file is malformed or the directory cannot be written.
 */
export async function ensureKeys(
  dataDir: string,
  fleet: Fleet,
  opts: KeyOptions = {},
): Promise<{ created: string[] }> {
  const dir = keysDir(dataDir);
  const now = (opts.now ?? (() => new Date()))();
  await mkdir(dir, { recursive: true, mode: 0o700 });
  await chmod(dir, 0o700);
  const created: string[] = [];
  if (opts.force || !(await readSecret(dir))) {
    await writeKeyFile(
      join(dir, SECRET_FILE),
      `${toB64url(randomBytes(32))}\n`,
      0o600,
      !opts.force,
    );
    created.push(SECRET_FILE);
  }
  const ring = await readRingFile(dir);
  let ringChanged = false;
  // A member that runs elsewhere keeps its own pair; the ring holds the key it published.
  const local = [fleet.hub, ...fleet.nodes].filter((m) => !m.remote).map((m) => m.name);
  for (const node of local) {
    checkNode(node);
    let key = opts.force ? undefined : (await readPrivateKey(dir, node))?.key;
    if (opts.force) await unlink(join(dir, previousKeyFile(node))).catch(() => {});
    if (!key) {
      key =
        (await newPrivateKey(dir, node, now, !!opts.force)) ??
        (await readPrivateKey(dir, node))!.key;
      created.push(privateKeyFile(node));
    }
    const entry = ring.nodes[node];
    if (opts.force || !entry) {
      ring.nodes[node] = { mode: 'ed25519', keys: [key] };
      ringChanged = true;
    } else if (entry.mode === 'ed25519' && !entry.keys.some((k) => k.publicKey === key.publicKey)) {
      // The pair on disk is not in the ring (ring edited or restored): trust the pair on disk.
      entry.keys = [key, ...entry.keys].slice(0, MAX_RING_KEYS);
      ringChanged = true;
    }
  }
  if (ringChanged || !(await readText(join(dir, RING_FILE)))) {
    await writeRing(dir, ring);
    created.push(RING_FILE);
  }
  return { created };
}

/**
 * Creates one node's pair (when missing) and its ring entry, and nothing else: no fleet secret, no
 * other member's pair. What a node that runs apart from its fleet keeps (its peers' public keys are
 * pinned with `trustRemoteKey`). Returns the key id.
 * @throws Error when an existing key file is malformed or the directory cannot be written.
 */
export async function ensureOwnKey(
  dataDir: string,
  node: string,
  opts: KeyOptions = {},
): Promise<{ kid: string; created: boolean }> {
  checkNode(node);
  const dir = keysDir(dataDir);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  await chmod(dir, 0o700);
  let key = (await readPrivateKey(dir, node))?.key;
  const created = !key;
  key ??=
    (await newPrivateKey(dir, node, (opts.now ?? (() => new Date()))(), false)) ??
    (await readPrivateKey(dir, node))!.key;
  const ring = await readRingFile(dir);
  const entry = ring.nodes[node];
  // A ring that states an HMAC mode for the node is the fleet's choice: it stays.
  if (
    !entry ||
    (entry.mode === 'ed25519' && !entry.keys.some((k) => k.publicKey === key.publicKey))
  ) {
    ring.nodes[node] = {
      mode: 'ed25519',
      keys: [key, ...(entry?.keys ?? [])].slice(0, MAX_RING_KEYS),
    };
    await writeRing(dir, ring);
  }
  return { kid: key.kid, created };
}

/**
 * Drops a node from the ring (`bun run fleet remove`); its pair, if this folder holds one, stays.
 * Returns whether the ring held it. @throws Error when the ring file is malformed.
 */
export async function forgetKey(dataDir: string, node: string): Promise<boolean> {
  checkNode(node);
  const dir = keysDir(dataDir);
  const ring = await readRingFile(dir);
  if (!ring.nodes[node]) return false;
  delete ring.nodes[node];
  await writeRing(dir, ring);
  return true;
}

/** The key id of a public key in base64url, or undefined when it is not 32 bytes. */
export function kidOf(publicKey: string): string | undefined {
  const pub = fromB64url(publicKey, 32);
  return pub ? keyId(pub) : undefined;
}

/** The public keys the ring pins for a node (base64url), none when it is not there. */
export async function pinnedKeys(dataDir: string, node: string): Promise<string[]> {
  checkNode(node);
  return ((await readRingFile(keysDir(dataDir))).nodes[node]?.keys ?? []).map((k) => k.publicKey);
}

function requireMember(fleet: Fleet, node: string): void {
  checkNode(node);
  if (!members(fleet).includes(node)) throw new Error(`keys: ${node} is not a fleet member`);
}

/**
 * Gives a node a new pair. The ring keeps the previous public key next to the new one so peers
 * that still see the old signature keep accepting it until `retireKeys`.
 * @throws Error when the node is not a fleet member or the files are malformed.
 */
export async function rotateKey(
  dataDir: string,
  fleet: Fleet,
  node: string,
  opts: KeyOptions = {},
) {
  requireMember(fleet, node);
  const dir = keysDir(dataDir);
  const ring = await readRingFile(dir);
  // Keep the pair being replaced: peers that still hold the old ring derive their pair key from it.
  const current = await readPrivateKey(dir, node);
  if (current) await writeKeyFile(join(dir, previousKeyFile(node)), current.text, 0o600, false);
  const key = (await newPrivateKey(dir, node, (opts.now ?? (() => new Date()))(), true))!;
  const previous = ring.nodes[node]?.keys ?? [];
  ring.nodes[node] = { mode: 'ed25519', keys: [key, ...previous].slice(0, MAX_RING_KEYS) };
  await writeRing(dir, ring);
  return { kid: key.kid, ring: ring.nodes[node].keys.map((k) => k.kid) };
}

/** Ends a rotation: the ring keeps only the node's newest key. @throws Error as rotateKey. */
export async function retireKeys(dataDir: string, fleet: Fleet, node: string) {
  requireMember(fleet, node);
  const dir = keysDir(dataDir);
  const ring = await readRingFile(dir);
  const entry = ring.nodes[node];
  if (!entry) throw new Error(`keys: ${node} is not in the ring`);
  const retired = entry.keys.slice(1).map((k) => k.kid);
  entry.keys = entry.keys.slice(0, 1);
  await writeRing(dir, ring);
  await unlink(join(dir, previousKeyFile(node))).catch((e) => {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
  });
  return { kept: entry.keys.map((k) => k.kid), retired };
}

/** Per node: mode and key ids. Safe to print. */
export async function listKeys(
  dataDir: string,
): Promise<{ node: string; mode: RingMode; kids: string[] }[]> {
  const ring = await readRingFile(keysDir(dataDir));
  return Object.entries(ring.nodes).map(([node, e]) => ({
    node,
    mode: e.mode,
    kids: e.keys.map((k) => k.kid),
  }));
}

/**
 * Loads one node's signer and verifier from `<dataDir>/keys/`. The signer signs `pairwise` towards
 * ring members with an Ed25519 key and otherwise in the mode the ring states for this node, so
 * peers never see a downgrade. The verifier accepts `pairwise` with the current and, until it is
 * retired, the previous pair.
 * @throws Error when the ring is missing or lacks the node (run `bun run keys`), or a file is malformed.
 */
export async function loadPeerIdentity(
  dataDir: string,
  node: string,
  opts: Omit<VerifierOptions, 'self' | 'ring' | 'secret' | 'seeds'> = {},
): Promise<{ signer: PeerSigner; verifier: PeerVerifier; ring: PeerRing }> {
  checkNode(node);
  const dir = keysDir(dataDir);
  if ((await readText(join(dir, RING_FILE))) === undefined)
    throw new Error(`keys: no ${RING_FILE} in ${dir}; run \`bun run keys\``);
  const ring = parseRing(await readRingFile(dir));
  const entry = ring.get(node);
  if (!entry) throw new Error(`keys: ${node} is not in the ring; run \`bun run keys\``);
  const secret = await readSecret(dir);
  const seed = entry.mode === 'ed25519' ? (await readPrivateKey(dir, node))?.seed : undefined;
  if (entry.mode === 'ed25519' && !seed)
    throw new Error(`keys: ${privateKeyFile(node)} is missing`);
  if (entry.mode !== 'ed25519' && !secret) throw new Error(`keys: ${SECRET_FILE} is missing`);
  // The previous pair counts only while the ring still lists its public key (until retired).
  const previous = seed ? await readPrivateKey(dir, node, previousKeyFile(node)) : undefined;
  const inRing = previous && entry.ed25519.some((k) => toB64url(k) === previous.key.publicKey);
  const seeds = seed ? [seed, ...(inRing ? [previous.seed] : [])] : [];
  const signer = createSigner({
    node,
    secret,
    seed,
    ring,
    mode: entry.mode,
    now: opts.now,
    ed25519: opts.ed25519,
    x25519: opts.x25519,
    hashes: opts.hashes,
  });
  return { signer, verifier: createVerifier({ ...opts, self: node, ring, secret, seeds }), ring };
}

/**
 * Puts the public key a node that runs elsewhere published into the ring (`bun run fleet add`),
 * replacing what the ring held for it. The key id must be the one the key gives.
 * @throws Error when the name, the key or its id is malformed, or the node has a local pair.
 */
export async function trustRemoteKey(
  dataDir: string,
  node: string,
  key: { kid: string; publicKey: string },
  opts: KeyOptions = {},
): Promise<{ kid: string }> {
  checkNode(node);
  const pub = fromB64url(key.publicKey, 32);
  if (!pub) throw new Error('keys: the public key must be 32 bytes in base64url');
  if (keyId(pub) !== key.kid)
    throw new Error(`keys: the key id ${String(key.kid).slice(0, 40)} does not belong to the key`);
  const dir = keysDir(dataDir);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  if (await readText(join(dir, privateKeyFile(node))))
    throw new Error(`keys: ${node} has a key pair here; it is not a remote node`);
  const ring = await readRingFile(dir);
  ring.nodes[node] = {
    mode: 'ed25519',
    keys: [
      {
        kid: key.kid,
        publicKey: key.publicKey,
        created: (opts.now ?? (() => new Date()))().toISOString(),
      },
    ],
  };
  await writeRing(dir, ring);
  return { kid: key.kid };
}

/** Whether this data folder holds the node's own key pair (so it runs here, not elsewhere). */
export async function hasKeyPair(dataDir: string, node: string): Promise<boolean> {
  checkNode(node);
  return (await readText(join(keysDir(dataDir), privateKeyFile(node)))) !== undefined;
}

/** A node's public identity as it publishes it at `GET /peer/identity`: name, mode and ring keys. */
export function publicIdentity(
  node: string,
  ring: PeerRing,
): { node: string; mode: RingMode; keys: { kid: string; publicKey: string }[] } | undefined {
  const entry = ring.get(node);
  if (!entry) return undefined;
  return {
    node,
    mode: entry.mode,
    keys: entry.ed25519.map((k) => ({ kid: keyId(k), publicKey: toB64url(k) })),
  };
}

/**
 * The seeds a node's agent card is signed with: its own pair's and, while the ring still lists
 * it (a rotation not yet retired), the previous pair's, or undefined for a node without a pair.
 * @throws Error when a key file is malformed.
 */
export async function loadCardSeeds(
  dataDir: string,
  node: string,
): Promise<{ current: Uint8Array; previous?: Uint8Array } | undefined> {
  checkNode(node);
  const dir = keysDir(dataDir);
  const own = await readPrivateKey(dir, node);
  if (!own) return undefined;
  const previous = await readPrivateKey(dir, node, previousKeyFile(node));
  const listed = (await readRingFile(dir)).nodes[node]?.keys ?? [];
  const inRing = previous && listed.some((k) => k.publicKey === previous.key.publicKey);
  return inRing ? { current: own.seed, previous: previous.seed } : { current: own.seed };
}
