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
  authenticate: (req: Request) => AuthOutcome;
  log: Log;
  fetch?: typeof fetch;
  timeoutMs?: number;
  /** Joins waiting for their turn at most (default 16); more get JOIN_BUSY. */
  maxWaiting?: number;
}

/** Takes the fleet file and ring from disk into the running hub (the registry reloads the ring). */
async function applyFleetFiles(o: JoinServiceOptions): Promise<void> {
  await o.registry.replace(await loadFleet(o.to));
}

/** The node at that URL must be the one asking: its card names it, it publishes that key. */
export async function checkUrl(
  o: JoinServiceOptions,
  p: Presented,
): Promise<Response | { role: string }> {
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
export async function admit(
  o: JoinServiceOptions,
  p: Presented,
  by: string,
  role: string,
): Promise<Response> {
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
  await applyFleetFiles(o);
  return json({
    ok: true,
    result: { hub: o.registry.live.hub.name, node: p.name, url: p.url, kid: p.kid, status },
  });
}
