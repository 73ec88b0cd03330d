/** @module hub/mesh/listen — starts Bun.serve on a port, walking up to `maxPort` while the port is taken. */

import type { Server, ServeOptions, WebSocketHandler } from 'bun';
import { serveDefaults } from '../../lib/net/request-guard.ts';
import { isPortTaken } from '../../lib/port-check.ts';

export interface ListenOptions<D> {
  hostname: string;
  port: number;
  /** Highest port to try; defaults to `port` (no walk). */
  maxPort?: number;
  fetch: (req: Request, server: Server<D>) => Response | Promise<Response> | undefined;
  websocket: WebSocketHandler<D>;
  /** Seconds an HTTP connection may stay silent (Bun's default is 10; SSE streams need more). */
  idleTimeout?: number;
}

/**
 * Binds the first free port in `port..maxPort`.
 * @throws Error when every port in the range is taken, or on any other bind error.
 */
export function listenWithPortWalk<D>(o: ListenOptions<D>): Server<D> {
  const last = Math.max(o.port, o.maxPort ?? o.port);
  for (let port = o.port; ; port++) {
    try {
      return Bun.serve<D>({
        hostname: o.hostname,
        port,
        reusePort: false,
        ...serveDefaults,
        fetch: o.fetch as ServeOptions['fetch'],
        websocket: o.websocket,
        idleTimeout: o.idleTimeout ?? 10,
      } as never);
    } catch (e) {
      if (!isPortTaken(e) || port >= last || o.port === 0) throw e;
    }
  }
}
