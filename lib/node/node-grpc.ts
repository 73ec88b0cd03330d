/**
 * @module lib/node/node-grpc — a node's gRPC binding (lib/a2a/grpc/) on its own port: callers
 * identified by the node's policy from their metadata, a taken port told like a taken HTTP port,
 * and the card told the binding's port once it listens.
 */

import { declaredExtensions } from './node-extensions.ts';
import type { NodeDefinition } from './node-types.ts';
import type { OperationTable } from '../a2a/operation-table.ts';
import { grpcBounds, grpcCallDeps, listenGrpc, type GrpcServer } from '../a2a/grpc/server.ts';
import { isPortTaken, PortTakenError } from '../port-check.ts';
import type { NodeAuth } from './node-auth.ts';
import type { NodeCard } from './node-card.ts';
import type { NodeSettings } from './node-settings.ts';

export interface NodeGrpc {
  /** Serves the binding on `port` (0: any) and lists it on the card. */
  serve(port: number): Promise<GrpcServer>;
  /** The running server, once `serve` succeeded. */
  server(): GrpcServer | undefined;
}

export function createNodeGrpc(
  def: Pick<NodeDefinition, 'name' | 'extensions'>,
  settings: NodeSettings,
  operations: OperationTable,
  auth: NodeAuth,
  card: NodeCard,
): NodeGrpc {
  const { log, host, metrics, limits, streams } = settings;
  const name = def.name;
  const deps = grpcCallDeps({
    extensions: declaredExtensions(def.extensions),
    operations,
    log,
    identify: auth.identifyGrpc,
    metrics,
    maxQueuedBytes: limits.sseQueueBytes,
    messageMs: limits.grpcMessageMs,
    finalGraceMs: limits.grpcFinalGraceMs,
    streams,
  });
  let running: GrpcServer | undefined;
  return {
    async serve(port) {
      running = await listenGrpc(deps, host, port, grpcBounds(limits)).catch((e: unknown) => {
        // A taken gRPC port is told like a taken HTTP port (bun run node exits with one line).
        throw isPortTaken(e) ? new PortTakenError(`${name} (gRPC)`, host, port) : e;
      });
      card.listGrpc(running.port);
      log('info', 'grpc listening', { node: name, port: running.port });
      return running;
    },
    server: () => running,
  };
}
