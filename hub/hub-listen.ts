/**
 * @module hub/hub-listen — the hub on its port: one Bun.serve for HTTP and the mesh's WebSocket
 * (walking up to `maxPort` when the port is taken), the node's gRPC binding beside it, the
 * model's ping and the fleet files' sync started, and the graceful stop of every piece.
 */

import type { Server } from 'bun';
import type { SseStreams } from '../lib/sse/sse.ts';
import type { TraceStore } from '../lib/fleet/trace.ts';
import type { Log } from '../lib/log.ts';
import type { ModelHealth } from '../lib/model/health.ts';
import { defaultGrpcPort, STOP_GRACE_MS, stopWithGrace } from '../lib/node/node-server.ts';
import type { NodeApp } from '../lib/node/node-types.ts';
import type { OtlpExporter } from '../lib/fleet/otlp.ts';
import type { HubAccess } from './http/access.ts';
import { listenWithPortWalk } from './mesh/listen.ts';
import type { MeshServer, MeshSocketData } from './mesh/server.ts';
import type { Hub } from './hub-types.ts';

export interface HubListenParts {
  host?: string;
  log: Log;
  fetch: (req: Request, server: Server<MeshSocketData>) => Promise<Response>;
  access: HubAccess;
  node: NodeApp;
  mesh: MeshServer;
  /** False: no gRPC binding; a number: its port (default the hub's port + 1000). */
  grpc: false | number | undefined;
  model?: ModelHealth;
  /** The fleet registry: it stops following the fleet file when the hub stops. */
  fleet: { close(): void };
  /** The address the hub reaches itself at, once known (MCP sessions, console presences, URLs). */
  reachedAt(url: string): void;
  live: { fleet: { close(): void }; tasks: { close(): void } };
  mcp: { close(): Promise<void> };
  consoleMesh: { close(): Promise<void> };
  streams: SseStreams;
  trace: TraceStore;
  otlp?: OtlpExporter;
}

export function listenHub(
  p: HubListenParts,
  port: number,
  maxPort?: number,
): ReturnType<Hub['listen']> {
  const { node, log } = p;
  const server = listenWithPortWalk<MeshSocketData>({
    hostname: p.host ?? '127.0.0.1',
    port,
    ...(maxPort !== undefined ? { maxPort } : {}),
    fetch: p.fetch,
    websocket: p.mesh.websocket,
    idleTimeout: 60,
  });
  p.access.bind(server.port!);
  // The hub reaches itself on loopback when it binds every address.
  p.reachedAt(
    /^(0\.0\.0\.0|::|\[::\])$/.test(p.host ?? '')
      ? `http://127.0.0.1:${server.port}`
      : server.url.origin,
  );
  node.advertise(server.port!);
  // The hub's node serves gRPC beside the hub's own server; a taken gRPC port leaves it off. A
  // hub asked for any free port takes any free gRPC port too, as a node does: its port + 1000
  // would be a port nobody reserved.
  const grpcDefault = defaultGrpcPort(port === 0 ? 0 : server.port!);
  const grpc =
    p.grpc === false
      ? Promise.resolve(undefined)
      : node.serveGrpc(p.grpc ?? grpcDefault).catch((e: Error) => {
          log('error', 'hub grpc binding not started', { error: e.message });
          return undefined;
        });
  p.model?.start();
  return {
    url: server.url.origin,
    port: server.port!,
    grpc: grpc.then((g) => g?.port),
    /**
     * Graceful stop: `/readyz` turns 503, presences leave with `hub_shutdown` (close 1001),
     * every SSE stream gets its final `SHUTTING_DOWN` frame, open requests get a short grace,
     * then task files and the trace are flushed. The caller closes the databases.
     */
    async stop() {
      p.fleet.close();
      p.model?.stop();
      node.markShuttingDown();
      p.live.fleet.close();
      p.live.tasks.close();
      await p.mcp.close();
      await p.consoleMesh.close();
      p.mesh.close();
      p.streams.endAll('SHUTTING_DOWN');
      await stopWithGrace(server);
      await (await grpc)?.stop(STOP_GRACE_MS);
      await node.engine.close();
      await node.store.close();
      p.trace.flush();
      await p.otlp?.flush();
    },
  };
}
