/**
 * @module hub/hub — `createHub(opts)`: every piece of the hub process behind one fetch handler:
 * the mesh (routes and WebSocket), the console API (`/api/*`), the browser console (`/`), and the
 * hub's own A2A node `a2a` (card, `/a2a`, REST, `/peer/*`; changes sent from another site are
 * refused), and `/healthz` / `/readyz` for the whole process. Dependencies come in as arguments so
 * tests can build a hub on port 0 with an in-memory database.
 */

import type { Database } from 'bun:sqlite';
import { listPageToV1 } from '../lib/a2a/wire-v1.ts';
import type { Server } from 'bun';
import { createFleetInvoker, type Fleet, type FleetInvoker } from '../lib/fleet/invoke.ts';
import type { Log } from '../lib/log.ts';
import type { MeshLimits } from '../lib/mesh/limits.ts';
import type { MeshStore } from '../lib/mesh/store.ts';
import { createNode, type NodeApp } from '../lib/node/create-node.ts';
import { createPeerClient } from '../lib/peer/client.ts';
import type { PeerSigner, PeerVerifier } from '../lib/peer/signature.ts';
import { createTraceStore, type TraceStore } from '../lib/fleet/trace.ts';
import { SseStreams } from '../lib/a2a/sse.ts';
import { LIMITS, type Limits } from '../lib/limits.ts';
import { join } from 'node:path';
import { createHubApi } from './http/api.ts';
import { createConsole } from './http/console.ts';
import { fleetFeed, tasksFeed } from './http/live.ts';
import { refuseCrossSite } from './http/origin.ts';
import { ask, capabilitiesFromNodes } from './workbench/ask.ts';
import { modelPlanner, type ModelConfig } from './workbench/ask-model.ts';
import { createDelegator } from './workbench/delegate.ts';
import { createFleetView, type FleetSnapshot } from './fleet/view.ts';
import { hubNode } from './workbench/hub-node.ts';
import { negotiationsDir } from './workbench/negotiation.ts';
import { listenWithPortWalk } from './mesh/listen.ts';
import type { MeshCluster } from './mesh/cluster.ts';
import { createMeshServer, type MeshSocketData } from './mesh/server.ts';

export interface HubOptions {
  fleet: Fleet;
  /** The hub node's task files go to `<dataDir>/<hub name>/tasks/` (unless `tasksDatabaseUrl` is set). */
  dataDir: string;
  /** `postgres://…`: the hub node's tasks live there, shared by several hub processes (TASKS_DATABASE_URL). */
  tasksDatabaseUrl?: string;
  log: Log;
  identity: { signer: PeerSigner; verifier: PeerVerifier };
  traceDb: Database;
  meshStore: MeshStore;
  /** The other hubs on the mesh's database (PostgreSQL); absent, this hub is alone. */
  meshCluster?: MeshCluster;
  meshToken?: string;
  /** Heartbeat and recovery limits of the mesh (MESH_HEARTBEAT_MS, MESH_HEARTBEAT_MISSES, MESH_RECOVERY_MAX_MESSAGES). */
  meshLimits?: Partial<MeshLimits>;
  /** Bounds of the trace, the task cache, tasks and SSE queues (lib/limits.ts; defaults: LIMITS). */
  limits?: Partial<Limits>;
  host?: string;
  publicUrl?: string;
  /** How long a fleet snapshot is reused (ms). */
  fleetTtlMs?: number;
  /** An OpenAI-compatible endpoint that plans Ask Agent questions (MODEL_BASE_URL, MODEL_NAME, MODEL_API_KEY). */
  model?: ModelConfig;
  /** How often the live pages' sources are re-read while someone watches, in ms (fleet 5000, tasks 2000). */
  liveMs?: { fleet?: number; tasks?: number };
  /** The browser console's files (default: the project's console/ folder). */
  consoleDir?: string;
  fetch?: typeof fetch;
  /** Non-public hosts, addresses or CIDR ranges the hub's webhooks may reach (PUSH_ALLOW_HOSTS). */
  pushAllowHosts?: string[];
}

export interface Hub {
  trace: TraceStore;
  invoker: FleetInvoker;
  node: NodeApp;
  view: { snapshot(): Promise<FleetSnapshot> };
  fetch(req: Request, server: Server<MeshSocketData>): Promise<Response>;
  /** Binds the port (walking up to `maxPort` when taken) and serves every piece. */
  listen(port: number, maxPort?: number): { url: string; port: number; stop(): Promise<void> };
}

/** How long a stop waits for open requests and streams to finish before it cuts the connections. */
const STOP_GRACE_MS = 2_000;

export function createHub(opts: HubOptions): Hub {
  const { fleet, log } = opts;
  const self = fleet.hub.name;
  const limits: Limits = { ...LIMITS, ...opts.limits };
  const trace = createTraceStore(opts.traceDb, { maxRows: limits.traceMaxRows, maxAgeMs: limits.traceMaxAgeHours * 3_600_000 });
  // One registry for every SSE stream of the process (the trace stream and the hub node's tasks).
  const streams = new SseStreams();
  const client = createPeerClient({ signer: opts.identity.signer, fleet, log, ...(opts.fetch ? { fetch: opts.fetch } : {}) });
  const invoker = createFleetInvoker({ self, client, trace, fleet, ...(opts.fetch ? { fetch: opts.fetch } : {}) });
  const view = createFleetView({ fleet, ...(opts.fetch ? { fetch: opts.fetch } : {}), ...(opts.fleetTtlMs !== undefined ? { ttlMs: opts.fleetTtlMs } : {}) });
  const mesh = createMeshServer({ store: opts.meshStore, log, ...(opts.meshCluster ? { cluster: opts.meshCluster } : {}), ...(opts.meshToken ? { token: opts.meshToken } : {}), ...(opts.meshLimits ? { limits: opts.meshLimits } : {}) });
  const delegator = createDelegator(invoker);
  const modelPlan = opts.model ? modelPlanner(opts.model, { log, ...(opts.fetch ? { fetch: opts.fetch } : {}) }) : undefined;
  const askQuestion = (question: string) => ask({
    invoker,
    // The hub's own capabilities, read when a question comes (the catalog is made below).
    own: { name: self, tools: () => definition.catalog.descriptors(), invoke: (id, args) => definition.catalog.invoke(id, args) },
    plannedBy: modelPlan ? 'model' : 'keywords',
    ...(modelPlan ? { planner: modelPlan } : {}),
    fallbackCatalog: capabilitiesFromNodes(async () => (await view.snapshot()).nodes, opts.fetch),
  }, question);
  const definition = hubNode({ name: self, invoker, view, delegator, ask: askQuestion, agentBacked: modelPlan !== undefined, dataDir: opts.dataDir });
  const node = createNode(definition, {
    dataDir: opts.dataDir,
    ...(opts.tasksDatabaseUrl ? { tasksDatabaseUrl: opts.tasksDatabaseUrl } : {}),
    log,
    pushAllowHosts: opts.pushAllowHosts ?? [],
    peer: { verifier: opts.identity.verifier, client, fleet },
    limits,
    streams,
    readyChecks: {
      trace: () => (opts.traceDb.query('SELECT 1').get(), true),
      mesh: () => opts.meshStore.ready(),
    },
    ...(opts.host ? { host: opts.host } : {}),
    ...(opts.publicUrl ? { publicUrl: opts.publicUrl } : {}),
  });

  const consoleSite = createConsole({ consoleDir: opts.consoleDir ?? join(import.meta.dir, '..', 'console'), nodeModules: join(import.meta.dir, '..', 'node_modules') });
  // The Tasks page's list, as the binding's ListTasks answers it (reading advances delegated tasks).
  const listTasks = async () => {
    const page = await node.engine.listTasks({ pageSize: 50, includeArtifacts: true, historyLength: 2 });
    return 'error' in page ? { tasks: [] } : listPageToV1(page, true);
  };
  const live = {
    fleet: fleetFeed({ view, everyMs: opts.liveMs?.fleet ?? 5000, log }),
    tasks: tasksFeed({ list: listTasks, everyMs: opts.liveMs?.tasks ?? 2000, log }),
  };
  const api = createHubApi({ fleet, view, trace, invoker, log, hubCatalog: definition.catalog, ask: askQuestion, negotiationsDir: negotiationsDir(opts.dataDir), live, sse: { maxQueuedBytes: limits.sseQueueBytes, streams } });

  async function fetchAll(req: Request, server: Server<MeshSocketData>): Promise<Response> {
    // The process's health is the node's (its checks include the trace and the mesh store).
    const path = new URL(req.url).pathname;
    if (path === '/healthz' || path === '/readyz') return node.app.handle(req);
    const fromMesh = await mesh.fetch(req, server);
    if (fromMesh !== undefined) return fromMesh;
    const fromApi = await api.fetch(req);
    if (fromApi !== undefined) return fromApi;
    const fromConsole = consoleSite.fetch(req);
    if (fromConsole !== undefined) return fromConsole;
    // The hub's own node answers everything else, including the coded 404; the console reaches
    // its tasks there too, so what a browser sends from another site is refused first.
    return refuseCrossSite(req) ?? node.app.handle(req);
  }

  return {
    trace,
    invoker,
    node,
    view,
    fetch: fetchAll,
    listen(port, maxPort) {
      const server = listenWithPortWalk<MeshSocketData>({
        hostname: opts.host ?? '127.0.0.1',
        port,
        ...(maxPort !== undefined ? { maxPort } : {}),
        fetch: fetchAll,
        websocket: mesh.websocket,
        idleTimeout: 60,
      });
      node.advertise(server.port!);
      return {
        url: server.url.origin,
        port: server.port!,
        /**
         * Graceful stop: `/readyz` turns 503, presences leave with `hub_shutdown` (close 1001),
         * every SSE stream gets its final `SHUTTING_DOWN` frame, open requests get a short grace,
         * then task files and the trace are flushed. The caller closes the databases.
         */
        async stop() {
          node.markShuttingDown();
          live.fleet.close();
          live.tasks.close();
          mesh.close();
          streams.endAll('SHUTTING_DOWN');
          let grace: ReturnType<typeof setTimeout> | undefined;
          await Promise.race([server.stop(false), new Promise<void>((resolve) => (grace = setTimeout(resolve, STOP_GRACE_MS)))]);
          clearTimeout(grace);
          await server.stop(true);
          await node.engine.close();
          await node.store.close();
          trace.flush();
        },
      };
    },
  };
}
