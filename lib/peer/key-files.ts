/**
 * @module lib/peer/key-files — the files of the signed peer channel under `<dataDir>/keys/` and
 * their formats (docs/peer.md): the fleet secret, each member's Ed25519 pair (and the one a
 * rotation replaced), and the public key ring, read strictly and written through a temporary file.
 */

import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createHash } from 'node:crypto';
import { randomBytes } from '@noble/hashes/utils.js';
import { writeFileAtomic } from '../atomic-file.ts';
import { NODE_NAME, type PeerRing, type RingEntry, type RingMode } from './signature.ts';
import { fromB64url, toB64url } from './base64url.ts';
import {
  boolean,
  checkShape,
  isPlainObject,
  listOf,
  member,
  oneOf,
  optional,
  plainObject,
  ShapeError,
  type Guard,
} from '../json/guards.ts';
import { ed25519PublicKey } from './ed25519.ts';

export const SECRET_FILE = 'fleet.secret';
export const RING_FILE = 'ring.json';
export const privateKeyFile = (node: string) => `${node}.ed25519.json`;
/** The pair a rotation replaced: still answers `pairwise` requests made with the old ring until retired. */
export const previousKeyFile = (node: string) => `${node}.ed25519.previous.json`;
/** Most public keys one node may have in the ring: the current one and the one being retired. */
export const MAX_RING_KEYS = 2;

export interface RingKey {
  kid: string;
  publicKey: string;
  created: string;
}
export interface RingFileEntry {
  mode: RingMode;
  keys: RingKey[];
}
export interface RingFile {
  version: 1;
  nodes: Record<string, RingFileEntry>;
}
export interface PrivateKeyFile {
  node: string;
  kid: string;
  created: string;
  privateKey: string;
  publicKey: string;
}

/**
 * A public, stable short name for a key: it may be logged, the key bytes may not. The hash is
 * native: a fleet's keys hashed in JavaScript at start ran hot enough to be JIT-compiled.
 */
export function keyId(publicKey: Uint8Array): string {
  return `ed25519:${createHash('sha256').update(publicKey).digest('hex').slice(0, 16)}`;
}

export const keysDir = (dataDir: string) => join(dataDir, 'keys');

export function checkNode(node: string): void {
  if (!NODE_NAME.test(node)) throw new Error('keys: invalid node name');
}

/**
 * Validates a ring document and converts it to the verifier's form.
 * @throws Error naming the first problem (a configuration error, never key material).
 */
export function parseRing(doc: unknown): PeerRing {
  if (!isPlainObject(doc) || doc.version !== 1 || !isPlainObject(doc.nodes))
    throw new Error('ring: expected { version: 1, nodes: {...} }');
  const d = { nodes: doc.nodes };
  const ring = new Map<string, RingEntry>();
  for (const [node, raw] of Object.entries(d.nodes)) {
    if (!NODE_NAME.test(node))
      throw new Error(`ring: invalid node name ${JSON.stringify(node.slice(0, 40))}`);
    const checked = checkShape(() => ringEntry(raw, node));
    if (!checked.ok) throw new Error(`ring: ${checked.message}`);
    ring.set(node, checked.value);
  }
  return ring;
}

const MODES = ['ed25519', 'derived', 'shared'] as const;
const publicKey: Guard<Uint8Array> = (v, path) => {
  const pub = typeof v === 'string' ? fromB64url(v, 32) : undefined;
  if (!pub) throw new ShapeError(path, `${path} must be 32 bytes in base64url`);
  return pub;
};

/** One node's entry of the ring, checked with the shared guards. */
function ringEntry(raw: unknown, node: string): RingEntry {
  const e = plainObject(raw, node);
  const mode = member(e, 'mode', node, oneOf(MODES));
  const keys = member(
    e,
    'keys',
    node,
    listOf((k, path) => member(plainObject(k, path), 'publicKey', path, publicKey), MAX_RING_KEYS),
  );
  if (mode === 'ed25519' && keys.length === 0)
    throw new ShapeError(node, `${node} is ed25519 but has no key`);
  const relay = member(e, 'relay', node, optional(boolean));
  return Object.freeze({
    mode,
    ed25519: Object.freeze(keys),
    ...(relay ? { relay: true } : {}),
  });
}

export async function readText(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw e;
  }
}

/** Writes through a temporary file; `exclusive` keeps an existing file (returns false then). */
export function writeKeyFile(
  path: string,
  text: string,
  mode: number,
  exclusive: boolean,
): Promise<boolean> {
  return writeFileAtomic(path, text, { mode, ifAbsent: exclusive });
}

export async function readSecret(dir: string): Promise<Uint8Array | undefined> {
  const text = await readText(join(dir, SECRET_FILE));
  if (text === undefined) return undefined;
  const secret = fromB64url(text.trim(), 32);
  if (!secret) throw new Error(`keys: ${SECRET_FILE} is not 32 bytes in base64url`);
  return secret;
}

export async function readPrivateKey(
  dir: string,
  node: string,
  file = privateKeyFile(node),
): Promise<{ seed: Uint8Array; key: RingKey; text: string } | undefined> {
  const text = await readText(join(dir, file));
  if (text === undefined) return undefined;
  let doc: Partial<PrivateKeyFile>;
  try {
    doc = JSON.parse(text);
  } catch {
    throw new Error(`keys: ${file} is not JSON`);
  }
  const seed = typeof doc.privateKey === 'string' ? fromB64url(doc.privateKey, 32) : undefined;
  if (!seed || doc.node !== node) throw new Error(`keys: ${file} is malformed`);
  const pub = ed25519PublicKey(seed);
  return {
    seed,
    key: { kid: keyId(pub), publicKey: toB64url(pub), created: String(doc.created ?? '') },
    text,
  };
}

export async function newPrivateKey(
  dir: string,
  node: string,
  now: Date,
  replace: boolean,
): Promise<RingKey | undefined> {
  const seed = randomBytes(32);
  const pub = ed25519PublicKey(seed);
  const file: PrivateKeyFile = {
    node,
    kid: keyId(pub),
    created: now.toISOString(),
    privateKey: toB64url(seed),
    publicKey: toB64url(pub),
  };
  const written = await writeKeyFile(
    join(dir, privateKeyFile(node)),
    `${JSON.stringify(file, null, 2)}\n`,
    0o600,
    !replace,
  );
  return written ? { kid: file.kid, publicKey: file.publicKey, created: file.created } : undefined;
}

export async function readRingFile(dir: string): Promise<RingFile> {
  const text = await readText(join(dir, RING_FILE));
  if (text === undefined) return { version: 1, nodes: {} };
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    throw new Error(`keys: ${RING_FILE} is not JSON`);
  }
  parseRing(doc); // validates; the file form is kept for rewriting
  return doc as RingFile;
}

export const writeRing = (dir: string, ring: RingFile) =>
  writeKeyFile(join(dir, RING_FILE), `${JSON.stringify(ring, null, 2)}\n`, 0o644, false);
