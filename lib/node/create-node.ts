/**
 * @module lib/node/create-node — `createNode(def, opts)`: the Elysia app every node shares. A node file supplies
 * its name, description and catalog (and optionally its own agent); this gives it the agent card,
 * `POST /a2a`, the A2A HTTP+JSON routes (`/message:send`, `/tasks/…`), the signed `/peer/invoke` and `/peer/relay`,
 * `/healthz` and `/readyz` (`/health` kept as an alias), `/metrics`, the task log (its tasks), webhook
 * delivery, the bounds of lib/limits.ts, and a graceful stop; every request is measured and run in
 * its W3C trace context (lib/metrics/http.ts), and the A2A routes (and `/metrics`) are guarded by
 * the node's access policy (lib/auth/access.ts): every request is authenticated once, by bearer
 * token or, on `/a2a`, a fleet node's signature. This file wires the pieces of lib/node/.
 */

import { tenantOperations } from './tenants.ts';
import { mayAct } from '../auth/access.ts';
import { createOperationTable, type OperationTable } from '../a2a/operation-table.ts';
import type { TaskEngine } from '../a2a/engine/engine.ts';
import type { NodeMetrics } from './task-metrics.ts';
import { tracedOperations } from '../a2a/traced-operations.ts';
import { agentAttributes, type SpanAttributes } from '../telemetry/a2a-span.ts';
import { catalogAgent } from '../agents/keyword-agent.ts';
import { createNodeAuth } from './node-auth.ts';
import { createNodeCard } from './node-card.ts';
import { createNodeGrpc } from './node-grpc.ts';
import { nodeHandlers, nodeReadyChecks } from './node-handlers.ts';
import { startNodeServer } from './node-server.ts';
import { nodeSettings } from './node-settings.ts';
import { createNodeTasks, openStore } from './node-tasks.ts';
import { mountNodeRoutes } from './mount-routes.ts';
import type { NodeApp, NodeDefinition, NodeOptions } from './node-types.ts';

/**
 * The operation table, traced: each operation's span to `spans` (with `gen_ai.agent.*` of the
 * card, read once: name, description and version do not change) and its count to the metrics.
 */
function nodeOperations(
  engine: TaskEngine,
  { spanExport: spans, tenants = [] }: Pick<NodeOptions, 'spanExport' | 'tenants'>,
  card: () => Record<string, unknown>,
  metrics: NodeMetrics,
): OperationTable {
  let agent: SpanAttributes | undefined;
  const traced = tracedOperations(createOperationTable(engine, true), {
    ...(spans ? { spans } : {}),
    agent: () => (agent ??= agentAttributes(card())),
    observe: metrics.onOperation,
  });
  // Each request's tenant applied to its caller, for all three bindings.
  return tenantOperations(traced, tenants);
}

/** @throws Error when anonymous callers may act beyond loopback; PortTakenError on a taken port. */
export function createNode(def: NodeDefinition, opts: NodeOptions): NodeApp {
  // 1. Options: who may call, the bounds, the shared pieces a process may pass in.
  const settings = nodeSettings(def, opts);
  const { log, host, policy, limits, streams, push, metrics, nodeMetrics } = settings;
  let shuttingDown = false;
  const markShuttingDown = () => {
    shuttingDown = true;
  };

  // 2. Tasks: the store and the engine over it.
  const { store, engine } = createNodeTasks({
    name: def.name,
    dataDir: opts.dataDir,
    ...(opts.tasksDatabaseUrl ? { tasksDatabaseUrl: opts.tasksDatabaseUrl } : {}),
    agent: def.agent ?? catalogAgent(def.catalog),
    log,
    limits,
    inputModes: settings.inputModes,
    outputModes: settings.outputModes,
    push,
    now: opts.now,
    mayAct: (caller) => mayAct(policy, caller),
    metrics: nodeMetrics,
    ...(opts.onTaskEvent ? { onEvent: opts.onTaskEvent } : {}),
  });
  const readyChecks = nodeReadyChecks(store, opts.readyChecks, () => shuttingDown);

  // 3. The card, and who a request speaks for.
  const card = createNodeCard({
    def,
    opts,
    host,
    policy,
    inputModes: settings.inputModes,
    outputModes: settings.outputModes,
    pushNotifications: push !== undefined,
  });
  const auth = createNodeAuth({
    policy,
    host,
    log,
    ...(opts.peer ? { verifier: opts.peer.verifier } : {}),
    maxBody: opts.maxBodyBytes ?? 4 * 1024 * 1024,
  });

  // 4. The operations, built once for the three bindings; gRPC on its own port when served.
  const operations = nodeOperations(engine, opts, () => card.unsigned(), nodeMetrics);
  const grpc = createNodeGrpc(def, settings, operations, auth, card);

  // 5. The routes: one handler per entry of the node's table, measured.
  const speaksA2A = def.a2a !== false;
  const parts = { store, operations, card, auth, readyChecks };
  const handlers = nodeHandlers({ def, opts, settings, ...parts });
  const serves = {
    speaksA2A,
    publishesIdentity: opts.identity !== undefined,
    servesMcp: def.mcp !== undefined,
    ...(speaksA2A && opts.tenants?.length ? { fallback: handlers.tenantRest } : {}),
  };
  const app = mountNodeRoutes({ handlers, ...serves, log });
  const measuredFetch = settings.requests.wrap((request: Request) => app.handle(request));
  const grpcPort = opts.grpcPort !== undefined ? { port: opts.grpcPort } : {};

  return {
    app,
    fetch: measuredFetch,
    metrics,
    engine,
    store,
    ready: () => openStore(store),
    push,
    streams,
    markShuttingDown,
    card: () => card.json(),
    cardContent: () => card.unsigned(),
    rotateCardKey: (next) => card.rotate(next),
    advertise: (port) => card.advertise(port),
    serveGrpc: grpc.serve,
    async start() {
      await openStore(store);
      return startNodeServer({
        name: def.name,
        host,
        port: opts.port,
        ...(opts.publicUrl ? { publicUrl: opts.publicUrl } : {}),
        log,
        anonymous: policy.anonymous,
        speaksA2A,
        fetch: measuredFetch,
        advertise: card.advertise,
        ...(speaksA2A && opts.grpc !== false ? { grpc: { ...grpcPort, serve: grpc.serve } } : {}),
        grpcServer: grpc.server,
        streams,
        engine,
        store,
        markShuttingDown,
      });
    },
  };
}
