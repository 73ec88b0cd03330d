/**
 * @module hub/hub — `createHub(opts)`: every piece of the hub process behind one fetch handler:
 * the mesh (routes and WebSocket), the console API (`/api/*`), the browser console (`/`) with its
 * sign-in, the hub's own A2A node `a2a` (card, `/a2a`, REST, `/peer/*`), `/healthz`, `/readyz`
 * and `/metrics` for the whole process, every request run in its W3C trace context, and the trace
 * exported over OTLP when configured. One access policy (hub/http/access.ts) admits every request
 * first. Dependencies come in as arguments so tests can build a hub on port 0 with an in-memory database.
 */

import type { Database } from 'bun:sqlite';
import { isA2AError } from '../lib/a2a/errors.ts';
import { listPageToV1 } from '../lib/a2a/wire-v1.ts';
import type { Server } from 'bun';
import { createFleetInvoker, type FleetInvoker } from '../lib/fleet/invoke.ts';
import type { Fleet } from '../lib/fleet/config.ts';
import type { Log } from '../lib/log.ts';
import type { MeshLimits } from '../lib/mesh/limits.ts';
import type { MeshStore } from '../lib/mesh/store.ts';
import { createNode } from '../lib/node/create-node.ts';
import { defaultGrpcPort } from '../lib/node/node-server.ts';
import { A2A_SIGNED_SCOPE } from '../lib/node/node-auth.ts';
import type { NodeApp, NodeOptions } from '../lib/node/node-types.ts';
import { createPeerClient } from '../lib/peer/client.ts';
import type { PeerRing } from '../lib/peer/signature.ts';
import type { PeerVerifier } from '../lib/peer/verifier.ts';
import type { PeerSigner } from '../lib/peer/signer.ts';
import { publicIdentity } from '../lib/peer/keys.ts';
import { createTraceStore, type TraceStore } from '../lib/fleet/trace.ts';
import { SseStreams } from '../lib/a2a/sse.ts';
import { LIMITS, type Limits } from '../lib/limits.ts';
import { guardRequests } from '../lib/net/request-guard.ts';
import { join } from 'node:path';
import { createHubApi } from './http/api.ts';
import { createConsole } from './http/console.ts';
import { fleetFeed, tasksFeeds } from './http/live.ts';
import { createHubAccess, type HubAccess } from './http/access.ts';
import { createLogin } from './http/login.ts';
import { createMeshSendRoutes } from './http/mesh-send.ts';
import { createConsolePresences } from './mesh/console-presence.ts';
import type { SessionTable } from './http/sessions.ts';
import { SignInThrottle, type ThrottleOptions } from './http/sign-in-throttle.ts';
import { ConsoleTickets, consoleUrl } from './http/tickets.ts';
import { randomBytes } from 'node:crypto';
import { TokenBook } from '../lib/auth/tokens.ts';
import type { Principal } from '../lib/auth/principal.ts';
import { ask } from './workbench/ask.ts';
import { capabilitiesFromNodes, loadCatalog } from './workbench/ask-catalog.ts';
import { createHubMcp } from './mcp/surface.ts';
import { modelPlanner, type ModelConfig } from './workbench/ask-model.ts';
import { createDelegator } from './workbench/delegate.ts';
import { modelHealth, type ModelHealth } from '../lib/model/health.ts';
import type { Catalog } from '../lib/catalog/catalog.ts';
import type { ReadyCheck } from '../lib/health.ts';
import { createFleetView, type FleetSnapshot } from './fleet/view.ts';
import { createJoinService, joinsNotOffered } from './fleet/join.ts';
import { cardKeyId } from '../lib/a2a/card-signature.ts';
import { hubNode } from './workbench/hub-node.ts';
import { negotiationsDir } from './workbench/negotiation.ts';
import { listenWithPortWalk } from './mesh/listen.ts';
import type { MeshCluster } from './mesh/cluster.ts';
import { createMeshServer, type MeshSocketData } from './mesh/server.ts';
import { hubRoutes, registerHubMetrics } from './metrics.ts';
import { hubOwnerOf } from './http/routes.ts';
import type { MetricsAccess } from '../lib/metrics/endpoint.ts';
import { createRequestObserver } from '../lib/metrics/http.ts';
import { createMetricsRegistry, type MetricsRegistry } from '../lib/metrics/registry.ts';
import { createOtlpExporter, type OtlpConfig, type OtlpExporter } from '../lib/telemetry/otlp.ts';

export interface HubOptions {
  fleet: Fleet;
  /** More `/readyz` checks (the boot self-check's verdicts). */
  readyChecks?: Record<string, ReadyCheck>;
  /** The hub node's task files go to `<dataDir>/<hub name>/tasks/` (unless `tasksDatabaseUrl` is set). */
  dataDir: string;
  /** `postgres://…`: the hub node's tasks live there, shared by several hub processes (TASKS_DATABASE_URL). */
  tasksDatabaseUrl?: string;
  log: Log;
  /** The hub's keys (`loadPeerIdentity`); with the ring, the hub publishes its public key at `GET /peer/identity`. */
  identity: { signer: PeerSigner; verifier: PeerVerifier; ring?: PeerRing };
  /** What the hub's card is signed with (lib/node/card-keys.ts); else a key of this process. */
  cardKeys?: NodeOptions['cardKeys'];
  traceDb: Database;
  meshStore: MeshStore;
  /** The other hubs on the mesh's database (PostgreSQL); absent, this hub is alone. */
  meshCluster?: MeshCluster;
  /** MESH_TOKEN: the whole hub needs a principal, and this token is accepted as the token `mesh`. */
  meshToken?: string;
  /** Bearer tokens (`DATA_DIR/keys/tokens.json`); MESH_TOKEN is added to them as `mesh`. */
  tokens?: TokenBook;
  /** HUB_PUBLIC_ORIGIN: where browsers reach the console besides the loopback addresses. */
  publicOrigins?: string[];
  /** HUB_REQUIRE_LOGIN: the console signs in even on loopback (always so beyond loopback, or with MESH_TOKEN). */
  requireLogin?: boolean;
  /** The console's sessions (tests pass one with their own clock). */
  sessions?: SessionTable;
  /** The key of the console's one-time sign-in URLs (`DATA_DIR/keys/console.key`; random without it). */
  consoleKey?: Uint8Array;
  /** How often one client address may try to sign in (hub/http/sign-in-throttle.ts). */
  signInThrottle?: ThrottleOptions;
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
  /** Where the trace is exported as OTLP/HTTP JSON (OTEL_EXPORTER_OTLP_ENDPOINT); off without it. */
  otlp?: OtlpConfig;
  /** Who may read `/metrics` when the hub is bound beyond loopback (the API's authentication). */
  metricsAccess?: MetricsAccess;
  /**
   * Nodes run elsewhere join at `POST /peer/join` (hub/fleet/join.ts): the fleet file read, the one
   * written, how the hub's ring reloads, and how often the files are checked for `fleet remove`.
   */
  joins?: { from: string; to: string; reload: () => Promise<void>; syncMs?: number };
  /** Set false for no gRPC binding on the hub's node (lib/a2a/grpc/). */
  grpc?: boolean;
  /** The gRPC binding's port (GRPC_PORT): default the hub's port + 1000, 0 picks a free one. */
  grpcPort?: number;
  /** The mesh project MCP clients are present in (the mesh client's project, default main). */
  meshProject?: string;
}

export interface Hub {
  trace: TraceStore;
  access: HubAccess;
  metrics: MetricsRegistry;
  /** The OTLP export, when configured. */
  otlp?: OtlpExporter;
  invoker: FleetInvoker;
  node: NodeApp;
  view: { snapshot(): Promise<FleetSnapshot> };
  /** Whether the hub's model answers (absent without a model). */
  model?: ModelHealth;
  /** The hub node's own capabilities (for the boot self-check). */
  catalog: Catalog;
  fetch(req: Request, server: Server<MeshSocketData>): Promise<Response>;
  /** A fresh one-time console URL (`<origin>/login?ticket=…`), at the address the hub listens on unless given one. */
  consoleUrl(origin?: string): string;
  /** Binds the port (walking up to `maxPort` when taken) and serves every piece. */
  listen(
    port: number,
    maxPort?: number,
  ): {
    url: string;
    port: number;
    /** The gRPC binding's port once it listens (undefined when off or when its port is taken). */
    grpc: Promise<number | undefined>;
    stop(): Promise<void>;
  };
}

/** How long a stop waits for open requests and streams to finish before it cuts the connections. */
const STOP_GRACE_MS = 2_000;

export function createHub(opts: HubOptions): Hub {
  const { fleet, log } = opts;
  const self = fleet.hub.name;
  const limits: Limits = { ...LIMITS, ...opts.limits };
  const trace = createTraceStore(opts.traceDb, {
    maxRows: limits.traceMaxRows,
    maxAgeMs: limits.traceMaxAgeHours * 3_600_000,
  });
  // One registry for every SSE stream of the process (the trace stream and the hub node's tasks).
  const streams = new SseStreams({
    max: limits.sseStreams,
    maxPerOwner: limits.sseStreamsPerPrincipal,
  });
  const metrics = createMetricsRegistry();
  const requests = createRequestObserver(metrics, hubRoutes);
  const otlp =
    opts.otlp &&
    createOtlpExporter({ ...opts.otlp, self, log, ...(opts.fetch ? { fetch: opts.fetch } : {}) });
  if (otlp) trace.subscribe((r) => otlp.add(r));
  const client = createPeerClient({
    signer: opts.identity.signer,
    fleet,
    log,
    ...(opts.fetch ? { fetch: opts.fetch } : {}),
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
    ...(opts.fetch ? { fetch: opts.fetch } : {}),
  });
  // MESH_TOKEN is one more bearer token, named `mesh`, accepted everywhere the policy asks for one.
  const tokens = opts.meshToken
    ? (opts.tokens ?? TokenBook.of({})).including({ mesh: opts.meshToken })
    : opts.tokens;
  const access = createHubAccess({
    name: self,
    host: opts.host ?? '127.0.0.1',
    ...(tokens ? { tokens } : {}),
    ...(opts.publicOrigins ? { publicOrigins: opts.publicOrigins } : {}),
    requireLogin: !!opts.requireLogin,
    meshToken: !!opts.meshToken,
    ...(opts.sessions ? { sessions: opts.sessions } : {}),
  });
  const ring = opts.identity.ring;
  const view = createFleetView({
    fleet,
    // A member's card must be signed with a key the hub's ring pinned for it.
    pinnedKeys: (name) =>
      (ring?.get(name)?.ed25519 ?? []).map((publicKey) => ({
        kid: cardKeyId(publicKey),
        publicKey,
      })),
    onUnverified: (name, failure) =>
      log('warn', 'fleet member card does not verify', { node: name, code: failure.code }),
    ...(opts.fetch ? { fetch: opts.fetch } : {}),
    ...(opts.fleetTtlMs !== undefined ? { ttlMs: opts.fleetTtlMs } : {}),
  });
  const counted = registerHubMetrics(metrics, {
    self,
    trace,
    presences: () => mesh.realtime.roster.size,
    ...(otlp ? { otlp } : {}),
  });
  // Where the hub reaches itself (set once it listens): MCP sessions and console visitors are present through it.
  let selfUrl: string | undefined;
  const consoleMesh = createConsolePresences({ hubUrl: () => selfUrl, log });
  const mesh = createMeshServer({
    store: counted.countMeshMessages(opts.meshStore),
    log,
    ...(opts.meshCluster ? { cluster: opts.meshCluster } : {}),
    // The hub's policy checks the mesh's HTTP routes; a hello on an unauthenticated socket carries a token.
    access: {
      required: access.meshProtected,
      verify: (t) => consoleMesh.accepts(t) || tokens?.verify(t) !== undefined,
    },
    ...(opts.meshLimits ? { limits: opts.meshLimits } : {}),
  });
  // The hub's own tasks, for a delegation that continues an earlier one (the node exists below).
  let ownTasks: NodeApp['engine'] | undefined;
  const delegator = createDelegator({
    invoker,
    nodeNames: () => fleet.nodes.map((n) => n.name),
    members: async () => (await view.snapshot()).nodes,
    findTask: async (id, caller) => {
      const t = await ownTasks?.getTask(id, undefined, caller);
      return t && !isA2AError(t) ? t : undefined;
    },
  });
  // With a model, the card is agent-backed only while it answers (pinged, and every planning call counts).
  const modelHealthOf = opts.model
    ? modelHealth(opts.model, {
        pingMs: opts.model.pingMs ?? 30_000,
        log,
        name: self,
        ...(opts.fetch ? { fetch: opts.fetch } : {}),
      })
    : undefined;
  const modelPlan = opts.model
    ? modelPlanner(opts.model, {
        log,
        ...(modelHealthOf ? { health: modelHealthOf } : {}),
        ...(opts.fetch ? { fetch: opts.fetch } : {}),
      })
    : undefined;
  const askQuestion = (question: string) =>
    ask(
      {
        invoker,
        // The hub's own capabilities, read when a question comes (the catalog is made below).
        own: {
          name: self,
          tools: () => definition.catalog.descriptors(),
          invoke: (id, args) => definition.catalog.invoke(id, args),
        },
        ...(modelPlan ? { planner: modelPlan } : {}),
        fallbackCatalog: capabilitiesFromNodes(
          async () => (await view.snapshot()).nodes,
          opts.fetch,
        ),
      },
      question,
    );
  const definition = hubNode({
    name: self,
    invoker,
    view,
    delegator,
    ask: askQuestion,
    agentBacked: () => modelHealthOf?.up ?? false,
    dataDir: opts.dataDir,
    negotiationRetention: {
      maxStored: limits.negotiationMaxStored,
      maxAgeMs: limits.negotiationMaxAgeHours * 3_600_000,
    },
  });
  // The hub's public key, published as every fleet node publishes its own: the operator of a node
  // run elsewhere trusts the hub by fetching it (`bun run fleet add <hub> --url <hub url>`).
  const published = opts.identity.ring && publicIdentity(self, opts.identity.ring);
  const node = createNode(definition, {
    ...(published ? { identity: published } : {}),
    dataDir: opts.dataDir,
    ...(opts.tasksDatabaseUrl ? { tasksDatabaseUrl: opts.tasksDatabaseUrl } : {}),
    log,
    pushAllowHosts: opts.pushAllowHosts ?? [],
    // Signed calls the hub serves and relays are recorded in its trace, like the calls it makes.
    peer: { verifier: opts.identity.verifier, client, fleet, spans: trace },
    access: { authenticate: access.authenticate, anonymous: access.anonymous },
    metrics,
    requests,
    ...(opts.metricsAccess ? { metricsAccess: opts.metricsAccess } : {}),
    limits,
    streams,
    // The Tasks pages' lists are read again when one of the hub's tasks changes (declared below).
    onTaskEvent: () => live.tasks.changed(),
    readyChecks: {
      trace: () => (opts.traceDb.query('SELECT 1').get(), true),
      mesh: () => opts.meshStore.ready(),
      ...opts.readyChecks,
    },
    ...(opts.host ? { host: opts.host } : {}),
    ...(opts.publicUrl ? { publicUrl: opts.publicUrl } : {}),
    ...(opts.cardKeys ? { cardKeys: opts.cardKeys } : {}),
  });

  ownTasks = node.engine;

  const consoleSite = createConsole({
    consoleDir: opts.consoleDir ?? join(import.meta.dir, '..', 'console'),
    nodeModules: join(import.meta.dir, '..', 'node_modules'),
  });
  const tickets = new ConsoleTickets({ key: opts.consoleKey ?? randomBytes(32), hub: self });
  const login = createLogin({
    access,
    log,
    tickets,
    throttle: new SignInThrottle(opts.signInThrottle),
    ...(tokens ? { tokens } : {}),
  });
  let origin = '';
  // A Tasks page's list, as the binding's ListTasks answers it to that page's principal (reading advances delegated tasks).
  const listTasks = async (caller: Principal) => {
    const page = await node.engine.listTasks(
      { pageSize: 50, includeArtifacts: true, historyLength: 2 },
      caller,
    );
    return isA2AError(page) ? { tasks: [] } : listPageToV1(page, true);
  };
  const live = {
    fleet: fleetFeed({ view, everyMs: opts.liveMs?.fleet ?? 5000, log }),
    tasks: tasksFeeds({
      list: listTasks,
      active: (page) =>
        (page as { tasks?: { status?: { state?: string } }[] }).tasks?.some((t) =>
          ['TASK_STATE_SUBMITTED', 'TASK_STATE_WORKING'].includes(t.status?.state ?? ''),
        ) ?? false,
      everyMs: opts.liveMs?.tasks ?? 2000,
      log,
    }),
  };
  const api = createHubApi({
    fleet,
    view,
    trace,
    invoker,
    log,
    hubCatalog: definition.catalog,
    ask: askQuestion,
    negotiationsDir: negotiationsDir(opts.dataDir),
    ...(modelHealthOf ? { model: modelHealthOf } : {}),
    live,
    sse: { maxQueuedBytes: limits.sseQueueBytes, streams },
  });

  const joins =
    opts.joins &&
    createJoinService({
      ...opts.joins,
      fleet,
      dataDir: opts.dataDir,
      authenticate: access.authenticate,
      log,
      ...(opts.fetch ? { fetch: opts.fetch } : {}),
    });
  // MCP at /mcp and the fleet's AI Catalog: the same capabilities, mesh and work, for model harnesses.
  const mcp = createHubMcp({
    fleet,
    invoker,
    trace,
    log,
    hubCatalog: definition.catalog,
    fleetCatalog: () =>
      loadCatalog(
        invoker,
        capabilitiesFromNodes(async () => (await view.snapshot()).nodes, opts.fetch),
      ),
    ask: askQuestion,
    engine: () => node.engine,
    ownCard: () => node.card(),
    // The fleet view checks each member's card against the key the hub pinned for it.
    cardChecks: async () =>
      new Map((await view.snapshot()).nodes.map((n) => [n.name, n.cardSignature])),
    selfUrl: () => selfUrl,
    origins: () => access.origins(),
    anonymous: access.anonymous,
    meshProject: opts.meshProject ?? 'main',
    streams,
    ...(opts.fetch ? { fetch: opts.fetch } : {}),
  });

  const meshSend = createMeshSendRoutes({ presences: consoleMesh, hubName: self });

  async function route(req: Request, server: Server<MeshSocketData>): Promise<Response> {
    const admitted = access.admit(req);
    if (admitted instanceof Response) return admitted;
    const { caller } = admitted;
    if (admitted.crossSiteNavigation) return login.crossSiteNavigation(req);
    // The part the route table names answers; the hub's node answers everything else, including
    // the coded 404, and authenticates its A2A requests with the same policy (bearer token,
    // session, or a fleet node's signature).
    const path = new URL(req.url).pathname;
    let answer: Response | undefined;
    switch (hubOwnerOf(path)) {
      case 'health': // the process's health is the node's (its checks include the trace and the mesh store)
        return node.app.handle(req);
      case 'mcp':
        answer = await mcp.fetch(req, caller);
        break;
      case 'join':
        answer = joins ? await joins.fetch(req) : joinsNotOffered();
        break;
      case 'mesh':
        answer = await mesh.fetch(req, server, caller);
        break;
      case 'console-mesh':
        answer = await meshSend.fetch(req, caller);
        break;
      case 'login': {
        const client = server?.requestIP?.(req)?.address ?? 'unknown';
        answer = await login.fetch(req, { client, caller });
        break;
      }
      case 'api':
        answer = await api.fetch(req, caller);
        break;
      case 'console': {
        const file = consoleSite.fetch(req);
        if (file !== undefined)
          return path === '/' || path === '/index.html'
            ? login.consolePage(req, caller, () => file)
            : file;
        break;
      }
    }
    return answer ?? node.app.handle(req);
  }
  const fetchAll = guardRequests(requests.wrap(route));

  return {
    trace,
    access,
    metrics,
    ...(otlp ? { otlp } : {}),
    invoker,
    node,
    view,
    ...(modelHealthOf ? { model: modelHealthOf } : {}),
    catalog: definition.catalog,
    fetch: fetchAll,
    consoleUrl: (at = origin) => consoleUrl(at, tickets.issue()),
    listen(port, maxPort) {
      const server = listenWithPortWalk<MeshSocketData>({
        hostname: opts.host ?? '127.0.0.1',
        port,
        ...(maxPort !== undefined ? { maxPort } : {}),
        fetch: fetchAll,
        websocket: mesh.websocket,
        idleTimeout: 60,
      });
      access.bind(server.port!);
      // The hub reaches itself on loopback when it binds every address.
      selfUrl = /^(0\.0\.0\.0|::|\[::\])$/.test(opts.host ?? '')
        ? `http://127.0.0.1:${server.port}`
        : server.url.origin;
      origin = selfUrl;
      node.advertise(server.port!);
      // The hub's node serves gRPC beside the hub's own server; a taken gRPC port leaves it off.
      const grpc =
        opts.grpc === false
          ? Promise.resolve(undefined)
          : node.serveGrpc(opts.grpcPort ?? defaultGrpcPort(server.port!)).catch((e: Error) => {
              log('error', 'hub grpc binding not started', { error: e.message });
              return undefined;
            });
      modelHealthOf?.start();
      // `bun run fleet remove` edits the files while the hub runs: the hub follows them.
      const syncing = joins && setInterval(() => void joins.sync(), opts.joins?.syncMs ?? 2000);
      if (syncing) syncing.unref();
      return {
        url: server.url.origin,
        port: server.port!,
        grpc: grpc.then((g) => g?.port),
        /**
         * Graceful stop: `/readyz` turns 503, presences leave with `hub_shutdown` (close 1001),
         * every SSE stream gets its final `SHUTTING_DOWN` frame, open requests get a short grace,
         * then task files and the trace are flushed. The caller closes the databases.
         */
        async stop() {
          clearInterval(syncing);
          modelHealthOf?.stop();
          node.markShuttingDown();
          live.fleet.close();
          live.tasks.close();
          await mcp.close();
          await consoleMesh.close();
          mesh.close();
          streams.endAll('SHUTTING_DOWN');
          let grace: ReturnType<typeof setTimeout> | undefined;
          await Promise.race([
            server.stop(false),
            new Promise<void>((resolve) => (grace = setTimeout(resolve, STOP_GRACE_MS))),
          ]);
          clearTimeout(grace);
          await server.stop(true);
          await (await grpc)?.stop(STOP_GRACE_MS);
          await node.engine.close();
          await node.store.close();
          trace.flush();
          await otlp?.flush();
        },
      };
    },
  };
}
