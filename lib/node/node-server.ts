/**
 * @module lib/node/node-server — a node on its own port: `Bun.serve` in front of the measured
 * fetch (behind the request and browser guards), the gRPC binding beside it, and the graceful
 * stop that ends streams, gives open requests a grace and then closes the engine and the store.
 */

import { isLoopbackHost } from '../auth/access.ts';
import type { TaskEngine } from '../a2a/engine/engine.ts';
import type { GrpcServer } from '../a2a/grpc/server.ts';
import type { SseStreams } from '../sse/sse.ts';
import type { TaskStore } from '../a2a/store/task-store.ts';
import type { Log } from '../log.ts';
import { browserRefusal, ownOrigins } from '../net/browser-guard.ts';
import { headerLimitWarning } from '../net/header-limit.ts';
import { guardRequests, serveDefaults } from '../net/request-guard.ts';
import type { RunningNode } from './node-types.ts';

/** How long a stop waits for open requests and streams to finish before it cuts the connections. */
export const STOP_GRACE_MS = 2_000;

/** Stops taking connections, gives the open ones `STOP_GRACE_MS` to finish, then cuts the rest. */
export async function stopWithGrace(server: { stop(closeActive: boolean): Promise<void> }) {
  let grace: ReturnType<typeof setTimeout> | undefined;
  await Promise.race([
    server.stop(false),
    new Promise<void>((resolve) => (grace = setTimeout(resolve, STOP_GRACE_MS))),
  ]);
  clearTimeout(grace);
  await server.stop(true);
}

/** The gRPC port a node takes when none is given: its own port + 1000, or any when that is 0 or too high. */
export function defaultGrpcPort(port: number): number {
  return port > 0 && port + 1000 <= 65535 ? port + 1000 : 0;
}

export interface NodeServerOptions {
  name: string;
  host: string;
  port?: number;
  publicUrl?: string;
  log: Log;
  /** Who may act without proof, for the line the node logs when it listens. */
  anonymous: string;
  speaksA2A: boolean;
  fetch(request: Request): Promise<Response>;
  /** Fixes the port the card advertises. */
  advertise(port: number): void;
  /** Set when the node serves gRPC: starts it on the port given (`--grpc-port`) or the default. */
  grpc?: { port?: number; serve(port: number): Promise<GrpcServer> };
  grpcServer(): GrpcServer | undefined;
  streams: SseStreams;
  engine: TaskEngine;
  store: TaskStore;
  markShuttingDown(): void;
}

export async function startNodeServer(o: NodeServerOptions): Promise<RunningNode> {
  const { host, log } = o;
  // Bun.serve rather than app.listen: every request goes through the measured `fetch`. No
  // reusePort: a second process on a taken port must fail here (EADDRINUSE), not share it.
  // A page on another site gets what the hub gives it: the public reads (lib/net/browser-guard.ts).
  let origins = new Set<string>();
  const server = Bun.serve({
    hostname: host,
    port: o.port ?? 0,
    idleTimeout: 60,
    reusePort: false,
    ...serveDefaults,
    fetch: guardRequests((req) => browserRefusal(req, origins) ?? o.fetch(req)),
  });
  const port = server.port!;
  origins = ownOrigins(host, port, o.publicUrl ? [o.publicUrl] : []);
  o.advertise(port);
  const grpc = o.grpc;
  if (grpc)
    await grpc.serve(grpc.port ?? defaultGrpcPort(o.port ?? 0)).catch((e: Error) => {
      server.stop(true);
      throw e;
    });
  const url = `http://${host === '0.0.0.0' ? '127.0.0.1' : host}:${port}`;
  log('info', 'node listening', { node: o.name, url, anonymous: o.anonymous });
  const headers = headerLimitWarning();
  if (headers) log('warn', headers);
  if (!isLoopbackHost(host) && o.speaksA2A)
    log(
      'warn',
      `${o.name} is bound to ${host}: every A2A call needs a bearer token (bun run keys token add <name>) or a fleet signature`,
    );
  const grpcPort = o.grpcServer()?.port;
  return {
    url,
    port,
    ...(grpcPort !== undefined ? { grpcPort } : {}),
    /**
     * Graceful stop: no new connections, every open stream ends with a final `SHUTTING_DOWN`
     * frame, open requests get a short grace, then the task files are flushed.
     */
    async stop() {
      o.markShuttingDown();
      o.streams.endAll('SHUTTING_DOWN');
      await stopWithGrace(server);
      await o.grpcServer()?.stop(STOP_GRACE_MS);
      await o.engine.close();
      await o.store.close();
    },
  };
}
