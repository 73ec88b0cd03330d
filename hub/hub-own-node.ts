/**
 * @module hub/hub-own-node — the hub's own A2A node (`createNode` over the hub's catalog): it
 * publishes the hub's public key, serves and relays signed calls into the hub's trace, admits
 * requests by the hub's access policy, shares the process's metrics and streams, and is ready
 * when the trace and the mesh store are.
 */

import type { SpanSink } from '../lib/telemetry/a2a-span.ts';
import type { SseStreams } from '../lib/sse/sse.ts';
import type { TraceStore } from '../lib/fleet/trace.ts';
import type { Limits } from '../lib/limits.ts';
import type { RequestObserver } from '../lib/metrics/http.ts';
import type { MetricsRegistry } from '../lib/metrics/registry.ts';
import { createNode } from '../lib/node/create-node.ts';
import type { NodeApp, NodeDefinition } from '../lib/node/node-types.ts';
import type { PeerClient } from '../lib/peer/client.ts';
import { publicIdentity } from '../lib/peer/keys.ts';
import type { HubAccess } from './http/access.ts';
import { ringOf, type HubOptions } from './hub-types.ts';

export interface HubNodeParts {
  client: PeerClient;
  trace: TraceStore;
  access: HubAccess;
  metrics: MetricsRegistry;
  requests: RequestObserver;
  limits: Limits;
  streams: SseStreams;
  onTaskEvent: () => void;
  /** The hub's OTLP exporter, when on: the hub node's A2A server spans go there too. */
  otlp?: SpanSink | undefined;
}

export function createHubNode(
  definition: NodeDefinition,
  opts: HubOptions,
  p: HubNodeParts,
): NodeApp {
  const { fleet, log } = opts;
  const self = fleet.hub.name;
  const { client, trace, access, metrics, requests, limits, streams } = p;
  // The hub's public key, published as every fleet node publishes its own: the operator of a node
  // run elsewhere trusts the hub by fetching it (`bun run fleet add <hub> --url <hub url>`).
  const ring = ringOf(opts.identity);
  const published = ring && publicIdentity(self, ring);
  return createNode(definition, {
    identity: published,
    dataDir: opts.dataDir,
    tasksDatabaseUrl: opts.tasksDatabaseUrl,
    log,
    pushAllowHosts: opts.pushAllowHosts ?? [],
    // Signed calls the hub serves and relays are recorded in its trace, like the calls it makes.
    peer: { verifier: opts.identity.verifier, client, fleet, spans: trace },
    access: { authenticate: access.authenticate, anonymous: access.anonymous },
    metrics,
    requests,
    metricsAccess: opts.metricsAccess,
    limits,
    streams,
    onTaskEvent: p.onTaskEvent,
    ...(p.otlp ? { spanExport: p.otlp } : {}),
    readyChecks: {
      trace: () => (opts.traceDb.query('SELECT 1').get(), true),
      mesh: () => opts.meshStore.ready(),
      ...opts.readyChecks,
    },
    host: opts.host || undefined, // an empty host is no host (the default), as before
    publicUrl: opts.publicUrl,
    cardKeys: opts.cardKeys,
    ...(opts.tenants?.length ? { tenants: opts.tenants } : {}),
  });
}
