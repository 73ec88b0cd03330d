/**
 * @module lib/node/node-settings — what a node's options resolve to before anything is built:
 * its access policy (refusing anonymous actors beyond loopback), its bounds, and the shared
 * pieces a process may pass in or the node makes for itself (SSE streams, webhook sender,
 * metrics, the request observer).
 */

import {
  defaultAnonymous,
  isLoopbackHost,
  tokenAuthenticator,
  type AccessPolicy,
} from '../auth/access.ts';
import { WebhookSender } from '../a2a/push/delivery.ts';
import { SseStreams } from '../sse/sse.ts';
import { silentLog, type Log } from '../log.ts';
import { createRequestObserver, templaterOf, type RequestObserver } from '../metrics/http.ts';
import { createNodeMetrics, type NodeMetrics } from './task-metrics.ts';
import { createMetricsRegistry, type MetricsRegistry } from '../metrics/registry.ts';
import { assertPortFree } from '../port-check.ts';
import { LIMITS, type Limits } from '../limits.ts';
import { nodeRouteTemplates } from './routes.ts';
import type { NodeDefinition, NodeOptions } from './node-types.ts';

const DEFAULT_MODES = ['text/plain', 'application/json'];

export interface NodeSettings {
  log: Log;
  host: string;
  policy: AccessPolicy;
  limits: Limits;
  streams: SseStreams;
  push: WebhookSender | undefined;
  metrics: MetricsRegistry;
  requests: RequestObserver;
  nodeMetrics: NodeMetrics;
  inputModes: string[];
  outputModes: string[];
}

/**
 * @throws Error when anonymous callers may act beyond loopback, and PortTakenError when the
 * node's port is taken (a second copy stops before it opens, and recovers, the same tasks).
 */
export function nodeSettings(def: NodeDefinition, opts: NodeOptions): NodeSettings {
  const log = opts.log ?? silentLog;
  const host = opts.host ?? '127.0.0.1';
  const policy: AccessPolicy = {
    authenticate:
      opts.access?.authenticate ??
      tokenAuthenticator(opts.access?.tokens, opts.access?.oidc, opts.log),
    anonymous: opts.access?.anonymous ?? defaultAnonymous(host),
  };
  // Letting anonymous callers act is for a conformance run on this machine only.
  if (policy.anonymous === 'all' && !isLoopbackHost(host))
    throw new Error(
      `node ${def.name}: anonymous callers may act only on a loopback address, not ${host}`,
    );
  assertPortFree(def.name, host, opts.port ?? 0);
  const limits: Limits = { ...LIMITS, ...opts.limits };
  const push =
    opts.push === false
      ? undefined
      : new WebhookSender({
          allowHosts: opts.pushAllowHosts ?? [],
          log,
          ...(opts.pushRetryDelaysMs ? { retryDelaysMs: opts.pushRetryDelaysMs } : {}),
          ...(opts.pushResolveName ? { resolveName: opts.pushResolveName } : {}),
        });
  const metrics = opts.metrics ?? createMetricsRegistry();
  const nodeMetrics = createNodeMetrics(metrics);
  if (push) nodeMetrics.watchWebhooks(push);
  return {
    log,
    host,
    policy,
    limits,
    streams:
      opts.streams ??
      new SseStreams({ max: limits.sseStreams, maxPerOwner: limits.sseStreamsPerPrincipal }),
    push,
    metrics,
    requests: opts.requests ?? createRequestObserver(metrics, templaterOf(nodeRouteTemplates())),
    nodeMetrics,
    inputModes: def.inputModes ?? DEFAULT_MODES,
    outputModes: def.outputModes ?? DEFAULT_MODES,
  };
}
