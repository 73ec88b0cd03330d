/**
 * @module lib/node/node-handlers — the handler behind each name of the node's route table
 * (lib/node/routes.ts): the card and its keys, the A2A bindings (JSON-RPC, HTTP+JSON) behind the caller check,
 * the signed peer routes (which reach the node's code only through its catalog), health,
 * readiness, capabilities, metrics, and MCP when the node serves it.
 */

import { declaredExtensions, negotiated } from './node-extensions.ts';
import { inTenant, tenantRoute } from './tenants.ts';
import { isA2AError, toRestError } from '../a2a/errors.ts';
import type { TaskStore } from '../a2a/store/task-store.ts';
import type { OperationTable } from '../a2a/operation-table.ts';
import { createA2AHandler } from '../a2a/jsonrpc/binding.ts';
import { createRestHandler } from '../a2a/rest/binding.ts';
import { livenessResponse, readinessResponse, type ReadyCheck } from '../health.ts';
import { metricsHandler } from '../metrics/endpoint.ts';
import { createMcpEndpoint, ownHostOrigin } from '../mcp/endpoint.ts';
import {
  handlePeerInvoke,
  handlePeerRelay,
  peerError,
  type PeerRouteDeps,
} from '../fleet/peer-routes.ts';
import { noRoute, type RouteHandler } from './mount-routes.ts';
import type { NodeAuth } from './node-auth.ts';
import type { NodeCard } from './node-card.ts';
import type { NodeSettings } from './node-settings.ts';
import type { NodeDefinition, NodeOptions } from './node-types.ts';
import type { NodeHandler } from './routes.ts';

/** `/{tenant}/.well-known/agent-card.json`: that tenant's card (lib/node/node-card.ts). */
const TENANT_CARD = /^\/([a-z0-9][a-z0-9-]{0,62})\/\.well-known\/agent-card\.json$/;

export interface NodeHandlersOptions {
  def: NodeDefinition;
  opts: NodeOptions;
  settings: NodeSettings;
  store: TaskStore;
  card: NodeCard;
  auth: NodeAuth;
  readyChecks: Record<string, ReadyCheck>;
  /** The node's one operation table, which the gRPC binding runs too. */
  operations: OperationTable;
}

/** The signed peer routes' dependencies, when the node has a peer channel. */
function peerDeps(def: NodeDefinition, opts: NodeOptions, settings: NodeSettings) {
  if (!opts.peer) return undefined;
  const deps: PeerRouteDeps = {
    self: def.name,
    verifier: opts.peer.verifier,
    dispatch: (capability, args, from) =>
      def.catalog.invoke(capability, args, undefined, {
        caller: { kind: 'node', name: from.node },
        ...(from.onBehalfOf ? { onBehalfOf: from.onBehalfOf } : {}),
      }),
    log: settings.log,
    client: opts.peer.client,
    fleet: opts.peer.fleet,
    spans: opts.peer.spans,
  };
  return deps;
}

/** What `/readyz` checks: the task store, the peer keys, the caller's own checks, the shutdown state. */
export function nodeReadyChecks(
  store: TaskStore,
  more: Record<string, ReadyCheck> | undefined,
  shuttingDown: () => boolean,
): Record<string, ReadyCheck> {
  return {
    tasks: () => store.isOpen || 'the task store is closed',
    // A node with no fleet is a standalone A2A server: its peer channel is off, which is no failure.
    keys: () => true,
    ...more,
    shutdown: () => !shuttingDown() || 'shutting down',
  };
}

export function nodeHandlers(
  o: NodeHandlersOptions,
): Record<NodeHandler, RouteHandler> & { tenantRest: (request: Request) => Promise<Response> } {
  const { def, opts, settings, store, card, auth, operations } = o;
  const { log, limits, streams } = settings;
  const bodyLimit = opts.maxBodyBytes ? { maxBodyBytes: opts.maxBodyBytes } : {};
  const sse = { maxQueuedBytes: limits.sseQueueBytes, streams };
  const handleA2A = createA2AHandler({ operations, log, sse, ...bodyLimit });
  const handleRest = createRestHandler({ operations, log, sse, ...bodyLimit });
  const extensions = declaredExtensions(def.extensions);
  const peer = peerDeps(def, opts, settings);
  const mcp =
    def.mcp &&
    createMcpEndpoint({
      definition: def.mcp,
      allowedOrigin: ownHostOrigin(settings.host, opts.publicUrl),
      anonymousAllowed: settings.policy.anonymous !== 'none',
      streams,
    });
  const peerRoute =
    (handler: typeof handlePeerInvoke) =>
    ({ request }: { request: Request }) =>
      peer ? handler(request, peer) : peerError('PEER_NOT_CONFIGURED');
  // `/metrics` asks the A2A routes' policy when the node can authenticate anyone, unless given
  // its own hook; without either, only a loopback bind serves it.
  const metricsAccess =
    opts.metricsAccess ??
    (opts.access?.tokens || opts.access?.authenticate ? auth.metricsAccess : undefined);
  const serveMetrics = metricsHandler(settings.metrics, {
    host: settings.host,
    access: metricsAccess,
  });
  return {
    card: ({ request }) => card.respond(request),
    jwks: () => card.publishedKeys(),
    jsonRpc: async ({ request }) => {
      const who = await auth.identify(request, true);
      if (who instanceof Response) return who;
      const run = () => handleA2A(request, who.caller, who.body);
      return negotiated(extensions, 'jsonrpc', request, run, who.body);
    },
    // Elysia reads `/message:send` as a parameter route (`/message…`), so the REST handler
    // decides what is its own and everything else gets the ordinary 404.
    rest: async ({ request }) => {
      const who = await auth.identify(request, false);
      if (who instanceof Response) return who;
      const run = () => handleRest(request, who.caller);
      return (await negotiated(extensions, 'rest', request, run)) ?? noRoute();
    },
    // `/{tenant}/…`: the same routes, acting in the tenant the path names (lib/node/tenants.ts).
    tenantRest: async (request: Request) => {
      const url = new URL(request.url);
      const cardIn = TENANT_CARD.exec(url.pathname)?.[1];
      if (cardIn !== undefined && (request.method === 'GET' || request.method === 'HEAD'))
        return card.respondIn(cardIn, request) ?? noRoute();
      const route = opts.tenants?.length ? tenantRoute(url.pathname) : undefined;
      if (!route) return noRoute();
      const who = await auth.identify(request, false);
      if (who instanceof Response) return who;
      const caller = inTenant(who.caller, route.tenant, opts.tenants!);
      if (isA2AError(caller)) {
        const { http, body } = toRestError(caller);
        return Response.json(body, { status: http });
      }
      url.pathname = route.path;
      const inner = new Request(url, request);
      const run = () => handleRest(inner, caller);
      return (await negotiated(extensions, 'rest', inner, run)) ?? noRoute();
    },
    peerInvoke: peerRoute(handlePeerInvoke),
    peerRelay: peerRoute(handlePeerRelay),
    peerIdentity: () => opts.identity,
    healthz: () => livenessResponse(def.name),
    readyz: () => readinessResponse(def.name, o.readyChecks),
    health: async () => ({
      ok: true,
      name: def.name,
      a2a: def.a2a !== false,
      tasks: await store.count(),
    }),
    capabilities: () => ({ node: def.name, capabilities: def.catalog.descriptors() }),
    metrics: ({ request }) => serveMetrics(request),
    mcp: async ({ request }) => {
      if (!mcp) return noRoute();
      const who = await auth.identify(request, false);
      return who instanceof Response ? who : mcp.fetch(request, who.caller);
    },
  };
}
