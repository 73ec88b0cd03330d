/**
 * @module hub/hub-telemetry — what the hub process observes itself with: the trace of every
 * cross-node call (bounded by rows and age), one registry of the SSE streams, the metrics with
 * the per-route request observer, and the OTLP export of the trace when configured.
 */

import { SseStreams } from '../lib/sse/sse.ts';
import { createTraceStore } from '../lib/fleet/trace.ts';
import type { Limits } from '../lib/limits.ts';
import { createRequestObserver } from '../lib/metrics/http.ts';
import { createMetricsRegistry } from '../lib/metrics/registry.ts';
import { createOtlpExporter } from '../lib/fleet/otlp.ts';
import { recordSpan } from '../lib/fleet/record-span.ts';
import type { HubOptions } from './hub-types.ts';
import { hubRoutes } from './metrics.ts';

export function hubTelemetry(opts: HubOptions, limits: Limits) {
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
    createOtlpExporter({
      ...opts.otlp,
      self: opts.fleet.hub.name,
      log: opts.log,
      ...(opts.fetch ? { fetch: opts.fetch } : {}),
    });
  const self = opts.fleet.hub.name;
  if (otlp) trace.subscribe((r, detail) => otlp.add(recordSpan(r, self, detail)));
  return { trace, streams, metrics, requests, otlp };
}
