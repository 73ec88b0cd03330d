/**
 * @module hub/fleet/join — the hub's `POST /peer/join`: a node run elsewhere presents its name,
 * base URL and Ed25519 public key with a bearer token, the request signed with that key. The hub
 * checks the token, the proof, that the node at that URL is the one asking (its card names it and
 * it publishes that key), and that the name is free or already this key's; then it pins the key in
 * its ring, writes the node into its fleet file and calls it from then on. Joins run one at a
 * time, so the fleet file and the ring stay whole; `sync` picks up `bun run fleet remove`.
 */

import { statSync } from 'node:fs';
import { join } from 'node:path';
import type { AuthOutcome } from '../../lib/auth/access.ts';
import { readBodyBytes } from '../../lib/body.ts';
import { JOIN_ERRORS, type JoinErrorCode } from '../../lib/errors/join.ts';
import { statusOf } from '../../lib/errors/registry.ts';
import { JOIN_ROUTE } from '../../lib/fleet/join.ts';
import { loadFleet, type Fleet } from '../../lib/fleet/config.ts';
import type { Log } from '../../lib/log.ts';
import { hasKeyPair, kidOf, pinnedKeys, trustRemoteKey } from '../../lib/peer/keys.ts';
import { NODE_NAME } from '../../lib/peer/signature.ts';
import { fromB64url } from '../../lib/peer/base64url.ts';
import { createVerifier } from '../../lib/peer/verifier.ts';
import { baseUrl, getJson, interfacesUnder } from './add.ts';
import { editableFleet, saveFleet } from './fleet-file.ts';

export interface JoinServiceOptions {
  /** The hub's live fleet: a join adds to its nodes in place. */
  fleet: Fleet;
  /** The fleet file read at start, and the one written (they differ when the first is fixtures/). */
  from: string;
  to: string;
  dataDir: string;
  /** Loads the hub's ring again after it changed. */
  reload: () => Promise<void>;
  /** Who sent the request: only a bearer token's principal may join a node. */
  authenticate: (req: Request) => AuthOutcome;
  log: Log;
  fetch?: typeof fetch;
  timeoutMs?: number;
  /** Joins waiting for their turn at most (default 16); more get JOIN_BUSY. */
  maxWaiting?: number;
}

const MAX_BODY = 4 * 1024;
const json = (body: unknown, status = 200, headers: Record<string, string> = {}) =>
  Response.json(body, { status, headers: { 'cache-control': 'no-store', ...headers } });
const refuse = (code: JoinErrorCode | 'UNAUTHENTICATED', detail?: string) =>
  json(
    {
      ok: false,
      error: {
        code,
        message:
          code === 'UNAUTHENTICATED'
            ? `joining the fleet needs a bearer token made on the hub's machine (bun run keys token add <name>)${detail ? `: ${detail}` : ''}`
            : detail
              ? `${JOIN_ERRORS[code].message}: ${detail}`
              : JOIN_ERRORS[code].message,
      },
    },
    statusOf(code),
    code === 'UNAUTHENTICATED' ? { 'www-authenticate': 'Bearer realm="lume-a2a"' } : {},
  );

interface Presented {
  name: string;
  url: string;
  kid: string;
  publicKey: string;
}

function presented(doc: unknown): Presented | undefined {
  const d = doc as Record<string, unknown> | null;
  if (!d || typeof d !== 'object' || Array.isArray(d)) return undefined;
  const { name, url, publicKey, kid } = d;
  if (typeof name !== 'string' || !NODE_NAME.test(name)) return undefined;
  const base = typeof url === 'string' ? baseUrl(url) : undefined;
  const id = typeof publicKey === 'string' ? kidOf(publicKey) : undefined;
  if (!base || !id || (kid !== undefined && kid !== id)) return undefined;
  return { name, url: base.origin, kid: id, publicKey: publicKey as string };
}

/** The answer of a hub that takes no joins (created without a writable fleet file). */
export const joinsNotOffered = (): Response => refuse('JOIN_NOT_OFFERED');

export function createJoinService(o: JoinServiceOptions) {
  const self = o.fleet.hub.name;
  const maxWaiting = o.maxWaiting ?? 16;
  let queue: Promise<unknown> = Promise.resolve();
  let waiting = 0;
  /** Runs `fn` after every join before it: one writer of the fleet file and the ring at a time. */
  const serialized = <T>(fn: () => Promise<T>): Promise<T> => {
    waiting++;
    const run = queue.then(fn).finally(() => waiting--);
    queue = run.catch(() => {});
    return run;
  };

  /** Takes the fleet file and ring from disk into the running hub. */
  async function apply(): Promise<void> {
    const fresh = await loadFleet(o.to);
    o.fleet.nodes.splice(0, o.fleet.nodes.length, ...fresh.nodes);
    await o.reload();
  }

  /** The node at that URL must be the one asking: its card names it, it publishes that key. */
  async function checkUrl(p: Presented): Promise<Response | { role: string }> {
    const opts = { ...(o.fetch ? { fetch: o.fetch } : {}), timeoutMs: o.timeoutMs ?? 5000 };
    const [card, identity] = (await Promise.all([
      getJson(`${p.url}/.well-known/agent-card.json`, opts),
      getJson(`${p.url}/peer/identity`, opts),
    ])) as [
      { name?: unknown; supportedInterfaces?: unknown } | undefined,
      { node?: unknown; keys?: { publicKey?: unknown }[] } | undefined,
    ];
    if (!card && !identity) return refuse('JOIN_URL_UNREACHABLE', p.url);
    if (card?.name !== p.name || identity?.node !== p.name)
      return refuse('JOIN_URL_NOT_YOURS', `the node at ${p.url} is not ${p.name}`);
    if (!interfacesUnder(card.supportedInterfaces, new URL(p.url)))
      return refuse('JOIN_URL_NOT_YOURS', `its card's interfaces are not under ${p.url}`);
    const keys = Array.isArray(identity.keys) ? identity.keys : [];
    if (!keys.some((k) => k?.publicKey === p.publicKey))
      return refuse('JOIN_URL_NOT_YOURS', `the node at ${p.url} publishes another key`);
    const description = (card as { description?: unknown }).description;
    return { role: typeof description === 'string' ? description.slice(0, 200) : p.name };
  }

  /** Checks the name against the fleet on disk and writes the node in. */
  async function admit(p: Presented, by: string, role: string): Promise<Response> {
    const doc = editableFleet(o.from, o.to);
    const hubName = (doc.hub as { name?: unknown }).name;
    const existing = doc.nodes.find((n) => n.name === p.name);
    const fix = `it is ${p.name}'s name here; to give it to this key, run \`bun run fleet remove ${p.name}\` on the hub and join again, or name the node otherwise`;
    if (
      hubName === p.name ||
      (await hasKeyPair(o.dataDir, p.name)) ||
      (existing && existing.remote !== true)
    )
      return refuse('JOIN_NAME_TAKEN', `${p.name} runs with this hub; name the node otherwise`);
    const pinned = await pinnedKeys(o.dataDir, p.name);
    if (pinned.length && !pinned.includes(p.publicKey)) return refuse('JOIN_NAME_TAKEN', fix);
    const status = !existing
      ? 'added'
      : existing.url === p.url && pinned.length
        ? 'unchanged'
        : 'updated';
    if (status !== 'unchanged') {
      if (!pinned.length) await trustRemoteKey(o.dataDir, p.name, p);
      const u = new URL(p.url);
      const entry = {
        name: p.name,
        port: Number(u.port || (u.protocol === 'https:' ? 443 : 80)),
        role,
        file: '',
        url: p.url,
        remote: true,
      };
      await saveFleet(o.to, {
        ...doc,
        nodes: [...doc.nodes.filter((n) => n.name !== p.name), entry],
      });
      o.log('info', `fleet: ${p.name} joined (${status})`, { url: p.url, kid: p.kid, by });
    }
    await apply();
    return json({ ok: true, result: { hub: self, node: p.name, url: p.url, kid: p.kid, status } });
  }

  return {
    /** Answers `POST /peer/join`; undefined for any other path. */
    async fetch(req: Request): Promise<Response | undefined> {
      if (new URL(req.url).pathname !== JOIN_ROUTE) return undefined;
      if (req.method !== 'POST')
        return json(
          { ok: false, error: { code: 'METHOD_NOT_ALLOWED', message: 'POST a join' } },
          405,
        );
      // 1. A principal's token, before anything is read or written.
      const who = o.authenticate(req);
      if (!who.ok) return refuse('UNAUTHENTICATED', who.error.message);
      if (who.result.kind !== 'token') return refuse('UNAUTHENTICATED');
      // 2. What the node presents, signed with the key it presents.
      const bytes = await readBodyBytes(req, MAX_BODY).catch(() => undefined);
      if (!bytes) return refuse('JOIN_BAD_REQUEST', `the body must be under ${MAX_BODY} bytes`);
      let doc: unknown;
      try {
        doc = JSON.parse(new TextDecoder().decode(bytes));
      } catch {
        return refuse('JOIN_BAD_REQUEST', 'the body is not JSON');
      }
      const p = presented(doc);
      if (!p) return refuse('JOIN_BAD_REQUEST');
      const proof = await createVerifier({
        self,
        ring: new Map([[p.name, { mode: 'ed25519', ed25519: [fromB64url(p.publicKey, 32)!] }]]),
      }).verify(req.headers, bytes, JOIN_ROUTE);
      if (!proof.ok || proof.result.mode !== 'ed25519')
        return refuse('JOIN_BAD_PROOF', proof.ok ? 'sign it in mode ed25519' : proof.error.code);
      // 3. The URL is the caller's.
      const checked = await checkUrl(p);
      if (checked instanceof Response) return checked;
      // 4. One join at a time decides and writes.
      if (waiting >= maxWaiting) return refuse('JOIN_BUSY');
      return serialized(() =>
        admit(p, who.result.kind === 'token' ? who.result.name : '', checked.role),
      );
    },
    /**
     * Re-reads the fleet file and ring when they changed on disk (`bun run fleet remove` while the
     * hub runs). Returns whether they had.
     */
    sync: (() => {
      let seen = '';
      const stamp = () =>
        [o.to, join(o.dataDir, 'keys', 'ring.json')]
          .map((f) => {
            try {
              return String(statSync(f).mtimeMs);
            } catch {
              return '-';
            }
          })
          .join(' ');
      seen = stamp();
      return () =>
        serialized(async () => {
          const now = stamp();
          if (now === seen) return false;
          seen = now;
          if (now.startsWith('-')) return false;
          await apply().catch((e: Error) =>
            o.log('warn', 'fleet: the fleet file or ring changed but cannot be read', {
              error: e.message,
            }),
          );
          return true;
        });
    })(),
  };
}
