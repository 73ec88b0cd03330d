/**
 * @module lib/a2a/grpc/metrics — what the gRPC binding counts, beside the HTTP metrics of the other
 * two bindings: calls by method and gRPC status, their latency to the first answer, coded
 * failures by reason, open server streams and connections, and what the port's bounds cut (a
 * connection refused or closed, a stalled stream). Every label is bounded (method names of the
 * service, status names, codes the error registry declares, the cut reasons).
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
  /** A connection admitted; the returned function closes it (once). */
  connectionOpened(): () => void;
  /** A bound cut a connection or a stream (`GRPC_CUT_REASONS`). */
  cut(reason: GrpcCutReason): void;
}

/**
 * What the port's bounds cut: a connection past the process's or its address's cap (closed at
 * once), one that sent no preface in time, one idle past its bound, a stream whose reader took
 * nothing within the final grace.
 */
const GRPC_CUT_REASONS = [
  'process_full',
  'address_full',
  'handshake_timeout',
  'idle',
  'stalled',
] as const;
export type GrpcCutReason = (typeof GRPC_CUT_REASONS)[number];

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
  const connections = registry.gauge('lume_grpc_connections', 'gRPC connections open.');
  const cuts = registry.counter(
    'lume_grpc_cut_total',
    "Connections and streams the gRPC port's bounds cut, by reason (docs/limits.md).",
    { labels: ['reason'], values: { reason: [...GRPC_CUT_REASONS] } },
  );
  return {
    connectionOpened() {
      connections.inc();
      let open = true;
      return () => {
        if (open) (open = false), connections.dec();
      };
    },
    cut: (reason) => cuts.inc({ reason }),
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
