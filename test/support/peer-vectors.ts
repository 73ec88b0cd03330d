/**
 * Makes fixtures/peer-vectors.json from node:crypto alone, independently of lib/peer: the signed
 * string, HMAC-SHA256, HKDF-SHA256, Ed25519 and X25519 are each computed here the way
 * docs/peer.md states them, and so is the X-Peer-Signature header a request carries. `bun test/support/peer-vectors.ts` rewrites the file;
 * test/peer-vectors.test.ts checks that this output equals the file and that lib/peer reproduces it.
 */

import {
  createHash,
  createHmac,
  createPrivateKey,
  createPublicKey,
  diffieHellman,
  hkdfSync,
  sign,
} from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

const b64 = (b: Uint8Array) => Buffer.from(b).toString('base64url');
const bytes = (from: number) =>
  Buffer.from(Array.from({ length: 32 }, (_, i) => (from + i) & 0xff));
const ED_PKCS8 = Buffer.from('302e020100300506032b657004220420', 'hex');
const X_PKCS8 = Buffer.from('302e020100300506032b656e04220420', 'hex');
const X_SPKI = Buffer.from('302a300506032b656e032100', 'hex');
const raw = (der: Buffer) => der.subarray(der.length - 32);

const secret = bytes(0x00);
const nonce = b64(Buffer.from(Array.from({ length: 16 }, (_, i) => 0xf0 - i)));

/** An Ed25519 identity and its X25519 form: secret = first half of SHA-512(seed) (RFC 8032 5.1.5). */
function identity(seed: Buffer) {
  const edKey = createPrivateKey({
    key: Buffer.concat([ED_PKCS8, seed]),
    format: 'der',
    type: 'pkcs8',
  });
  const xSecret = createHash('sha512').update(seed).digest().subarray(0, 32);
  const xKey = createPrivateKey({
    key: Buffer.concat([X_PKCS8, xSecret]),
    format: 'der',
    type: 'pkcs8',
  });
  return {
    edKey,
    xKey,
    doc: {
      privateKey: b64(seed),
      publicKey: b64(raw(createPublicKey(edKey).export({ format: 'der', type: 'spki' }))),
      x25519Secret: b64(xSecret),
      x25519Public: b64(raw(createPublicKey(xKey).export({ format: 'der', type: 'spki' }))),
    },
  };
}

const ids = {
  a2a: identity(bytes(0x40)),
  crm: identity(bytes(0x60)),
  scanner: identity(bytes(0x80)),
  resolve: identity(bytes(0xa0)),
};
type Name = keyof typeof ids;

function pair(a: Name, b: Name) {
  const peer = createPublicKey({
    key: Buffer.concat([X_SPKI, Buffer.from(ids[b].doc.x25519Public, 'base64url')]),
    format: 'der',
    type: 'spki',
  });
  const shared = diffieHellman({ privateKey: ids[a].xKey, publicKey: peer });
  const [lo, hi] = [a, b].sort();
  const key = Buffer.from(
    hkdfSync('sha256', shared, Buffer.alloc(0), `peer:pairwise:${lo}:${hi}`, 32),
  );
  return { shared, key };
}

type Mode = 'shared' | 'derived' | 'ed25519' | 'pairwise';
function vector(
  mode: Mode,
  node: Name,
  to: Name,
  route: string,
  ts: string,
  scope: string,
  body: string,
) {
  const bodySha256 = createHash('sha256').update(body, 'utf8').digest('hex');
  const signedString = [node, ts, nonce, scope, to, route, bodySha256].join('\n');
  const mac = (key: Buffer) =>
    createHmac('sha256', key).update(signedString, 'utf8').digest('base64url');
  const extra: Record<string, string> = {};
  let signature: string;
  if (mode === 'shared') signature = mac(secret);
  else if (mode === 'derived') {
    const key = Buffer.from(hkdfSync('sha256', secret, Buffer.alloc(0), `peer:${node}`, 32));
    extra.derivedKey = b64(key);
    signature = mac(key);
  } else if (mode === 'ed25519')
    signature = b64(sign(null, Buffer.from(signedString, 'utf8'), ids[node].edKey));
  else {
    const mine = pair(node, to);
    const theirs = pair(to, node);
    if (!mine.key.equals(theirs.key)) throw new Error('X25519 agreement is not symmetric');
    extra.sharedSecret = b64(mine.shared);
    extra.pairKey = b64(mine.key);
    signature = mac(mine.key);
  }
  return {
    mode,
    node,
    to,
    route,
    ts,
    nonce,
    scope,
    body,
    ...extra,
    bodySha256,
    signedString,
    signature,
    header: `v1 node=${node} ts=${ts} nonce=${nonce} scope=${scope} to=${to} route=${route} mode=${mode} sig=${signature}`,
  };
}

export function makePeerVectors() {
  return {
    about:
      'Known-answer vectors of the signed peer channel (docs/peer.md), made by test/support/peer-vectors.ts with node:crypto only ' +
      '(HMAC-SHA256; HKDF-SHA256 with empty salt; Ed25519 from a PKCS#8 seed; X25519 with the secret = first 32 bytes of SHA-512(seed)), ' +
      'independently of lib/peer; test/peer-vectors.test.ts recomputes them. Bodies are UTF-8; binary values are base64url without padding; `header` is the X-Peer-Signature value the request carries.',
    fleetSecret: b64(secret),
    identities: Object.fromEntries(Object.entries(ids).map(([n, id]) => [n, id.doc])),
    vectors: [
      vector(
        'shared',
        'crm',
        'scanner',
        '/peer/invoke',
        '1735689600000',
        'customer.reach',
        '{"capability":"customer.reach","args":{"industry":"semiconductors"}}',
      ),
      vector(
        'derived',
        'scanner',
        'a2a',
        '/peer/invoke',
        '1735689660123',
        'sector.movement',
        '{"capability":"sector.movement","args":{"sector":"半导体","limit":5}}',
      ),
      vector(
        'ed25519',
        'a2a',
        'resolve',
        '/peer/invoke',
        '1735689720999',
        'exec.submit',
        '{"capability":"exec.submit","args":{"recipe":"echo","prompt":"hi\\nthere"}}',
      ),
      vector('shared', 'a2a', 'crm', '/peer/invoke', '1735689600001', 'node.capabilities', ''),
      vector(
        'pairwise',
        'crm',
        'scanner',
        '/peer/invoke',
        '1735689780000',
        'sector.movement',
        '{"capability":"sector.movement","args":{"sector":"chips"}}',
      ),
      vector(
        'pairwise',
        'scanner',
        'a2a',
        '/peer/relay',
        '1735689780001',
        'relay:customer.reach',
        '{"route":["crm"],"capability":"customer.reach","args":{},"trail":[]}',
      ),
      vector(
        'pairwise',
        'a2a',
        'resolve',
        '/peer/invoke',
        '1735689780002',
        'exec.submit',
        '{"capability":"exec.submit","args":{"recipe":"echo","prompt":"héllo"}}',
      ),
    ],
  };
}

if (import.meta.main) {
  const path = join(import.meta.dir, '..', '..', 'fixtures', 'peer-vectors.json');
  writeFileSync(path, `${JSON.stringify(makePeerVectors(), null, 2)}\n`);
  console.log(`written to ${path}`);
}
