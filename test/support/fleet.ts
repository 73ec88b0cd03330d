/**
 * Test support: a whole fleet on port 0. Keys are made for the fleet's names first, every node
 * starts with its own identity, then the fleet's URLs are filled in so signed calls reach the
 * real ports; the hub runs with in-memory SQLite.
 */

import { Database } from 'bun:sqlite';
import { rmSync } from 'node:fs';
import { resolve } from 'node:path';
import { loadFleet, parseFleet, type Fleet } from '../../lib/config/fleet-file.ts';
import { memoryLog } from '../../lib/log.ts';
import { openMeshDatabase } from '../../lib/mesh/schema.ts';
import { createSqliteMeshStore } from '../../lib/mesh/sqlite-store.ts';
import { createNode } from '../../lib/node/create-node.ts';
import type { NodeApp, NodeDefinition, NodeOptions } from '../../lib/node/node-types.ts';
import { loadCardKeys } from '../../lib/node/card-keys.ts';
import { loadNode } from '../../lib/node/load-node.ts';
import { createPeerClient } from '../../lib/peer/client.ts';
import { ensureKeys, loadPeerIdentity } from '../../lib/peer/keys.ts';
import { createHub } from '../../hub/hub.ts';
import type { Hub, HubOptions } from '../../hub/hub-types.ts';
import { FIXTURES, TEST_TOKEN, tempDir, withAuth } from './node.ts';
import { TokenBook } from '../../lib/auth/tokens.ts';

export interface RunningFleet {
  fleet: Fleet;
  dataDir: string;
  hub: Hub;
  hubUrl: string;
  /** The hub node's gRPC port, once it listens. */
  hubGrpc: Promise<number | undefined>;
  log: ReturnType<typeof memoryLog>;
  /** Each node's address, and its app for in-process requests (`app.handle`). */
  nodes: Map<string, { url: string; app: NodeApp['app']; node: NodeApp; stop(): Promise<void> }>;
  /** Stops one node (to see the fleet notice). */
  kill(name: string): Promise<void>;
  stop(): Promise<void>;
}

/** The data folder `realNodeDefs` made for a definition; the fleet that runs it removes it at stop. */
const nodeDataDirs = new WeakMap<NodeDefinition, string>();

export interface FleetOptions {
  /** More options of each node, by its name (an OTLP exporter of its own, …). */
  nodes?: (name: string) => Partial<NodeOptions>;
  /** More bearer tokens (name → token) every member accepts besides the test principal's. */
  tokens?: Record<string, string>;
  /** How the hub differs from the default: HUB_REQUIRE_LOGIN, MESH_TOKEN, a session table with its own clock, its token book, the sign-in throttle, how often live pages are re-read, its model, … */
  hub?: Pick<
    HubOptions,
    | 'requireLogin'
    | 'meshToken'
    | 'sessions'
    | 'tokens'
    | 'signInThrottle'
    | 'publicOrigins'
    | 'liveMs'
    | 'limits'
    | 'otlp'
    | 'model'
    | 'oidc'
    | 'tenants'
    | 'consoleKey'
    | 'consoleClient'
  >;
}

export async function startFleet(
  defs: NodeDefinition[],
  opts: FleetOptions = {},
): Promise<RunningFleet> {
  const tokens = () => TokenBook.of({ tester: TEST_TOKEN, ...opts.tokens });
  const dataDir = tempDir('lume-a2a-fleet-');
  const log = memoryLog();
  const fleet = parseFleet({
    hub: { name: 'a2a', port: 0, role: 'hub', file: 'hub/main.ts' },
    nodes: defs.map((d) => ({
      name: d.name,
      port: 0,
      role: `${d.name} node`,
      file: `node/${d.name}.ts`,
    })),
  });
  await ensureKeys(dataDir, fleet);
  const nodes: RunningFleet['nodes'] = new Map();
  for (const def of defs) {
    const identity = await loadPeerIdentity(dataDir, def.name);
    const node = createNode(def, {
      dataDir,
      port: 0,
      log,
      access: { tokens: tokens() },
      peer: {
        verifier: identity.verifier,
        client: createPeerClient({ signer: identity.signer, fleet, log }),
        fleet,
      },
      // Signed with its own key, which the hub's ring pins.
      cardKeys: await loadCardKeys(dataDir, def.name),
      ...opts.nodes?.(def.name),
    });
    const running = await node.start();
    // Fill in the real address; every peer client holds this same fleet object.
    fleet.nodes.find((n) => n.name === def.name)!.url = running.url;
    nodes.set(def.name, { ...running, app: node.app, node });
  }
  const meshStore = createSqliteMeshStore({ db: openMeshDatabase(':memory:'), log });
  const hub = createHub({
    fleet,
    dataDir,
    log,
    identity: await loadPeerIdentity(dataDir, 'a2a'),
    traceDb: new Database(':memory:', { strict: true }),
    meshStore,
    fleetTtlMs: 0,
    tokens: tokens(),
    ...opts.hub,
  });
  const server = hub.listen(0);
  fleet.hub.url = server.url;
  return {
    fleet,
    dataDir,
    hub,
    hubUrl: server.url,
    hubGrpc: server.grpc,
    log,
    nodes,
    async kill(name) {
      await nodes.get(name)?.stop();
      nodes.delete(name);
    },
    async stop() {
      await server.stop();
      for (const n of nodes.values()) await n.stop();
      await meshStore.close();
      for (const dir of [dataDir, ...defs.map((d) => nodeDataDirs.get(d))])
        if (dir) rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * The members of fixtures/fleet.json, for tests that speak of "the fleet": they count and name
 * what the file says, so a node added there breaks none of them.
 */
export async function fixtureFleet(): Promise<{
  fleet: Fleet;
  defaults: string[];
  optIn: string[];
}> {
  const fleet = await loadFleet(resolve(FIXTURES, 'fleet.json'));
  return {
    fleet,
    defaults: fleet.nodes.filter((n) => n.default).map((n) => n.name),
    optIn: fleet.nodes.filter((n) => !n.default).map((n) => n.name),
  };
}

/** POST /api/local-invoke as the console would (same origin), as the test principal. */
export async function localInvoke(
  hubUrl: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; json: any }> {
  const res = await fetch(`${hubUrl}/api/local-invoke`, {
    method: 'POST',
    headers: withAuth({ Origin: hubUrl, 'Content-Type': 'application/json', ...headers }),
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return { status: res.status, json: await res.json() };
}

/**
 * Every default node of fixtures/fleet.json (or those named), each loaded from its own node file
 * as `bun run node` loads it. `dataDir` is the nodes' data folder (a fresh temporary one unless
 * given; `{ dataDir: undefined }` builds them without one, so resolve runs no jobs).
 */
export async function realNodeDefs(
  only?: string[],
  opts: { dataDir?: string } = { dataDir: tempDir('lume-a2a-node-') },
): Promise<NodeDefinition[]> {
  const fleetFile = resolve(FIXTURES, 'fleet.json');
  const members = (await loadFleet(fleetFile)).nodes.filter(
    (n) => n.default && (!only || only.includes(n.name)),
  );
  const defs = await Promise.all(
    members.map((m) => loadNode(m.file, { fixturesDir: FIXTURES, fleetFile, ...opts })),
  );
  // startFleet removes this folder with the fleet's own.
  if (opts.dataDir) for (const d of defs) nodeDataDirs.set(d, opts.dataDir);
  return defs;
}
