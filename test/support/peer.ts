/** Test harness for the peer channel: a small fleet of real Bun servers on port 0 with fresh keys. */

import { parseFleet, type Fleet } from '../../lib/config/fleet-file.ts';
import { memoryLog } from '../../lib/log.ts';
import { createPeerClient, type PeerClient } from '../../lib/peer/client.ts';
import {
  handlePeerInvoke,
  handlePeerRelay,
  type PeerRouteDeps,
} from '../../lib/fleet/peer-routes.ts';
import type { Result } from '../../lib/errors/result.ts';
import type { PeerMode, PeerRing, RingEntry, RingMode } from '../../lib/peer/signature.ts';
import { toB64url } from '../../lib/peer/base64url.ts';
import { ed25519PublicKey } from '../../lib/peer/ed25519.ts';
import { createVerifier } from '../../lib/peer/verifier.ts';
import { createSigner, type PeerSigner } from '../../lib/peer/signer.ts';

export interface TestNode {
  name: string;
  url: string;
  seed: Uint8Array;
  signer: PeerSigner;
  client: PeerClient;
  /** Capabilities this node has dispatched, in order: what actually ran. */
  calls: string[];
  log: ReturnType<typeof memoryLog>;
  server: ReturnType<typeof Bun.serve>;
}

export interface TestFleet {
  fleet: Fleet;
  secret: Uint8Array;
  /** The ring every node loaded (strangers excepted per node). */
  ring: PeerRing;
  nodes: Record<string, TestNode>;
  /** Every key byte string of the fleet, in the encodings a leak would take. */
  secrets(): string[];
  stop(): void;
}

/** Capabilities every test node offers; `hang` never answers (for timeouts); `caller` says who asked, for whom. */
export function testDispatch(self: string, calls: string[] = []) {
  return async (
    capability: string,
    args: Record<string, unknown>,
    from?: { node: string; onBehalfOf?: string },
  ): Promise<Result> => {
    calls.push(capability);
    switch (capability) {
      case 'caller':
        return {
          ok: true,
          result: { node: self, from: from?.node, onBehalfOf: from?.onBehalfOf ?? null },
        };
      case 'echo':
        return { ok: true, result: { node: self, args } };
      case 'whoami':
        return { ok: true, result: self };
      case 'fail':
        return {
          ok: false,
          error: { code: 'CAP_FAILED', message: 'this capability always fails' },
        };
      case 'crash':
        throw new Error('boom with secret detail');
      case 'hang':
        return new Promise<never>(() => {});
      default:
        return {
          ok: false,
          error: { code: 'CAP_UNKNOWN', message: `no capability ${capability}` },
        };
    }
  };
}

export interface FleetOptions {
  /** Ring mode per node (default ed25519 for every node). */
  modes?: Record<string, RingMode>;
  now?: () => number;
  windowMs?: number;
  maxBodyBytes?: number;
  maxHops?: number;
  /** Nodes left out of everyone's ring (they can sign but nobody knows them). */
  unknown?: string[];
  /** Per node, callers left out of that node's ring only. */
  strangers?: Record<string, string[]>;
  /** Nodes the ring marks relays (they may name the principal they forward for). */
  relays?: string[];
}

/** Starts one server per name; the first name plays the hub. Stop with `stop()`. */
export function startFleet(names: string[], o: FleetOptions = {}): TestFleet {
  const secret = crypto.getRandomValues(new Uint8Array(32));
  const seeds = Object.fromEntries(
    names.map((n) => [n, crypto.getRandomValues(new Uint8Array(32))]),
  );
  const ring = new Map<string, RingEntry>();
  for (const n of names) {
    if (o.unknown?.includes(n)) continue;
    const mode = o.modes?.[n] ?? 'ed25519';
    ring.set(n, {
      mode,
      ed25519: mode === 'ed25519' ? [ed25519PublicKey(seeds[n]!)] : [],
      ...(o.relays?.includes(n) ? { relay: true } : {}),
    });
  }
  const depsByName: Record<string, PeerRouteDeps> = {};
  const servers = names.map((name) =>
    Bun.serve({
      port: 0,
      hostname: '127.0.0.1',
      fetch(req) {
        const path = new URL(req.url).pathname;
        const deps = depsByName[name]!;
        if (path === '/peer/invoke') return handlePeerInvoke(req, deps);
        if (path === '/peer/relay') return handlePeerRelay(req, deps);
        return new Response('not found', { status: 404 });
      },
    }),
  );
  const fleet = parseFleet({
    hub: { name: names[0], port: servers[0]!.port, role: 'test hub', file: 'hub/main.ts' },
    nodes: names.slice(1).map((name, i) => ({
      name,
      port: servers[i + 1]!.port,
      role: 'test node',
      file: `node/${name}.ts`,
    })),
  });
  const nodes: Record<string, TestNode> = {};
  names.forEach((name, i) => {
    const log = memoryLog();
    const mode = o.modes?.[name] ?? 'ed25519';
    // As loadPeerIdentity does: only a node whose ring entry is ed25519 holds its pair.
    const seed = mode === 'ed25519' ? seeds[name] : undefined;
    const signer = createSigner({ node: name, secret, seed, ring, mode, now: o.now });
    const client = createPeerClient({ signer, fleet, log });
    const own = new Map([...ring].filter(([caller]) => !o.strangers?.[name]?.includes(caller)));
    const verifier = createVerifier({
      self: name,
      ring: own,
      secret,
      seeds: seed ? [seed] : [],
      now: o.now,
      windowMs: o.windowMs,
    });
    const calls: string[] = [];
    depsByName[name] = {
      self: name,
      verifier,
      dispatch: testDispatch(name, calls),
      client,
      fleet,
      log,
      maxBodyBytes: o.maxBodyBytes,
      maxHops: o.maxHops,
      relayTimeout: 500, // only the 'hang' capability ever gets near it
    };
    const url = `http://127.0.0.1:${servers[i]!.port}`;
    nameOfUrl.set(url, name);
    nodes[name] = {
      name,
      url,
      seed: seeds[name]!,
      signer,
      client,
      calls,
      log,
      server: servers[i]!,
    };
  });
  const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');
  const forms = (b: Uint8Array) => [
    toB64url(b),
    hex(b),
    Buffer.from(b).toString('base64').replace(/=+$/, ''),
  ];
  return {
    fleet,
    secret,
    ring,
    nodes,
    secrets: () => [secret, ...Object.values(seeds)].flatMap(forms),
    stop: () => servers.forEach((s) => s.stop(true)),
  };
}

/** Test fleet URLs by node name, so a signed post names its receiver without being told. */
const nameOfUrl = new Map<string, string>();

/** The fields of an X-Peer-Signature value (`v1 name=value …`), in the order they came. */
export function signatureFields(value: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of value.split(' ').slice(1)) {
    const eq = part.indexOf('=');
    out[part.slice(0, eq)] = part.slice(eq + 1);
  }
  return out;
}

/** An X-Peer-Signature value made of `fields`, in their order (an edit may drop or add some). */
export const signatureValue = (fields: Record<string, string>) =>
  ['v1', ...Object.entries(fields).map(([k, v]) => `${k}=${v}`)].join(' ');

/**
 * Signs `body` as `signer` and posts it to `url` + `path`, with optional edits: `edit` changes
 * the signature's fields (node, ts, nonce, scope, to, route, mode, sig), `raw` the whole header
 * value (undefined drops the header). The signature names the node serving `url` and `path`
 * unless `to` / `route` say otherwise. The answer comes with the fields as sent.
 */
export async function signedPost(
  signer: PeerSigner,
  url: string,
  scope: string,
  body: string | Uint8Array,
  o: {
    path?: string;
    to?: string;
    route?: string;
    mode?: PeerMode;
    ts?: number;
    nonce?: string;
    edit?: (fields: Record<string, string>) => void;
    raw?: (value: string) => string | undefined;
    send?: string;
  } = {},
): Promise<{
  status: number;
  body: any;
  text: string;
  fields: Record<string, string>;
  headers: Record<string, string>;
}> {
  const bytes = typeof body === 'string' ? new TextEncoder().encode(body) : body;
  const to = o.to ?? nameOfUrl.get(url) ?? 'unknown';
  const route = o.route ?? o.path ?? '/peer/invoke';
  const signed = await signer.sign({ to, route, scope }, bytes, {
    mode: o.mode,
    ts: o.ts,
    nonce: o.nonce,
  });
  const fields = signatureFields(signed['x-peer-signature']!);
  o.edit?.(fields);
  const value = o.raw ? o.raw(signatureValue(fields)) : signatureValue(fields);
  const headers: Record<string, string> = value === undefined ? {} : { 'x-peer-signature': value };
  const res = await fetch(url + (o.path ?? '/peer/invoke'), {
    method: 'POST',
    headers,
    body: o.send ?? (bytes as Uint8Array<ArrayBuffer>),
  });
  const text = await res.text();
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  return { status: res.status, body: parsed, text, fields, headers };
}

export const invokeBody = (capability: string, args: unknown = {}) =>
  JSON.stringify({ capability, args });
