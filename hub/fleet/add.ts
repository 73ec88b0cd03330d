/**
 * @module hub/fleet/add — `bun run fleet add <name> --url <base-url>`: registers a node that runs
 * elsewhere. Its agent card must name it and point at that URL, its public key (from
 * `GET /peer/identity`) goes into the ring, and the fleet file gains a `remote` entry. Named after
 * the fleet's hub, it is the other direction: a node's operator trusts a hub run elsewhere, whose
 * entry becomes remote. The fleet file written is FLEET_FILE when set, else `DATA_DIR/fleet.json`
 * (started from the fleet read so far); `fixtures/` is never edited.
 */

import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { writeFileAtomic } from '../../lib/atomic-file.ts';
import { PRINCIPAL_NAME } from '../../lib/auth/principal.ts';
import { readBodyBytes } from '../../lib/body.ts';
import { HUB_ERRORS } from '../../lib/errors/hub.ts';
import type { Failure, Result } from '../../lib/errors/result.ts';
import { parseFleet } from '../../lib/config/fleet-file.ts';
import { hasKeyPair, trustRemoteKey } from '../../lib/peer/keys.ts';

type AddCode = keyof typeof HUB_ERRORS;

export interface AddRemoteOptions {
  name: string;
  url: string;
  /** The role line the console shows (default: the card's description). */
  role?: string;
  /** The key id the node's operator gave out of band; the published key must have it. */
  kid?: string;
  /** The fleet file read now (FLEET_FILE, DATA_DIR/fleet.json or fixtures/fleet.json). */
  from: string;
  /** The fleet file written. */
  to: string;
  dataDir: string;
  fetch?: typeof fetch;
  timeoutMs?: number;
}

const MAX_ANSWER = 256 * 1024;
const fail = (code: AddCode, detail?: string): { ok: false; error: Failure } => ({
  ok: false,
  error: {
    code,
    message: detail ? `${HUB_ERRORS[code].message}: ${detail}` : HUB_ERRORS[code].message,
  },
});

/** GETs a small JSON document; undefined when the node does not answer with one. */
export async function getJson(
  url: string,
  o: Pick<AddRemoteOptions, 'fetch' | 'timeoutMs'>,
): Promise<unknown> {
  try {
    const res = await (o.fetch ?? fetch)(url, {
      signal: AbortSignal.timeout(o.timeoutMs ?? 5000),
      redirect: 'error',
    });
    const bytes = res.ok ? await readBodyBytes(res, MAX_ANSWER) : undefined;
    return bytes ? JSON.parse(new TextDecoder().decode(bytes)) : undefined;
  } catch {
    return undefined;
  }
}

/** The base URL, or undefined when it is not plain http(s)://host[:port]. */
export function baseUrl(text: string): URL | undefined {
  try {
    const u = new URL(text);
    const plain =
      (u.protocol === 'http:' || u.protocol === 'https:') &&
      (u.pathname === '/' || u.pathname === '') &&
      !u.search &&
      !u.hash &&
      !u.username &&
      !u.password;
    return plain ? u : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Whether a card's interfaces are the node's at `base`: the HTTP ones under its URL, the gRPC one
 * (`host:port`, its own port) on the same host.
 */
export function interfacesUnder(interfaces: unknown, base: URL): boolean {
  const list = Array.isArray(interfaces) ? (interfaces as Record<string, unknown>[]) : [];
  return (
    list.length > 0 &&
    list.every((i) => {
      const u = i?.url;
      if (typeof u !== 'string') return false;
      // gRPC is served on a port of its own, so its interface only has to be on the node's host.
      if (i.protocolBinding === 'GRPC') {
        try {
          return new URL(u.includes('://') ? u : `http://${u}`).hostname === base.hostname;
        } catch {
          return false;
        }
      }
      return u === base.origin || u.startsWith(`${base.origin}/`);
    })
  );
}

export async function addRemoteNode(
  o: AddRemoteOptions,
): Promise<Result<{ name: string; url: string; kid: string; file: string }>> {
  if (!PRINCIPAL_NAME.test(o.name)) return fail('FLEET_ADD_BAD_NAME');
  const url = baseUrl(o.url);
  if (!url) return fail('FLEET_ADD_BAD_URL');
  const base = url.origin;
  const doc = JSON.parse(readFileSync(o.from, 'utf8')) as {
    hub: unknown;
    nodes: Record<string, unknown>[];
  };
  const fleet = parseFleet(doc);
  const existing = [fleet.hub, ...fleet.nodes].find((m) => m.name === o.name);
  // The fleet's hub may be named where this machine holds no key pair for it (a node's side).
  const isHub = fleet.hub.name === o.name;
  if (existing && !existing.remote && (!isHub || (await hasKeyPair(o.dataDir, o.name))))
    return fail('FLEET_ADD_NAME_TAKEN', o.name);

  // The card: it must be this node's, answering at this URL.
  const card = (await getJson(`${base}/.well-known/agent-card.json`, o)) as
    | {
        name?: unknown;
        description?: unknown;
        supportedInterfaces?: { url?: unknown; protocolBinding?: unknown }[];
      }
    | undefined;
  if (!card || card.name !== o.name)
    return fail(
      'FLEET_ADD_CARD_MISMATCH',
      card ? `the card names ${JSON.stringify(String(card.name).slice(0, 40))}` : 'no agent card',
    );
  if (!interfacesUnder(card.supportedInterfaces, url))
    return fail('FLEET_ADD_CARD_MISMATCH', `the card's interfaces are not under ${base}`);

  // The key: published by the node itself, checked against the id given out of band when there is one.
  const identity = (await getJson(`${base}/peer/identity`, o)) as
    | { node?: unknown; mode?: unknown; keys?: { kid?: unknown; publicKey?: unknown }[] }
    | undefined;
  const key =
    identity?.node === o.name && identity.mode === 'ed25519' && Array.isArray(identity.keys)
      ? identity.keys[0]
      : undefined;
  if (!key || typeof key.kid !== 'string' || typeof key.publicKey !== 'string')
    return fail('FLEET_ADD_NO_KEY');
  if (o.kid && o.kid !== key.kid)
    return fail('FLEET_ADD_KEY_MISMATCH', `expected ${o.kid}, got ${key.kid}`);
  try {
    await trustRemoteKey(o.dataDir, o.name, { kid: key.kid, publicKey: key.publicKey });
  } catch (e) {
    return fail('FLEET_ADD_NO_KEY', (e as Error).message);
  }

  // The fleet file: the entry replaces an earlier remote one of the same name.
  const copied = o.to !== o.from;
  const fromDir = dirname(resolve(o.from));
  // A copy elsewhere keeps naming the same node files: `./…` paths become absolute.
  const keepFile = (m: Record<string, unknown>) =>
    copied && typeof m.file === 'string' && /^\.\.?\//.test(m.file)
      ? { ...m, file: resolve(fromDir, m.file) }
      : m;
  const entry = {
    name: o.name,
    port: Number(url.port || (url.protocol === 'https:' ? 443 : 80)),
    role: (o.role ?? (typeof card.description === 'string' ? card.description : o.name)).slice(
      0,
      200,
    ),
    file: '',
    url: base,
    remote: true,
  };
  const next = isHub
    ? {
        ...doc,
        hub: {
          ...(doc.hub as Record<string, unknown>),
          ...entry,
          ...(o.role ? {} : { role: fleet.hub.role }),
        },
        nodes: doc.nodes.map(keepFile),
      }
    : {
        ...doc,
        hub: keepFile(doc.hub as Record<string, unknown>),
        nodes: [...doc.nodes.filter((n) => n.name !== o.name).map(keepFile), entry],
      };
  parseFleet(next);
  await writeFileAtomic(o.to, `${JSON.stringify(next, null, 2)}\n`, { mode: 0o644 });
  return { ok: true, result: { name: o.name, url: base, kid: key.kid, file: o.to } };
}

/** Where `fleet add` writes: FLEET_FILE when set, else DATA_DIR/fleet.json. */
export function addTarget(fleetFileEnv: string | undefined, dataDir: string): string {
  return fleetFileEnv ? resolve(fleetFileEnv) : resolve(dataDir, 'fleet.json');
}
