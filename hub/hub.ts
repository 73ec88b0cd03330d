/**
 * @module hub/hub — `createHub(opts)`: every piece of the hub process behind one fetch handler:
 * the mesh (routes and WebSocket), the console API (`/api/*`), the browser console (`/`) with its
 * sign-in, the hub's own A2A node `a2a` (card, `/a2a`, REST, `/peer/*`), `/healthz`, `/readyz`
 * and `/metrics` for the whole process, every request run in its W3C trace context, and the trace
 * exported over OTLP when configured. One access policy (hub/http/access.ts) admits every request
 * first. Dependencies come in as arguments so tests can build a hub on port 0 with an in-memory database.
 * This file wires the pieces; the fetch handler is hub/hub-route.ts, the listening hub hub/hub-listen.ts.
 */

import { isA2AError } from '../lib/a2a/errors.ts';
import type { NodeApp } from '../lib/node/node-types.ts';
import { createTraceStore } from '../lib/fleet/trace.ts';
import { SseStreams } from '../lib/a2a/sse.ts';
import { LIMITS, type Limits } from '../lib/limits.ts';
import { guardRequests } from '../lib/net/request-guard.ts';
import { join } from 'node:path';
import { createHubApi } from './http/api.ts';
import { createConsole } from './http/console.ts';
import { createLogin } from './http/login.ts';
import { createMeshSendRoutes } from './http/mesh-send.ts';
import { createConsolePresences } from './mesh/console-presence.ts';
import { SignInThrottle } from './http/sign-in-throttle.ts';
import { ConsoleTickets, consoleUrl } from './http/tickets.ts';
import { randomBytes } from 'node:crypto';
import { capabilitiesFromNodes, loadCatalog } from './workbench/ask-catalog.ts';
import { createHubMcp } from './mcp/surface.ts';
import { createDelegator } from './workbench/delegate.ts';
import { createJoinService } from './fleet/join.ts';
import { hubNode } from './workbench/hub-node.ts';
import { negotiationsDir } from './workbench/negotiation.ts';
import { createMeshServer } from './mesh/server.ts';
import { hubRoutes, registerHubMetrics } from './metrics.ts';
import { createRequestObserver } from '../lib/metrics/http.ts';
import { createMetricsRegistry } from '../lib/metrics/registry.ts';
import { createOtlpExporter } from '../lib/telemetry/otlp.ts';

import { hubRoute } from './hub-route.ts';
import { hubFleet } from './hub-fleet.ts';
import { createHubNode } from './hub-own-node.ts';
import { hubLiveFeeds } from './http/hub-live.ts';
import { listenHub } from './hub-listen.ts';
import { hubAsk } from './workbench/hub-ask.ts';
import type { Hub, HubOptions } from './hub-types.ts';

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
  const { client, invoker, tokens, access, view } = hubFleet(opts, trace);
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
  const asker = hubAsk({
    self,
    log,
    ...(opts.model ? { model: opts.model } : {}),
    invoker,
    view,
    catalog: () => definition.catalog,
    ...(opts.fetch ? { fetch: opts.fetch } : {}),
  });
  const modelHealthOf = asker.health;
  const askQuestion = asker.ask;
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
  const node = createHubNode(definition, opts, {
    client,
    trace,
    access,
    metrics,
    requests,
    limits,
    streams,
    // The Tasks pages' lists are read again when one of the hub's tasks changes (declared below).
    onTaskEvent: () => live.tasks.changed(),
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
  const live = hubLiveFeeds({
    view,
    tasks: () => node.engine,
    log,
    ...(opts.liveMs ? { liveMs: opts.liveMs } : {}),
  });
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

  const route = hubRoute({
    access,
    node,
    mcp,
    ...(joins ? { joins } : {}),
    mesh,
    meshSend,
    login,
    api,
    consoleSite,
  });
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
    listen: (port, maxPort) =>
      listenHub(
        {
          ...(opts.host ? { host: opts.host } : {}),
          log,
          fetch: fetchAll,
          access,
          node,
          mesh,
          grpc: opts.grpc === false ? false : opts.grpcPort,
          ...(modelHealthOf ? { model: modelHealthOf } : {}),
          ...(joins
            ? { joins: { sync: () => joins.sync(), syncMs: opts.joins?.syncMs ?? 2000 } }
            : {}),
          reachedAt: (url) => {
            selfUrl = url;
            origin = url;
          },
          live,
          mcp,
          consoleMesh,
          streams,
          trace,
          ...(otlp ? { otlp } : {}),
        },
        port,
        maxPort,
      ),
  };
}
