/**
 * @module lib/node/create-node — `createNode(def, opts)`: the Elysia app every node shares. A node file supplies
 * its name, description and catalog (and optionally its own agent); this gives it the agent card,
 * `POST /a2a`, the A2A HTTP+JSON routes (`/message:send`, `/tasks/…`), the signed `/peer/invoke` and `/peer/relay`,
 * `/healthz` and `/readyz` (`/health` kept as an alias), `/metrics`, the JSON-file task store, webhook
 * delivery, the bounds of lib/limits.ts, and a graceful stop; every request is measured and run in
 * its W3C trace context (lib/metrics/http.ts), and the A2A routes (and `/metrics`) are guarded by
 * the node's access policy (lib/auth/access.ts): every request is authenticated once, by bearer
 * token or, on `/a2a`, a fleet node's signature. The only place in lib/ that touches Elysia.
 */

import { join } from 'node:path';
import { Elysia, type AnyElysia } from 'elysia';
import {
  defaultAnonymous,
  isLoopbackHost,
  mayAct,
  tokenAuthenticator,
  type AccessPolicy,
  type AnonymousAccess,
  type Authenticate,
} from '../auth/access.ts';
import type { Principal } from '../auth/principal.ts';
import type { TokenBook } from '../auth/tokens.ts';
import { readBodyBytes } from '../body.ts';
import { a2aError, toRestError, type A2AError } from '../a2a/errors.ts';
import { jsonResponse, rpcError } from '../a2a/jsonrpc.ts';
import { challenge, createA2AHandler, requestedVersion } from '../a2a/jsonrpc-binding.ts';
import { CardServer, bindWarnings, buildAgentCard } from '../a2a/card.ts';
import { TaskEngine } from '../a2a/engine.ts';
import type { TaskEvent } from '../a2a/types.ts';
import { WebhookSender } from '../a2a/push.ts';
import { createRestHandler } from '../a2a/rest-binding.ts';
import { grpcCallDeps, listenGrpc, type GrpcServer } from '../a2a/grpc/server.ts';
import type { Agent } from '../a2a/agent.ts';
import { catalogAgent } from '../catalog/keyword-agent.ts';
import type { Catalog } from '../catalog/catalog.ts';
import type { Fleet } from '../fleet/config.ts';
import { silentLog, type Log } from '../log.ts';
import type { PeerClient } from '../peer/client.ts';
import {
  handlePeerInvoke,
  handlePeerRelay,
  peerError,
  type PeerRouteDeps,
} from '../peer/routes.ts';
import type { PeerVerifier } from '../peer/signature.ts';
import type { CallSink } from '../fleet/traced-call.ts';
import { metricsHandler, type MetricsAccess } from '../metrics/endpoint.ts';
import { createRequestObserver, templaterOf, type RequestObserver } from '../metrics/http.ts';
import { NODE_ROUTE_TABLE, nodeRouteTemplates, type NodeHandler } from './routes.ts';
import { createNodeMetrics } from '../metrics/node.ts';
import { createMetricsRegistry, type MetricsRegistry } from '../metrics/registry.ts';
import type { TaskStore } from '../a2a/task-store.ts';
import { FileTaskStore } from '../a2a/task-store-files.ts';
import { PostgresTaskStore } from '../a2a/task-store-postgres.ts';
import { recoverInterrupted } from '../a2a/recovery.ts';
import { assertPortFree, isPortTaken, PortTakenError } from '../port-check.ts';
import { SseStreams } from '../a2a/sse.ts';
import { livenessResponse, readinessResponse, type ReadyCheck } from '../health.ts';
import { LIMITS, type Limits } from '../limits.ts';
import { browserRefusal, ownOrigins } from '../net/browser-guard.ts';
import { guardRequests, serveDefaults } from '../net/request-guard.ts';

/** How long a stop waits for open requests and streams to finish before it cuts the connections. */
const STOP_GRACE_MS = 2_000;

export interface NodeDefinition {
  name: string;
  description: string;
  version?: string;
  catalog: Catalog;
  /** Defaults to the catalog agent (keyword pick / data-part skill call). */
  agent?: Agent;
  /**
   * Whether a model answers messages; declared on the card as the agent-backed extension
   * (lib/a2a/card.ts). A function is asked at every card request (a model that comes and goes).
   */
  agentBacked?: boolean | (() => boolean);
  /** Files and folders the node reads its data from; the boot self-check reads each (lib/node/self-check.ts). */
  dataPaths?: readonly string[];
  /** How a node that may be model-backed wants its model used, unless configured otherwise (lib/model/agent.ts). */
  modelMode?: 'model' | 'dynamic';
  inputModes?: string[];
  outputModes?: string[];
  /**
   * False for an app that joins the fleet through the signed peer channel only: no agent card
   * and no `/a2a` (yet); `/peer/*`, `/health` and `/capabilities` are still served.
   */
  a2a?: boolean;
  /** Work to end when the process shuts down cleanly (e.g. the executor's running jobs). */
  shutdown?: () => Promise<void>;
}

export interface NodeOptions {
  /** Tasks go to `<dataDir>/<name>/tasks/` (unless `tasksDatabaseUrl` is set). */
  dataDir: string;
  /**
   * `postgres://…`: the node's tasks live in this database instead, shared by every process of
   * the node that names it (TASKS_DATABASE_URL; docs/scale-out.md).
   */
  tasksDatabaseUrl?: string;
  host?: string;
  /** 0 picks a free port. */
  port?: number;
  /** The URL the card advertises (PEER_PUBLIC_URL). */
  publicUrl?: string;
  log?: Log;
  now?: () => number;
  /** Set false to turn webhook delivery off (the card then says pushNotifications: false). */
  push?: boolean;
  /** Non-public webhook hosts allowed: names, addresses or CIDR ranges (PUSH_ALLOW_HOSTS); see lib/a2a/push.ts. */
  pushAllowHosts?: string[];
  pushRetryDelaysMs?: number[];
  maxBodyBytes?: number;
  /**
   * The signed peer channel (`/peer/invoke`, `/peer/relay`); without it those routes refuse.
   * `spans`: where the calls it serves and forwards are recorded (the hub's trace).
   */
  peer?: { verifier: PeerVerifier; client?: PeerClient; fleet?: Fleet; spans?: CallSink };
  /** The process's metrics, when it shares one registry (the hub); otherwise the node has its own. */
  metrics?: MetricsRegistry;
  /** What measures the requests, when the process already has one (it must be on `metrics`). */
  requests?: RequestObserver;
  /** Who may read `/metrics` beyond loopback (lib/metrics/endpoint.ts); without it only a loopback bind serves it. */
  metricsAccess?: MetricsAccess;
  /**
   * Who may call the A2A routes (docs/security.md). `tokens`: the bearer tokens accepted (the
   * fleet's `DATA_DIR/keys/tokens.json`); `anonymous`: what a caller without proof may do (default
   * `read` on loopback, `none` beyond); `authenticate` replaces bearer-token authentication (the
   * hub adds console sessions).
   */
  access?: { tokens?: TokenBook; anonymous?: AnonymousAccess; authenticate?: Authenticate };
  /** Bounds of the task cache, tasks and SSE queues (defaults: LIMITS). */
  limits?: Partial<Limits>;
  /** Called on every event of every task (the hub's live Tasks pages listen). */
  onTaskEvent?: (event: TaskEvent) => void;
  /** The registry of open SSE streams, when the process shares one (the hub); otherwise the node makes its own. */
  streams?: SseStreams;
  /** More readiness checks, beside the task store, the peer keys and the shutdown state. */
  readyChecks?: Record<string, ReadyCheck>;
  /** The node's public identity, served at `GET /peer/identity` (lib/peer/keys.ts `publicIdentity`). */
  identity?: unknown;
  /** Set false to serve no gRPC binding (lib/a2a/grpc/); the card then lists none. */
  grpc?: boolean;
  /** The gRPC binding's port (`--grpc-port`): default the node's port + 1000, 0 picks a free one. */
  grpcPort?: number;
}

export interface RunningNode {
  url: string;
  port: number;
  /** The gRPC binding's port, when the node serves it. */
  grpcPort?: number;
  stop(): Promise<void>;
}

export interface NodeApp {
  app: AnyElysia;
  /** `app.handle`, measured and run in each request's trace context: what a server should call. */
  fetch(request: Request): Promise<Response>;
  metrics: MetricsRegistry;
  engine: TaskEngine;
  store: TaskStore;
  /** Resolves once the task store is open (at once for the JSON files); `start` waits for it. */
  ready(): Promise<void>;
  /** The node's open SSE streams. */
  streams: SseStreams;
  /** From now on `/readyz` answers 503 `shutting down` (set at the start of a stop). */
  markShuttingDown(): void;
  push: WebhookSender | undefined;
  /** The card as currently served. */
  card(): Record<string, unknown>;
  /**
   * Fixes the port the card advertises, for a node served by someone else's server (the hub
   * serves its own node inside its Bun.serve through `app.handle`).
   */
  advertise(port: number): void;
  /**
   * Serves the gRPC binding on its own port and lists it on the card (`start` does this unless
   * `grpc` is false; the hub calls it beside its own server).
   */
  serveGrpc(port: number): Promise<GrpcServer>;
  /** Binds the port, fixes the advertised URL, and serves. */
  start(): Promise<RunningNode>;
}

/** The gRPC port a node takes when none is given: its own port + 1000, or any when that is 0 or too high. */
export function defaultGrpcPort(port: number): number {
  return port > 0 && port + 1000 <= 65535 ? port + 1000 : 0;
}

const DEFAULT_MODES = ['text/plain', 'application/json'];
/** The scope a fleet node signs an A2A request with (route `/a2a`). */
export const A2A_SIGNED_SCOPE = 'a2a';

export function createNode(def: NodeDefinition, opts: NodeOptions): NodeApp {
  const log = opts.log ?? silentLog;
  const host = opts.host ?? '127.0.0.1';
  const policy: AccessPolicy = {
    authenticate: opts.access?.authenticate ?? tokenAuthenticator(opts.access?.tokens),
    anonymous: opts.access?.anonymous ?? defaultAnonymous(host),
  };
  // Letting anonymous callers act is for a conformance run on this machine only.
  if (policy.anonymous === 'all' && !isLoopbackHost(host))
    throw new Error(
      `node ${def.name}: anonymous callers may act only on a loopback address, not ${host}`,
    );
  // A second copy of a running node stops here, before it opens (and recovers) the same tasks.
  assertPortFree(def.name, host, opts.port ?? 0);
  const limits: Limits = { ...LIMITS, ...opts.limits };
  const cache = { cacheSize: limits.taskCacheEntries, cacheBytes: limits.taskCacheBytes };
  const store: TaskStore = opts.tasksDatabaseUrl
    ? new PostgresTaskStore({
        url: opts.tasksDatabaseUrl,
        node: def.name,
        log,
        ...cache,
        maxStored: limits.taskMaxStored,
        maxAgeHours: limits.taskMaxAgeHours,
      })
    : FileTaskStore.open({
        dir: join(opts.dataDir, def.name, 'tasks'),
        log,
        ...cache,
        maxStored: limits.taskMaxStored,
        maxAgeHours: limits.taskMaxAgeHours,
        ...(opts.now ? { now: opts.now } : {}),
      });
  const streams =
    opts.streams ??
    new SseStreams({ max: limits.sseStreams, maxPerOwner: limits.sseStreamsPerPrincipal });
  let shuttingDown = false;
  const push =
    opts.push === false
      ? undefined
      : new WebhookSender({
          allowHosts: opts.pushAllowHosts ?? [],
          log,
          ...(opts.pushRetryDelaysMs ? { retryDelaysMs: opts.pushRetryDelaysMs } : {}),
        });
  const metrics = opts.metrics ?? createMetricsRegistry();
  const requests =
    opts.requests ?? createRequestObserver(metrics, templaterOf(nodeRouteTemplates()));
  const nodeMetrics = createNodeMetrics(metrics);
  if (push) nodeMetrics.watchWebhooks(push);
  const inputModes = def.inputModes ?? DEFAULT_MODES;
  const outputModes = def.outputModes ?? DEFAULT_MODES;
  const agent = def.agent ?? catalogAgent(def.catalog);
  const engine = new TaskEngine({
    store,
    agent,
    log,
    inputModes,
    outputModes,
    ...(push ? { push } : {}),
    ...(opts.now ? { now: opts.now } : {}),
    mayAct: (caller) => mayAct(policy, caller),
    onEvent: opts.onTaskEvent
      ? (e) => (nodeMetrics.onTaskEvent(e), opts.onTaskEvent!(e))
      : nodeMetrics.onTaskEvent,
    limits: {
      historyMessages: limits.taskHistoryMessages,
      historyBytes: limits.taskHistoryBytes,
      artifacts: limits.taskArtifacts,
      artifactBytes: limits.taskArtifactBytes,
    },
  });
  // Tasks a crash left running are settled before anything is served (see lib/a2a/recovery.ts).
  // A shared store has several processes per node; its engine takes over a gone process's tasks.
  if (store instanceof FileTaskStore)
    recoverInterrupted({
      store,
      log,
      ...(agent.resumes ? { resumes: (t) => agent.resumes!(t) } : {}),
      ...(push ? { push } : {}),
      ...(opts.now ? { now: opts.now } : {}),
    });
  const bodyLimit = opts.maxBodyBytes ? { maxBodyBytes: opts.maxBodyBytes } : {};
  const sse = { maxQueuedBytes: limits.sseQueueBytes, streams };
  const handleA2A = createA2AHandler({ engine, log, streaming: true, sse, ...bodyLimit });
  const handleRest = createRestHandler({ engine, log, streaming: true, sse, ...bodyLimit });
  const readyChecks: Record<string, ReadyCheck> = {
    tasks: () => store.isOpen || 'the task store is closed',
    // A node with no fleet is a standalone A2A server: its peer channel is off, which is no failure.
    keys: () => true,
    ...opts.readyChecks,
    shutdown: () => !shuttingDown || 'shutting down',
  };

  let grpcPort: number | undefined;
  const cardFor = (port: number) => {
    const advertisedHost = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;
    const baseUrl = (
      opts.publicUrl ??
      `http://${advertisedHost.includes(':') ? `[${advertisedHost}]` : advertisedHost}:${port}`
    ).replace(/\/+$/, '');
    // The gRPC address is the advertised host with the binding's own port.
    const grpcAddress =
      grpcPort === undefined ? undefined : `${new URL(baseUrl).hostname}:${grpcPort}`;
    return buildAgentCard({
      ...(grpcAddress ? { grpcAddress } : {}),
      name: def.name,
      description: def.description,
      version: def.version ?? '1.0.0',
      baseUrl,
      skills: def.catalog.skills(),
      inputModes,
      outputModes,
      streaming: true,
      pushNotifications: push !== undefined,
      agentBacked:
        typeof def.agentBacked === 'function' ? def.agentBacked() : (def.agentBacked ?? false),
      warnings: bindWarnings(host, opts.publicUrl, baseUrl),
      auth: {
        required:
          policy.anonymous === 'none' ? 'all' : policy.anonymous === 'read' ? 'writes' : 'none',
        protectedSkills: def.catalog.capabilities.filter((c) => !c.readOnly).map((c) => c.id),
      },
    });
  };
  let advertisedPort = opts.port ?? 0;
  const cards = new CardServer(cardFor(advertisedPort), opts.now);
  // A card whose agent-backed state can change is rebuilt when read (the server keeps it if unchanged).
  const currentCard = (req: Request) => {
    if (typeof def.agentBacked === 'function') cards.update(cardFor(advertisedPort), opts.now);
    return cards.respond(req);
  };

  // Peer calls reach this node's code only through its catalog.
  const peer: PeerRouteDeps | undefined = opts.peer && {
    self: def.name,
    verifier: opts.peer.verifier,
    dispatch: (capability, args, from) =>
      def.catalog.invoke(capability, args, undefined, {
        caller: { kind: 'node', name: from.node },
        ...(from.onBehalfOf ? { onBehalfOf: from.onBehalfOf } : {}),
      }),
    log,
    ...(opts.peer.client ? { client: opts.peer.client } : {}),
    ...(opts.peer.fleet ? { fleet: opts.peer.fleet } : {}),
    ...(opts.peer.spans ? { spans: opts.peer.spans } : {}),
  };
  const peerRoute =
    (handler: typeof handlePeerInvoke) =>
    ({ request }: { request: Request }) =>
      peer ? handler(request, peer) : peerError('PEER_NOT_CONFIGURED');

  const speaksA2A = def.a2a !== false;
  const noRoute = () =>
    new Response(JSON.stringify({ error: { code: 'NOT_FOUND', message: 'No such route' } }), {
      status: 404,
      headers: { 'content-type': 'application/json' },
    });
  // Elysia reads `/message:send` as a parameter route (`/message…`), so the REST handler decides
  // what is its own and everything else gets the ordinary 404.
  const maxBody = opts.maxBodyBytes ?? 4 * 1024 * 1024;

  /**
   * Who an A2A request speaks for, or the 401 that refuses it. On `/a2a` a fleet node may sign its
   * request as on the peer routes (scope `a2a`); the body is read once to check it and handed on.
   */
  async function identify(
    request: Request,
    jsonRpc: boolean,
  ): Promise<{ request: Request; caller: Principal } | Response> {
    const refuse = (message: string) => {
      const err = a2aError('UNAUTHENTICATED', message);
      if (!jsonRpc) {
        const { http, body } = toRestError(err);
        return challenge(jsonResponse(body, http));
      }
      const v = requestedVersion(request.headers.get('a2a-version'));
      return challenge(jsonResponse(rpcError(null, err, typeof v === 'string' ? v : '1.0'), 401));
    };
    if (jsonRpc && request.headers.has('x-peer-node')) {
      if (!opts.peer)
        return refuse('This node has no peer keys, so it cannot check a fleet signature');
      const bytes = await readBodyBytes(request, maxBody).catch(() => undefined);
      if (!bytes)
        return refuse(`A signed request body must be readable and at most ${maxBody} bytes`);
      const v = await opts.peer.verifier.verify(request.headers, bytes, '/a2a');
      if (!v.ok || v.scope !== A2A_SIGNED_SCOPE) {
        const code = v.ok ? 'PEER_SCOPE' : v.code;
        log('warn', 'a2a signature refused', { code });
        return refuse(
          `Fleet signature refused (${code}): ${v.ok ? `an A2A request is signed with scope ${A2A_SIGNED_SCOPE}` : v.message}`,
        );
      }
      const replay = new Request(request.url, {
        method: request.method,
        headers: request.headers,
        body: bytes as Uint8Array<ArrayBuffer>,
      });
      return { request: replay, caller: { kind: 'node', name: v.node } };
    }
    const who = policy.authenticate(request);
    if (!who.ok) return refuse(who.message);
    if (who.principal.kind === 'anonymous' && policy.anonymous === 'none')
      return refuse(
        'This node is reachable beyond this machine, so every A2A call needs a bearer token (Authorization: Bearer …)',
      );
    return { request, caller: who.principal };
  }

  /** A gRPC call's caller, from its metadata: a bearer token under the same policy (no fleet signature). */
  const identifyGrpc = (metadata: Headers): Principal | A2AError => {
    const who = policy.authenticate(new Request(`http://${host}/`, { headers: metadata }));
    if (!who.ok) return a2aError('UNAUTHENTICATED', who.message);
    if (who.principal.kind === 'anonymous' && policy.anonymous === 'none')
      return a2aError(
        'UNAUTHENTICATED',
        'This node is reachable beyond this machine, so every A2A call needs a bearer token (authorization: Bearer …)',
      );
    return who.principal;
  };
  const grpcDeps = grpcCallDeps({
    engine,
    log,
    streaming: true,
    identify: identifyGrpc,
    metrics,
    maxQueuedBytes: limits.sseQueueBytes,
    streams,
  });
  let grpcServer: GrpcServer | undefined;
  async function serveGrpc(port: number): Promise<GrpcServer> {
    grpcServer = await listenGrpc(grpcDeps, host, port).catch((e: unknown) => {
      // A taken gRPC port is told like a taken HTTP port (bun run node exits with one line).
      throw isPortTaken(e) ? new PortTakenError(`${def.name} (gRPC)`, host, port) : e;
    });
    grpcPort = grpcServer.port;
    cards.update(cardFor(advertisedPort), opts.now);
    log('info', 'grpc listening', { node: def.name, port: grpcPort });
    return grpcServer;
  }
  const servesGrpc = speaksA2A && opts.grpc !== false;

  const a2a = async ({ request }: { request: Request }) => {
    const who = await identify(request, true);
    return who instanceof Response ? who : handleA2A(who.request, who.caller);
  };
  const rest = async ({ request }: { request: Request }) => {
    const who = await identify(request, false);
    if (who instanceof Response) return who;
    return (await handleRest(who.request, who.caller)) ?? noRoute();
  };
  // `/metrics` asks the same policy as the A2A routes (beyond loopback: a principal) when the node
  // can authenticate anyone, unless given its own hook; without either, only a loopback bind serves it.
  const policyMetricsAccess = (req: Request): Response | undefined => {
    const who = policy.authenticate(req);
    if (who.ok && (who.principal.kind !== 'anonymous' || policy.anonymous !== 'none'))
      return undefined;
    const { http, body } = toRestError(
      a2aError(
        'UNAUTHENTICATED',
        who.ok
          ? '/metrics needs a principal here (bound beyond loopback, or sign-in required): send a bearer token (bun run keys token add <name>)'
          : who.message,
      ),
    );
    return challenge(jsonResponse(body, http));
  };
  const metricsAccess =
    opts.metricsAccess ??
    (opts.access?.tokens || opts.access?.authenticate ? policyMetricsAccess : undefined);
  const serveMetrics = metricsHandler(metrics, {
    host,
    ...(metricsAccess ? { access: metricsAccess } : {}),
  });
  // The error hook comes first so it covers every route registered after it.
  const app = new Elysia({ normalize: false }).onError(({ code, set }) => {
    // Routing and framework errors become coded JSON; handlers themselves return values.
    if (code === 'NOT_FOUND') return noRoute();
    set.headers['content-type'] = 'application/json';
    log('error', 'request failed', { code: String(code) });
    set.status = 500;
    return { error: { code: 'INTERNAL', message: 'Internal error' } };
  });
  type Handler = (ctx: { request: Request }) => unknown;
  const handlers: Record<NodeHandler, Handler> = {
    card: ({ request }) => currentCard(request),
    jsonRpc: a2a,
    rest,
    peerInvoke: peerRoute(handlePeerInvoke),
    peerRelay: peerRoute(handlePeerRelay),
    peerIdentity: () => opts.identity,
    healthz: () => livenessResponse(def.name),
    readyz: () => readinessResponse(def.name, readyChecks),
    health: async () => ({ ok: true, name: def.name, a2a: speaksA2A, tasks: await store.count() }),
    capabilities: () => ({ node: def.name, capabilities: def.catalog.descriptors() }),
    metrics: ({ request }) => serveMetrics(request),
  };
  // Every route the node serves comes from its table (lib/node/routes.ts), and only from there.
  for (const route of NODE_ROUTE_TABLE) {
    if (route.when === 'a2a' && !speaksA2A) continue;
    if (route.when === 'identity' && opts.identity === undefined) continue;
    const handler = handlers[route.handler];
    // The A2A bindings read their bodies themselves (a signed body is checked as it arrived).
    const hook = route.when === 'a2a' ? { parse: 'none' as const } : {};
    if (route.method === 'GET') app.get(route.path, handler, hook);
    else if (route.method === 'POST') app.post(route.path, handler, hook);
    else app.all(route.path, handler, hook);
  }
  const measuredFetch = requests.wrap((request: Request) => app.handle(request));

  return {
    app,
    fetch: measuredFetch,
    metrics,
    engine,
    store,
    ready: async () => {
      if (store instanceof PostgresTaskStore) await store.open();
    },
    push,
    streams,
    markShuttingDown: () => {
      shuttingDown = true;
    },
    card: () => {
      if (typeof def.agentBacked === 'function') cards.update(cardFor(advertisedPort), opts.now);
      return cards.json;
    },
    advertise: (port) => {
      advertisedPort = port;
      cards.update(cardFor(port), opts.now);
    },
    serveGrpc,
    async start() {
      if (store instanceof PostgresTaskStore) await store.open();
      // Bun.serve rather than app.listen: every request goes through the measured `fetch`. No
      // reusePort: a second process on a taken port must fail here (EADDRINUSE), not share it.
      // A page on another site gets what the hub gives it: the public reads (lib/net/browser-guard.ts).
      let origins = new Set<string>();
      const server = Bun.serve({
        hostname: host,
        port: opts.port ?? 0,
        idleTimeout: 60,
        reusePort: false,
        ...serveDefaults,
        fetch: guardRequests((req) => browserRefusal(req, origins) ?? measuredFetch(req)),
      });
      const port = server.port!;
      origins = ownOrigins(host, port, opts.publicUrl ? [opts.publicUrl] : []);
      advertisedPort = port;
      if (servesGrpc)
        await serveGrpc(opts.grpcPort ?? defaultGrpcPort(opts.port ?? 0)).catch((e: Error) => {
          server.stop(true);
          throw e;
        });
      cards.update(cardFor(port), opts.now);
      const url = `http://${host === '0.0.0.0' ? '127.0.0.1' : host}:${port}`;
      log('info', 'node listening', { node: def.name, url, anonymous: policy.anonymous });
      if (!isLoopbackHost(host) && speaksA2A)
        log(
          'warn',
          `${def.name} is bound to ${host}: every A2A call needs a bearer token (bun run keys token add <name>) or a fleet signature`,
        );
      return {
        url,
        port,
        ...(grpcPort !== undefined ? { grpcPort } : {}),
        /**
         * Graceful stop: no new connections, every open stream ends with a final `SHUTTING_DOWN`
         * frame, open requests get a short grace, then the task files are flushed.
         */
        async stop() {
          shuttingDown = true;
          streams.endAll('SHUTTING_DOWN');
          let grace: ReturnType<typeof setTimeout> | undefined;
          await Promise.race([
            server.stop(false),
            new Promise<void>((resolve) => (grace = setTimeout(resolve, STOP_GRACE_MS))),
          ]);
          clearTimeout(grace);
          await server.stop(true);
          await grpcServer?.stop(STOP_GRACE_MS);
          await engine.close();
          await store.close();
        },
      };
    },
  };
}
