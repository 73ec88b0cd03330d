/**
 * @module hub/hub — `createHub(opts)`: every piece of the hub process behind one fetch handler:
 * the mesh (routes and WebSocket), the console API (`/api/*`), the browser console (`/`) with its
 * sign-in, the hub's own A2A node `a2a` (card, `/a2a`, REST, `/peer/*`), `/healthz`, `/readyz`
 * and `/metrics` for the whole process, every request run in its W3C trace context, and the trace
 * exported over OTLP when configured. One access policy (hub/http/access.ts) admits every request
 * first. Dependencies come in as arguments so tests can build a hub on port 0 with an in-memory database.
 * This file wires the pieces: hub/hub-telemetry.ts, hub-fleet.ts, hub-mesh.ts, hub-work.ts,
 * hub-own-node.ts, hub-console.ts, hub-mcp.ts; the fetch handler is hub/hub-route.ts, the
 * listening hub hub/hub-listen.ts.
 */

import { LIMITS, type Limits } from '../lib/limits.ts';
import { guardRequests } from '../lib/net/request-guard.ts';
import { createMeshSendRoutes } from './http/mesh-send.ts';
import { consoleUrl } from './http/tickets.ts';
import { registerHubMetrics } from './metrics.ts';
import { hubConsole } from './hub-console.ts';
import { hubFleet, hubRegistry } from './hub-fleet.ts';
import { listenHub } from './hub-listen.ts';
import { hubMcp } from './hub-mcp.ts';
import { hubMesh } from './hub-mesh.ts';
import { createHubNode } from './hub-own-node.ts';
import { hubRoute } from './hub-route.ts';
import { hubTelemetry } from './hub-telemetry.ts';
import type { Hub, HubOptions } from './hub-types.ts';
import { hubWork } from './hub-work.ts';

export function createHub(given: HubOptions): Hub {
  // Every part reads the fleet through the registry's live view, never a copy taken here.
  const registry = hubRegistry(given);
  const opts: HubOptions = { ...given, fleet: registry.live };
  const { log } = opts;
  const self = registry.live.hub.name;
  const limits: Limits = { ...LIMITS, ...opts.limits };
  const telemetry = hubTelemetry(opts, limits);
  const { trace, streams, metrics, requests, otlp } = telemetry;
  // A joining node may not list the hub's own addresses (its gRPC port too): read from its card.
  const ownCard = () => node.card();
  const { client, invoker, tokens, access, view, joins } = hubFleet(opts, trace, registry, ownCard);
  const counted = registerHubMetrics(metrics, {
    self,
    trace,
    presences: () => mesh.realtime.roster.size,
    streams,
    otlp,
  });
  // Where the hub reaches itself (set once it listens): MCP sessions and console visitors are present through it.
  let selfUrl: string | undefined;
  const { consoleMesh, mesh } = hubMesh(opts, {
    access,
    tokens,
    store: counted.countMeshMessages(opts.meshStore),
    selfUrl: () => selfUrl,
  });
  // The delegator reads the hub's own tasks only when a delegation continues, once the node exists.
  const { definition, ask, model } = hubWork(opts, {
    invoker,
    view,
    limits,
    ownTasks: () => node.engine,
  });
  const node = createHubNode(definition, opts, {
    ...telemetry,
    client,
    access,
    limits,
    // The Tasks pages' lists are read again when one of the hub's tasks changes (declared below).
    onTaskEvent: () => live.tasks.changed(),
  });
  const hubCatalog = definition.catalog;
  const shared = { access, view, trace, invoker, node, hubCatalog, ask, streams };
  const { consoleSite, tickets, login, live, api } = hubConsole(opts, {
    ...shared,
    tokens,
    model,
    limits,
  });
  // The Fleet page hears a member come, go or change at once, not at its next reading.
  registry.subscribe(() => live.fleet.refresh?.());
  const mcp = hubMcp(opts, { ...shared, registry, selfUrl: () => selfUrl });
  const meshSend = createMeshSendRoutes({ presences: consoleMesh, hubName: self });
  const surfaces = { access, node, mcp, mesh, meshSend, login, api, consoleSite, joins };
  const route = hubRoute({ ...surfaces, ...(opts.tenants ? { tenants: opts.tenants } : {}) });
  const fetchAll = guardRequests(requests.wrap(route));

  return {
    trace,
    access,
    metrics,
    otlp,
    invoker,
    node,
    view,
    registry,
    model,
    catalog: definition.catalog,
    fetch: fetchAll,
    consoleUrl: (at = selfUrl ?? '') => consoleUrl(at, tickets.issue()),
    listen: (port, maxPort) =>
      listenHub(
        {
          host: opts.host || undefined, // an empty host is no host (the default), as before
          log,
          fetch: fetchAll,
          access,
          node,
          mesh,
          grpc: opts.grpc === false ? false : opts.grpcPort,
          model,
          fleet: registry,
          reachedAt: (url) => {
            selfUrl = url;
          },
          live,
          mcp,
          consoleMesh,
          streams,
          trace,
          otlp,
        },
        port,
        maxPort,
      ),
  };
}
