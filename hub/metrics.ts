/**
 * @module hub/metrics — the hub's metrics beside its requests: the fleet calls of its trace (by
 * kind of record and outcome, and failures by error code), the trace export's queue and drops,
 * mesh presences and messages, and the request labels from the hub's route table (hub/http/routes.ts).
 */

import { isKnownCode } from '../lib/errors/registry.ts';
import type { TraceRecord } from '../lib/fleet/trace.ts';
import { templaterOf, type RouteTemplater } from '../lib/metrics/http.ts';
import { CONSOLE_FILE_PATTERNS, hubRouteTemplates } from './http/routes.ts';
import { OTHER, type MetricsRegistry } from '../lib/metrics/registry.ts';
import type { MeshStore } from '../lib/mesh/store.ts';
import type { OtlpExporter } from '../lib/fleet/otlp.ts';

/** Route templates of the hub: its own node's, the console API's, the mesh's and the console's files. */
export const hubRoutes: RouteTemplater = templaterOf(hubRouteTemplates(), CONSOLE_FILE_PATTERNS);

export interface HubMetricsDeps {
  self: string;
  trace: { subscribe(listener: (r: TraceRecord) => void): () => void };
  presences: () => number;
  /** The process's SSE streams: how many were ended for falling behind. */
  streams: { readonly endedTooSlow: number };
  otlp?: OtlpExporter;
}

export function registerHubMetrics(
  registry: MetricsRegistry,
  deps: HubMetricsDeps,
): { countMeshMessages(store: MeshStore): MeshStore } {
  const calls = registry.counter(
    'lume_fleet_calls_total',
    "Cross-node calls in the hub's trace, by side (made by the hub, or served: a signed call it received) and outcome.",
    {
      labels: ['side', 'outcome'],
      values: { side: ['made', 'served'], outcome: ['ok', 'failed', 'empty'] },
    },
  );
  const failures = registry.counter(
    'lume_fleet_call_errors_total',
    "Failed cross-node calls in the hub's trace, by error code (codes the error registry does not declare count as other).",
    {
      labels: ['code'],
    },
  );
  deps.trace.subscribe((r) => {
    calls.inc({ side: r.to === deps.self ? 'served' : 'made', outcome: r.outcome });
    if (r.errorCode !== null)
      failures.inc({ code: isKnownCode(r.errorCode) ? r.errorCode : OTHER });
  });

  registry.gauge('lume_mesh_presences', 'Mesh presences connected now.').collect(deps.presences);
  registry
    .counter(
      'lume_sse_streams_too_slow_total',
      'SSE streams the hub ended because their reader fell more than SSE_QUEUE_BYTES behind.',
    )
    .collect(() => deps.streams.endedTooSlow);
  const messages = registry.counter(
    'lume_mesh_messages_total',
    'Mesh messages stored (identical retries are not counted again).',
  );

  const otlp = deps.otlp;
  if (otlp) {
    registry
      .gauge('lume_trace_export_queue', 'Trace records waiting for the OTLP export.')
      .collect(() => otlp.stats().queued);
    registry
      .counter('lume_trace_exported_total', 'Trace records the OTLP collector accepted.')
      .collect(() => otlp.stats().exported);
    registry
      .counter(
        'lume_trace_dropped_total',
        'Trace records not exported: the export queue was full or the collector failed.',
      )
      .collect(() => otlp.stats().dropped);
    registry
      .counter(
        'lume_trace_export_failures_total',
        'OTLP export requests that failed (no answer, or not 2xx).',
      )
      .collect(() => otlp.stats().failedBatches);
  }

  return {
    countMeshMessages(store) {
      const append: MeshStore['append'] = (draft, admit) =>
        store.append(draft, admit).then((r) => {
          if (r.ok && !r.result.replayed) messages.inc();
          return r;
        });
      // The same store with `append` counted; everything else reaches the store itself (a class
      // with private fields included), so the store's shape is not this module's concern.
      return new Proxy(store, {
        get(target, key) {
          if (key === 'append') return append;
          const value = Reflect.get(target, key, target);
          return typeof value === 'function' ? value.bind(target) : value;
        },
      });
    },
  };
}
