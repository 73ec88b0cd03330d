/**
 * @module lib/a2a/grpc/metrics — what the gRPC binding counts, beside the HTTP metrics of the other
 * two bindings: calls by method and gRPC status, their latency to the first answer, coded
 * failures by reason, and open server streams. Every label is bounded (method names of the
 * service, status names, codes the error registry declares).
 */

import { isKnownCode } from '../../errors/registry.ts';
import { LATENCY_BUCKETS } from '../../metrics/http.ts';
import { OTHER, type MetricsRegistry } from '../../metrics/registry.ts';
import { A2A_METHODS } from '../proto/schema.ts';
import { GRPC_STATUS, type GrpcStatusName } from './status.ts';

export interface GrpcMetrics {
  /** A call answered: its status, the reason code of a failure, seconds to the first answer. */
  answered(
    method: string,
    status: GrpcStatusName,
    reason: string | undefined,
    seconds: number,
  ): void;
  /** A server stream opened; the returned function closes it (once). */
  streamOpened(method: string): () => void;
}

export function createGrpcMetrics(registry: MetricsRegistry): GrpcMetrics {
  const methods = [...A2A_METHODS.values()].map((m) => m.name);
  const calls = registry.counter(
    'lume_grpc_requests_total',
    'gRPC calls answered, by method and status.',
    {
      labels: ['method', 'status'],
      values: { method: methods, status: Object.keys(GRPC_STATUS) },
    },
  );
  const latency = registry.histogram(
    'lume_grpc_request_duration_seconds',
    'Time to the first answer of a gRPC call (a stream counts until it opens), by method.',
    LATENCY_BUCKETS,
    { labels: ['method'], values: { method: methods } },
  );
  const errors = registry.counter(
    'lume_grpc_errors_total',
    'Coded gRPC failures, by method and reason code (codes the error registry does not declare count as other).',
    { labels: ['method', 'code'], values: { method: methods } },
  );
  const streams = registry.gauge('lume_grpc_streams', 'gRPC server streams open, by method.', {
    labels: ['method'],
    values: { method: methods },
  });
  return {
    answered(method, status, reason, seconds) {
      calls.inc({ method, status });
      latency.observe({ method }, seconds);
      if (reason !== undefined) errors.inc({ method, code: isKnownCode(reason) ? reason : OTHER });
    },
    streamOpened(method) {
      streams.inc({ method });
      let open = true;
      return () => {
        if (open) (open = false), streams.dec({ method });
      };
    },
  };
}
