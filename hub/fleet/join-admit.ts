/**
 * @module hub/fleet/join-admit — a join decided and written: the node at the presented URL must be
 * the one asking (its card names it, it publishes that key), the name must be free or already this
 * key's; then the key is pinned, the node written into the fleet file and both taken into the hub.
 */

import { loadFleet } from '../../lib/config/fleet-file.ts';
import { hasKeyPair, pinnedKeys, trustRemoteKey } from '../../lib/peer/keys.ts';
import { getJson, interfacesUnder } from './add.ts';
import { editableFleet, saveFleet } from './fleet-file.ts';
import { json, type Presented, refuse } from './join-request.ts';
import type { AuthOutcome } from '../../lib/auth/access.ts';
import type { FleetRegistry } from '../../lib/fleet/registry.ts';
import type { Log } from '../../lib/log.ts';

/** What the join service needs of the hub. */
export interface JoinServiceOptions {
  /** The hub's fleet as it is now: a join is applied through it, so every part sees it at once. */
  registry: FleetRegistry;
  /** The fleet file read at start, and the one written (they differ when the first is fixtures/). */
  from: string;
  to: string;
  dataDir: string;
  /** Who sent the request: only a bearer token's principal may join a node. */
  authenticate: (req: Request) => AuthOutcome | Promise<AuthOutcome>;
  log: Log;
  fetch?: typeof fetch;
  timeoutMs?: number;
  /** The hub's own card: a joining node may list none of its interfaces (its gRPC port included). */
  ownCard?: () => unknown;
  /** Joins waiting for their turn at most (default 16); more get JOIN_BUSY. */
  maxWaiting?: number;
}

/** Takes the fleet file and ring from disk into the running hub (the registry reloads the ring). */
async function applyFleetFiles(o: JoinServiceOptions): Promise<void> {
  await o.registry.replace(await loadFleet(o.to));
}

/** The `host:port` of each interface a card lists (gRPC's is an address, the others URLs). */
function addressesOf(card: { supportedInterfaces?: unknown } | undefined): string[] {
  const list = Array.isArray(card?.supportedInterfaces) ? card.supportedInterfaces : [];
  const out: string[] = [];
  for (const i of list as { url?: unknown }[]) {
    if (typeof i?.url !== 'string') continue;
    try {
      const u = new URL(i.url.includes('://') ? i.url : `http://${i.url}`);
      out.push(`${u.hostname}:${u.port || (u.protocol === 'https:' ? '443' : '80')}`);
    } catch {}
  }
  return out;
}

/**
 * The addresses the hub and every other member on the joining node's host serve at: their URLs,
 * and the interfaces their cards list (a gRPC port is known only from there). A joining card may
 * list none of them, so a member cannot pass off another's gRPC port as its own.
 */
async function othersAddresses(o: JoinServiceOptions, p: Presented): Promise<Set<string>> {
  const host = new URL(p.url).hostname;
  const fleet = o.registry.live;
  const near = [fleet.hub, ...fleet.nodes].filter((m) => {
    if (m.name === p.name) return false;
    try {
      return new URL(m.url).hostname === host;
    } catch {
      return false;
    }
  });
  const opts = { ...(o.fetch ? { fetch: o.fetch } : {}), timeoutMs: 1500 };
  const cards = await Promise.all(
    near.map((m) => getJson(`${m.url}/.well-known/agent-card.json`, opts)),
  );
  const out = new Set(addressesOf(o.ownCard?.() as { supportedInterfaces?: unknown }));
  near.forEach((m, i) => {
    for (const a of addressesOf({ supportedInterfaces: [{ url: m.url }] })) out.add(a);
    for (const a of addressesOf(cards[i] as { supportedInterfaces?: unknown })) out.add(a);
  });
  return out;
}

/** Why the node at that URL is not the one asking, or undefined when it is (and its role). */
async function probe(
  o: JoinServiceOptions,
  p: Presented,
): Promise<{ why: string } | { role: string }> {
  const opts = { ...(o.fetch ? { fetch: o.fetch } : {}), timeoutMs: o.timeoutMs ?? 5000 };
  // Only the URL presented, nothing it names: its card and its identity, redirects refused.
  const [card, identity] = (await Promise.all([
    getJson(`${p.url}/.well-known/agent-card.json`, opts),
    getJson(`${p.url}/peer/identity`, opts),
  ])) as [
    { name?: unknown; supportedInterfaces?: unknown } | undefined,
    { node?: unknown; keys?: { publicKey?: unknown }[] } | undefined,
  ];
  if (!card && !identity) return { why: 'no answer' };
  if (card?.name !== p.name || identity?.node !== p.name) return { why: 'another node' };
  if (!interfacesUnder(card.supportedInterfaces, new URL(p.url)))
    return { why: 'interfaces not under its URL' };
  const others = await othersAddresses(o, p);
  if (addressesOf(card).some((a) => others.has(a)))
    return { why: "an interface on another member's port" };
  const keys = Array.isArray(identity.keys) ? identity.keys : [];
  if (!keys.some((k) => k?.publicKey === p.publicKey)) return { why: 'another key' };
  const description = (card as { description?: unknown }).description;
  return { role: typeof description === 'string' ? description.slice(0, 200) : p.name };
}

/**
 * The node at that URL must be the one asking: its card names it, it publishes that key, its
 * interfaces are its own. Every failure is the same answer (the hub's log says which).
 */
export async function checkUrl(
  o: JoinServiceOptions,
  p: Presented,
): Promise<Response | { role: string }> {
  const found = await probe(o, p);
  if ('role' in found) return found;
  o.log('info', 'fleet: join refused, the URL is not the node asking', {
    node: p.name,
    url: p.url,
    why: found.why,
  });
  return refuse('JOIN_URL_NOT_YOURS');
}

/** JOIN_NAME_TAKEN when the name is the hub's, a local member's or another key's; else undefined. */
export async function nameRefusal(
  o: JoinServiceOptions,
  p: Presented,
): Promise<Response | undefined> {
  const doc = editableFleet(o.from, o.to);
  const hubName = (doc.hub as { name?: unknown }).name;
  const existing = doc.nodes.find((n) => n.name === p.name);
  if (
    hubName === p.name ||
    (await hasKeyPair(o.dataDir, p.name)) ||
    (existing && existing.remote !== true)
  )
    return refuse('JOIN_NAME_TAKEN', `${p.name} runs with this hub; name the node otherwise`);
  const pinned = await pinnedKeys(o.dataDir, p.name);
  if (pinned.length && !pinned.includes(p.publicKey))
    return refuse(
      'JOIN_NAME_TAKEN',
      `it is ${p.name}'s name here; to give it to this key, run \`bun run fleet remove ${p.name}\` on the hub and join again, or name the node otherwise`,
    );
  return undefined;
}

/** Checks the name again (in turn, against the fleet on disk) and writes the node in. */
export async function admit(
  o: JoinServiceOptions,
  p: Presented,
  by: string,
  role: string,
): Promise<Response> {
  const taken = await nameRefusal(o, p);
  if (taken) return taken;
  const doc = editableFleet(o.from, o.to);
  const existing = doc.nodes.find((n) => n.name === p.name);
  const pinned = await pinnedKeys(o.dataDir, p.name);
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
  await applyFleetFiles(o);
  return json({
    ok: true,
    result: { hub: o.registry.live.hub.name, node: p.name, url: p.url, kid: p.kid, status },
  });
}
