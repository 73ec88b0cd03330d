/**
 * @module lib/node/serve-node — turns a node file's factory (or a built definition) into a running node:
 * `serveNode` binds its own port, `mountNode` hands back a fetch handler for an app that already
 * has a `Bun.serve` or an Elysia server. With a fleet (object or file) that names the node, the
 * signed peer channel is on (keys under `<dataDir>/keys/`, created on first start); without one,
 * `/peer/*` refuses with PEER_NOT_CONFIGURED. `bun run node` starts nodes through here too.
 */

import { resolve } from 'node:path';
import { loadFleet, type Fleet } from '../fleet/config.ts';
import { silentLog, type Log } from '../log.ts';
import { createPeerClient } from '../peer/client.ts';
import { ensureKeys, loadPeerIdentity, publicIdentity } from '../peer/keys.ts';
import {
  createNode,
  type NodeApp,
  type NodeDefinition,
  type NodeOptions,
  type RunningNode,
} from './create-node.ts';
import type { NodeSetup } from './define-node.ts';

export interface ServeNodeOptions extends Partial<Omit<NodeOptions, 'peer' | 'dataDir'>> {
  /** Tasks (and, in a fleet, keys) are kept here (default `./data`). */
  dataDir?: string;
  /** The fleet this node belongs to, or its file; the node's own entry turns the peer channel on. */
  fleet?: Fleet | string;
  /** What a factory is given besides `dataDir` and `fleetFile` (e.g. `fixturesDir`, `model`). */
  setup?: Partial<NodeSetup>;
  /** The logger, made once the node's name is known (when `log` is not given). */
  logFor?: (name: string) => Log;
}

export interface PreparedNode extends NodeApp {
  definition: NodeDefinition;
  /** The fleet the node was started in, when it has one. */
  fleet?: Fleet;
}

/** Something `serveNode` and `mountNode` accept: a node file's default export or a definition. */
export type NodeSource = NodeDefinition | ((opts: NodeSetup) => NodeDefinition);

/** Builds the node's app (task store, card, routes, peer channel) without binding a port. */
export async function prepareNode(
  source: NodeSource,
  opts: ServeNodeOptions = {},
): Promise<PreparedNode> {
  const dataDir = resolve(opts.dataDir ?? 'data');
  const fleetFile = typeof opts.fleet === 'string' ? resolve(opts.fleet) : undefined;
  const fleet = typeof opts.fleet === 'string' ? await loadFleet(opts.fleet) : opts.fleet;
  const setup: NodeSetup = {
    fixturesDir: resolve('fixtures'),
    fleetFile: fleetFile ?? '',
    dataDir,
    ...opts.setup,
  };
  const definition = typeof source === 'function' ? source(setup) : source;
  const log: Log = opts.log ?? opts.logFor?.(definition.name) ?? silentLog;
  const member =
    fleet?.nodes.find((n) => n.name === definition.name) ??
    (fleet?.hub.name === definition.name ? fleet.hub : undefined);
  let peer: NodeOptions['peer'];
  let published: ReturnType<typeof publicIdentity>;
  if (fleet && member) {
    // First start creates the fleet's keys (never overwriting existing ones); see docs/peer.md.
    await ensureKeys(dataDir, fleet);
    const nonces = opts.limits?.peerNonces;
    const identity = await loadPeerIdentity(
      dataDir,
      member.name,
      nonces ? { nonceCapacity: nonces } : {},
    );
    peer = {
      verifier: identity.verifier,
      client: createPeerClient({ signer: identity.signer, fleet, log }),
      fleet,
    };
    published = publicIdentity(member.name, identity.ring);
  }
  const { fleet: _f, setup: _s, logFor: _l, ...nodeOpts } = opts;
  const app = createNode(definition, {
    ...nodeOpts,
    // A fleet member listens on its fleet port unless told otherwise.
    port: opts.port ?? member?.port ?? 0,
    dataDir,
    log,
    ...(peer ? { peer } : {}),
    // The public key, for a fleet that adds this node from elsewhere (`bun run fleet add`).
    ...(published ? { identity: published } : {}),
  });
  return { ...app, definition, ...(fleet ? { fleet } : {}) };
}

/** Starts a node on its own port (0 picks a free one; a fleet member's default is its fleet port). */
export async function serveNode(
  source: NodeSource,
  opts: ServeNodeOptions = {},
): Promise<RunningNode & { node: PreparedNode }> {
  const prepared = await prepareNode(source, opts);
  const running = await prepared.start();
  return {
    ...running,
    node: prepared,
    async stop() {
      await running.stop();
      await prepared.definition.shutdown?.();
    },
  };
}

/**
 * A node inside someone else's server: `fetch` answers the node's routes (card, `/a2a`, the
 * HTTP+JSON routes, `/peer/*`, `/health`, `/capabilities`) and a coded 404 for anything else, so
 * an app tries its own routes first and hands the rest over. The card advertises `publicUrl`
 * (or the port given to `advertise`).
 */
export async function mountNode(
  source: NodeSource,
  opts: ServeNodeOptions = {},
): Promise<{
  node: PreparedNode;
  fetch: (request: Request) => Promise<Response>;
  advertise: (port: number) => void;
  close: () => Promise<void>;
}> {
  const node = await prepareNode(source, opts);
  return {
    node,
    fetch: (request) => node.fetch(request),
    advertise: (port) => node.advertise(port),
    async close() {
      await node.engine.close();
      await node.definition.shutdown?.();
    },
  };
}
