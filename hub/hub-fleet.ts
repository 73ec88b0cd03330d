/**
 * @module hub/hub-fleet — the hub's side of the fleet: its signed peer client, the invoker that
 * traces every cross-node call (A2A messages signed as the hub too), the access policy with its
 * bearer tokens (MESH_TOKEN among them as `mesh`), and the fleet view that checks each member's
 * card against the key the hub pinned for it, and the joins of nodes run elsewhere.
 */

import { join } from 'node:path';
import { createFleetInvoker } from '../lib/fleet/invoke.ts';
import { FleetRegistry } from '../lib/fleet/registry.ts';
import type { TraceStore } from '../lib/fleet/trace.ts';
import { A2A_SIGNED_SCOPE } from '../lib/node/node-auth.ts';
import { createPeerClient } from '../lib/peer/client.ts';
import { cardKeyId } from '../lib/a2a/card/signature.ts';
import { TokenBook } from '../lib/auth/tokens.ts';
import { createHubAccess } from './http/access.ts';
import { createJoinService } from './fleet/join.ts';
import { createFleetView } from './fleet/view.ts';
import { ringOf, type HubOptions } from './hub-types.ts';

/**
 * The hub's fleet registry: it follows the fleet file joins write (and `bun run fleet remove`
 * edits) and the key ring beside it, reloading the hub's ring when that changes.
 */
export function hubRegistry(opts: HubOptions): FleetRegistry {
  const j = opts.joins;
  return new FleetRegistry(opts.fleet, {
    ...(j ? { file: j.to, alsoWatch: [join(opts.dataDir, 'keys', 'ring.json')] } : {}),
    ring: { current: () => ringOf(opts.identity), reload: j?.reload ?? (async () => {}) },
    pollMs: j?.syncMs ?? 1000,
    log: opts.log,
  });
}

export function hubFleet(
  opts: HubOptions,
  trace: TraceStore,
  registry: FleetRegistry,
  ownCard?: () => unknown,
) {
  const { fleet, log } = opts;
  const self = fleet.hub.name;
  const client = createPeerClient({
    signer: opts.identity.signer,
    fleet,
    log,
    fetch: opts.fetch,
  });
  // The hub's A2A messages to nodes are signed as the hub, like its peer calls.
  const signA2A = (to: string, body: Uint8Array) =>
    opts.identity.signer.sign({ to, route: '/a2a', scope: A2A_SIGNED_SCOPE }, body);
  const invoker = createFleetInvoker({
    self,
    client,
    trace,
    fleet,
    sign: signA2A,
    fetch: opts.fetch,
  });
  // MESH_TOKEN is one more bearer token, named `mesh`, accepted everywhere the policy asks for one.
  const tokens = opts.meshToken
    ? (opts.tokens ?? TokenBook.of({})).including({ mesh: opts.meshToken })
    : opts.tokens;
  const access = createHubAccess({
    name: self,
    host: opts.host ?? '127.0.0.1',
    tokens,
    publicOrigins: opts.publicOrigins,
    requireLogin: !!opts.requireLogin,
    meshToken: !!opts.meshToken,
    sessions: opts.sessions,
    ...(opts.oidc ? { oidc: opts.oidc, log: opts.log } : {}),
  });
  const view = createFleetView({
    fleet,
    problem: () => registry.problem,
    // A member's card must be signed with a key the hub's ring pinned for it.
    pinnedKeys: (name) =>
      (ringOf(opts.identity)?.get(name)?.ed25519 ?? []).map((publicKey) => ({
        kid: cardKeyId(publicKey),
        publicKey,
      })),
    onUnverified: (name, failure) =>
      log('warn', 'fleet member card does not verify', { node: name, code: failure.code }),
    fetch: opts.fetch,
    ttlMs: opts.fleetTtlMs,
  });
  // Nodes run elsewhere join at `POST /peer/join`, proven by the access policy's principals.
  const joins =
    opts.joins &&
    createJoinService({
      ...opts.joins,
      registry,
      dataDir: opts.dataDir,
      authenticate: access.authenticate,
      log,
      fetch: opts.fetch,
      ...(ownCard ? { ownCard } : {}),
    });
  // A member that came, went, moved or changed its key is read afresh, not after the cache's time.
  registry.subscribe(() => view.invalidate());
  return { client, invoker, tokens, access, view, joins };
}
