/**
 * @module hub/hub-mcp — MCP at `/mcp` and the fleet's AI Catalog as the hub wires them: the same
 * capabilities, mesh and work the console reaches, for model harnesses (hub/mcp/surface.ts).
 */

import type { SseStreams } from '../lib/sse/sse.ts';
import type { Catalog } from '../lib/catalog/catalog.ts';
import type { FleetInvoker } from '../lib/fleet/invoke.ts';
import type { FleetRegistry } from '../lib/fleet/registry.ts';
import type { TraceStore } from '../lib/fleet/trace.ts';
import type { NodeApp } from '../lib/node/node-types.ts';
import type { FleetSnapshot } from './fleet/view.ts';
import type { HubAccess } from './http/access.ts';
import type { HubOptions } from './hub-types.ts';
import { createHubMcp } from './mcp/surface.ts';
import type { AskAnswer } from './workbench/ask.ts';
import { capabilitiesFromNodes, loadCatalog } from './workbench/ask-catalog.ts';

export interface HubMcpParts {
  access: HubAccess;
  view: { snapshot(): Promise<FleetSnapshot> };
  trace: TraceStore;
  invoker: FleetInvoker;
  node: NodeApp;
  hubCatalog: Catalog;
  ask: (question: string) => Promise<AskAnswer>;
  streams: SseStreams;
  /** Where the hub reaches itself, once it listens. */
  selfUrl: () => string | undefined;
  registry: FleetRegistry;
}

export function hubMcp(opts: HubOptions, p: HubMcpParts) {
  const { access, view, invoker, node } = p;
  const snapshotNodes = async () => (await view.snapshot()).nodes;
  return createHubMcp({
    fleet: opts.fleet,
    invoker,
    trace: p.trace,
    log: opts.log,
    hubCatalog: p.hubCatalog,
    fleetCatalog: () => loadCatalog(invoker, capabilitiesFromNodes(snapshotNodes, opts.fetch)),
    ask: p.ask,
    engine: () => node.engine,
    ownCard: () => node.card(),
    // The fleet view checks each member's card against the key the hub pinned for it.
    cardChecks: async () => new Map((await snapshotNodes()).map((n) => [n.name, n.cardSignature])),
    selfUrl: p.selfUrl,
    origins: () => access.origins(),
    anonymous: access.anonymous,
    meshProject: opts.meshProject ?? 'main',
    streams: p.streams,
    onFleetChange: (fn) => p.registry.subscribe(fn),
    ...(opts.fetch ? { fetch: opts.fetch } : {}),
  });
}
