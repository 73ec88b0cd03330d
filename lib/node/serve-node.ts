/**
 * @module lib/node/serve-node — turns a node file's factory (or a built definition) into a running node:
 * `serveNode` binds its own port, `mountNode` hands back a fetch handler for an app that already
 * has a `Bun.serve` or an Elysia server. With a fleet (object or file) that names the node, the
 * signed peer channel is on (keys under `<dataDir>/keys/`, created on first start); without one,
 * `/peer/*` refuses with PEER_NOT_CONFIGURED. With `join: { hub, token }` the node joins a hub's
 * fleet once it serves (lib/fleet/join.ts). Either way its data folder holds only its own private
 * key. `bun run node` starts nodes through here too.
 */

import { join, resolve } from 'node:path';
import { loadFleet, writableFleetFile, type Fleet } from '../config/fleet-file.ts';
import { FleetRegistry } from '../fleet/registry.ts';
import { PROJECT_ROOT } from '../project-root.ts';
import { hubBase, hubMember, joinHub, readPin, type JoinHandle } from '../fleet/join.ts';
import { silentLog, type Log } from '../log.ts';
import { createPeerClient } from '../peer/client.ts';
import { ensureOwnKey, publicIdentity } from '../peer/keys.ts';
import { liveIdentity } from '../peer/live-identity.ts';
import { loadCardKeys } from './card-keys.ts';
import { createNode } from './create-node.ts';
import type { NodeApp, NodeDefinition, NodeOptions, RunningNode } from './node-types.ts';
import type { NodeSetup } from './define-node.ts';

export interface ServeNodeOptions extends Partial<Omit<NodeOptions, 'peer' | 'dataDir'>> {
  /** Tasks (and, in a fleet, keys) are kept here (default `./data`). */
  dataDir?: string;
  /** The fleet this node belongs to, or its file; the node's own entry turns the peer channel on. */
  fleet?: Fleet | string;
  /**
   * The fleet file the fleet was read from: the node then follows it (and the key ring) while it
   * runs, so a member that joins, leaves, moves or changes its key is known without a restart.
   * Implied when `fleet` is a file name.
   */
  fleetFile?: string;
  /** What a factory is given besides `dataDir` and `fleetFile` (e.g. `fixturesDir`, `model`). */
  setup?: Partial<NodeSetup>;
  /** The logger, made once the node's name is known (when `log` is not given). */
  logFor?: (name: string) => Log;
  /**
   * Joins a hub's fleet once the node serves: `hub` is its base URL, `token` a bearer token made
   * on the hub's machine (`bun run keys token add <name>`). Retried with backoff while the hub is
   * down; see docs/package.md.
   */
  join?: { hub: string; token: string; retry?: { firstMs: number; maxMs: number } };
}

export interface PreparedNode extends NodeApp {
  definition: NodeDefinition;
  /** The fleet the node was started in, when it has one (as it is now, when it follows its file). */
  fleet?: Fleet;
  /** The fleet as it is now and its change feed, when the node follows a fleet file. */
  registry?: FleetRegistry;
  /** Starts the join (with `join`) at the node's base URL; at most once. */
  joinAt(url: string): JoinHandle | undefined;
  /** The join under way or done, once started. */
  readonly join: JoinHandle | undefined;
}

/** Something `serveNode` and `mountNode` accept: a node file's default export or a definition. */
export type NodeSource = NodeDefinition | ((opts: NodeSetup) => NodeDefinition);

/** The fleet of a node that joins a hub: itself, and the hub it pinned before (filled in when it pins it now). */
function joiningFleet(
  dataDir: string,
  definition: NodeDefinition,
  hub: string,
  port: number | undefined,
): Fleet {
  const pin = readPin(dataDir, definition.name);
  const placeholder = definition.name === 'hub' ? 'a2a' : 'hub';
  return {
    hub: hubMember(pin?.name ?? placeholder, pin?.url ?? hub),
    nodes: [
      {
        name: definition.name,
        port: port ?? 0,
        role: definition.description,
        file: '',
        default: true,
        url: '',
      },
    ],
  };
}

/**
 * A fleet member's peer channel: its own key pair (made here; its peers' public keys are pinned,
 * docs/peer.md), its identity that follows the ring, its card keys, and, when the node follows a
 * fleet file, the fleet registry it reads the fleet through.
 */
async function wirePeer(o: {
  dataDir: string;
  name: string;
  fleet: Fleet;
  log: Log;
  opts: ServeNodeOptions;
  follow?: string;
}) {
  await ensureOwnKey(o.dataDir, o.name);
  const nonces = o.opts.limits?.peerNonces;
  const identity = await liveIdentity(o.dataDir, o.name, nonces ? { nonceCapacity: nonces } : {});
  // The fleet as the hub keeps it: the file joins are written to, and the ring beside it.
  const registry =
    o.follow === undefined
      ? undefined
      : new FleetRegistry(o.fleet, {
          file: writableFleetFile(o.follow, o.dataDir, PROJECT_ROOT),
          alsoWatch: [join(o.dataDir, 'keys', 'ring.json')],
          ring: { current: () => identity.ring(), reload: () => identity.reload() },
          log: o.log,
        });
  const fleet = registry?.live ?? o.fleet;
  const peer: NodeOptions['peer'] = {
    verifier: identity.verifier,
    client: createPeerClient({ signer: identity.signer, fleet, log: o.log }),
    fleet,
  };
  const published = publicIdentity(o.name, identity.ring());
  const cardKeys = await loadCardKeys(o.dataDir, o.name);
  return { fleet, peer, published, identity, cardKeys, registry };
}

/** Builds the node's app (task store, card, routes, peer channel) without binding a port. */
export async function prepareNode(
  source: NodeSource,
  opts: ServeNodeOptions = {},
): Promise<PreparedNode> {
  const dataDir = resolve(opts.dataDir ?? 'data');
  if (opts.join && opts.fleet)
    throw new Error('serveNode: give a fleet or a hub to join, not both');
  const fleetFile =
    typeof opts.fleet === 'string'
      ? resolve(opts.fleet)
      : opts.fleetFile && resolve(opts.fleetFile);
  let fleet = typeof opts.fleet === 'string' ? await loadFleet(opts.fleet) : opts.fleet;
  const setup: NodeSetup = {
    fixturesDir: resolve('fixtures'),
    fleetFile: fleetFile ?? '',
    dataDir,
    ...opts.setup,
  };
  const definition = typeof source === 'function' ? source(setup) : source;
  const log: Log = opts.log ?? opts.logFor?.(definition.name) ?? silentLog;
  const hub = opts.join && hubBase(opts.join.hub);
  if (opts.join && !hub)
    throw new Error(
      `join: the hub URL must be http(s)://host[:port], got ${opts.join.hub.slice(0, 80)}`,
    );
  if (opts.join && !opts.join.token)
    throw new Error(
      "join: a token is needed (LUME_TOKEN): make one on the hub's machine with `bun run keys token add <name>`",
    );
  if (hub) fleet = joiningFleet(dataDir, definition, hub, opts.port);
  const member =
    fleet?.nodes.find((n) => n.name === definition.name) ??
    (fleet?.hub.name === definition.name ? fleet.hub : undefined);
  const wired =
    fleet && member
      ? await wirePeer({
          dataDir,
          name: member.name,
          fleet,
          log,
          opts,
          ...(fleetFile && !hub ? { follow: fleetFile } : {}),
        })
      : undefined;
  if (wired) fleet = wired.fleet;
  const { peer, published, identity, cardKeys, registry } = wired ?? {};
  // An explicit port wins over the fleet's; one line says so when they differ.
  if (member && !hub && opts.port !== undefined && opts.port !== member.port)
    log('info', `port ${opts.port} given: it wins over the fleet file's ${member.port}`);
  const { fleet: _f, setup: _s, logFor: _l, join: _j, ...nodeOpts } = opts;
  const app = createNode(definition, {
    ...nodeOpts,
    // A fleet member listens on its fleet port unless told otherwise.
    port: opts.port ?? member?.port ?? 0,
    dataDir,
    log,
    ...(peer ? { peer } : {}),
    ...(cardKeys ? { cardKeys } : {}),
    // The public key, for a fleet that adds this node from elsewhere (`bun run fleet add`).
    ...(published ? { identity: published } : {}),
  });
  let joining: JoinHandle | undefined;
  const joinAt = (url: string) => {
    if (!hub || !identity || !fleet || !published || joining) return joining;
    const own = fleet.nodes[0]!;
    own.url = url;
    own.port = Number(new URL(url).port || 80);
    joining = joinHub({
      hub,
      token: opts.join!.token,
      node: definition.name,
      dataDir,
      url,
      key: published.keys[0]!,
      signer: identity.signer,
      fleet,
      pinned: () => identity.reload(),
      log,
      ...(opts.join!.retry ? { retry: opts.join!.retry } : {}),
    });
    return joining;
  };
  return {
    ...app,
    definition,
    ...(fleet ? { fleet } : {}),
    ...(registry ? { registry } : {}),
    joinAt,
    get join() {
      return joining;
    },
  };
}

/** The base URL a node's card advertises (its `url` is `<base>/a2a`). */
const cardBase = (node: NodeApp) => String(node.cardContent().url ?? '').replace(/\/a2a$/, '');

/** Starts a node on its own port (0 picks a free one; a fleet member's default is its fleet port). */
export async function serveNode(
  source: NodeSource,
  opts: ServeNodeOptions = {},
): Promise<RunningNode & { node: PreparedNode }> {
  const prepared = await prepareNode(source, opts);
  const running = await prepared.start();
  prepared.joinAt(cardBase(prepared));
  return {
    ...running,
    node: prepared,
    async stop() {
      prepared.join?.stop();
      prepared.registry?.close();
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
  /** The port the card advertises: a number, or the app's server (`Bun.serve`'s answer). */
  advertise: (at: number | { readonly port?: number | undefined }) => void;
  close: () => Promise<void>;
}> {
  const node = await prepareNode(source, opts);
  if (opts.publicUrl) node.joinAt(opts.publicUrl.replace(/\/+$/, ''));
  return {
    node,
    fetch: (request) => node.fetch(request),
    advertise: (at) => {
      const port = typeof at === 'number' ? at : at.port;
      if (port === undefined)
        throw new Error('advertise: the server listens on no port; pass publicUrl instead');
      node.advertise(port);
      node.joinAt(cardBase(node));
    },
    async close() {
      node.join?.stop();
      node.registry?.close();
      await node.engine.close();
      await node.definition.shutdown?.();
    },
  };
}
