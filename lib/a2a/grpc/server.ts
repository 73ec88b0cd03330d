/**
 * @module lib/a2a/grpc/server — the gRPC binding's own listener: `lf.a2a.v1.A2AService` over
 * HTTP/2 cleartext (h2c, Bun's `node:http2`) on a port of its own, each stream served by
 * lib/a2a/grpc/call.ts over the v1.0 operations of the node's one table, as the other bindings. A stop refuses new
 * calls, ends open streams with `SHUTTING_DOWN` (through the shared stream registry), and
 * closes the connections after a short grace.
 */

import type { AgentExtension } from '../card/types.ts';
import http2 from 'node:http2';
import type { Log } from '../../log.ts';
import type { MetricsRegistry } from '../../metrics/registry.ts';
import type { OperationTable } from '../operation-table.ts';
import type { SseStreams } from '../../sse/sse.ts';
import { LIMITS, type Limits } from '../../limits.ts';
import { GRPC_MAX_MESSAGE_BYTES, serveCall, type CallDeps } from './call.ts';
import { GrpcConnections, type ConnectionBounds } from './connections.ts';
import { createGrpcMetrics } from './metrics.ts';

export interface GrpcServerOptions {
  /** The node's operation table, shared with the other bindings (this one runs its 1.0 half). */
  operations: OperationTable;
  log: Log;
  identify: CallDeps['identify'];
  metrics: MetricsRegistry;
  /** Largest request message, in bytes (default 4 MiB, gRPC's own default). */
  maxMessageBytes?: number;
  /** Bytes a stream's reader may fall behind (default LIMITS.sseQueueBytes). */
  maxQueuedBytes?: number;
  /** Where open streams register, so a shutdown ends them with a final status. */
  streams?: SseStreams;
  /** Concurrent calls one connection may have open (HTTP/2 SETTINGS_MAX_CONCURRENT_STREAMS). */
  maxConcurrentStreams?: number;
  /** Time a call has to send its whole request message (default `LIMITS.grpcMessageMs`). */
  messageMs?: number;
  /** Time an ended call's reader has to take the rest before the stream is cut (default `LIMITS.grpcFinalGraceMs`). */
  finalGraceMs?: number;
  /** The extensions the card declares (negotiated per call). */
  extensions?: readonly AgentExtension[];
}

/** Bounds of the port's connections (lib/a2a/grpc/connections.ts) and calls per connection. */
export interface GrpcBounds extends Partial<ConnectionBounds> {
  maxConcurrentStreams?: number;
}

export interface GrpcServer {
  port: number;
  /** Stops accepting, lets open calls finish for `graceMs`, then cuts what is left. */
  stop(graceMs?: number): Promise<void>;
}

/** The bounds of a node's gRPC port from its limits (the `grpc.*` settings). */
export const grpcBounds = (l: Limits): Required<GrpcBounds> => ({
  maxConnections: l.grpcConnections,
  maxPerAddress: l.grpcConnectionsPerAddress,
  handshakeMs: l.grpcHandshakeMs,
  idleMs: l.grpcIdleMs,
  maxConcurrentStreams: l.grpcStreamsPerConnection,
});

/** Builds the call handler; `listenGrpc` binds it. */
export function grpcCallDeps(opts: GrpcServerOptions): CallDeps {
  return {
    // gRPC's 1.0 clients skip fields they do not know: answers carry 1.1's `generation`.
    operations: opts.operations['1.1'],
    log: opts.log,
    metrics: createGrpcMetrics(opts.metrics),
    identify: opts.identify,
    maxMessageBytes: opts.maxMessageBytes ?? GRPC_MAX_MESSAGE_BYTES,
    maxQueuedBytes: opts.maxQueuedBytes ?? LIMITS.sseQueueBytes,
    messageMs: opts.messageMs ?? LIMITS.grpcMessageMs,
    finalGraceMs: opts.finalGraceMs ?? LIMITS.grpcFinalGraceMs,
    ...(opts.streams ? { streams: opts.streams } : {}),
    ...(opts.extensions ? { extensions: opts.extensions } : {}),
  };
}

/**
 * Listens on `host:port` (0 picks a free port).
 * @throws Error when the port cannot be bound (EADDRINUSE and the like).
 */
export async function listenGrpc(
  deps: CallDeps,
  host: string,
  port: number,
  bounds: GrpcBounds = {},
): Promise<GrpcServer> {
  const { maxConcurrentStreams, ...own } = { ...grpcBounds(LIMITS), ...bounds };
  const connections = new GrpcConnections(own, deps.metrics);
  const sessions = connections.sessions;
  const server = http2.createServer({
    settings: { maxConcurrentStreams },
    // A request's metadata beyond this is refused by HTTP/2 itself.
    maxHeaderListPairs: 128,
  });
  server.on('session', (session) => connections.admit(session));
  server.on('sessionError', () => {});
  server.on('stream', (stream, headers, _flags, rawHeaders: string[]) => {
    const session = stream.session;
    connections.callOpened(session);
    stream.on('close', () => connections.callClosed(session));
    serveCall(stream as http2.ServerHttp2Stream, headers, deps, rawHeaders);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  server.on('error', (e) => deps.log('error', 'grpc server error', { error: e.message }));
  const address = server.address();
  const bound = typeof address === 'object' && address ? address.port : port;
  return {
    port: bound,
    async stop(graceMs = 2_000) {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const s of sessions.keys()) s.close();
      let timer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([closed, new Promise<void>((r) => (timer = setTimeout(r, graceMs)))]);
      clearTimeout(timer);
      for (const s of sessions.keys()) s.destroy();
    },
  };
}
