/**
 * @module hub/mesh/server — the mesh as a piece of the hub's one Bun.serve: `fetch` answers the
 * mesh's routes (undefined for any other path) and upgrades `/v1/connect`; `websocket` runs the protocol.
 */

import type { Server, WebSocketHandler } from 'bun';
import { isAuthenticated, ownerKey, type Principal } from '../../lib/auth/principal.ts';
import type { Log } from '../../lib/log.ts';
import { MESH_LIMITS, type MeshLimits } from '../../lib/mesh/limits.ts';
import type { MeshStore } from '../../lib/mesh/store.ts';
import type { MeshCluster } from './cluster.ts';
import { createMeshHttp } from './http.ts';
import { createRealtime } from './realtime.ts';
import { REAL_TIMERS, type Timers } from './timers.ts';
import type { MeshSocketData } from './roster.ts';

export type { MeshSocketData };

export interface MeshServerOptions {
  store: MeshStore;
  log: Log;
  now?: () => number;
  /** Optional join token: required in `hello` and as a bearer token on history, presence and project routes. */
  token?: string;
  /**
   * The hub's access policy instead of the join token: the hub checks the HTTP routes before they
   * get here, and a `hello` on a socket whose upgrade was not authenticated must carry a token
   * `verify` accepts whenever `required`. `verify` answers the principal the token proves (an
   * owner key), or `{}` for a token accepted without one (the hub's own presences).
   */
  access?: {
    required: boolean;
    verify(token: string): { principal?: string; own?: boolean } | undefined;
  };
  limits?: Partial<MeshLimits>;
  timers?: Timers;
  /** The other hubs on the same database (PostgreSQL); defaults to this hub alone. */
  cluster?: MeshCluster;
}

export interface MeshServer {
  /** `caller`: who the hub's access policy authenticated the request as. */
  fetch(
    req: Request,
    server: Server<MeshSocketData>,
    caller?: Principal,
  ): Response | Promise<Response> | undefined;
  websocket: WebSocketHandler<MeshSocketData>;
  /** Ends every presence (`hub_shutdown`) and stops the heartbeat; the caller stops Bun.serve and closes the store. */
  close(): void;
  /**
   * Names the principal one of the hub's own presences (joined with its secret) sends for; false
   * when no such presence holds that name here.
   */
  actFor(project: string, name: string, principal: string): boolean;
  realtime: ReturnType<typeof createRealtime>;
}

export function createMeshServer(opts: MeshServerOptions): MeshServer {
  const now = opts.now ?? Date.now;
  const limits: MeshLimits = { ...MESH_LIMITS, ...opts.limits };
  const access = opts.access;
  // A socket's principal is what its upgrade proved, else what its hello's token proves: its
  // messages carry it to their recipients (a node runs a mesh message's turn as its sender).
  const admit = access
    ? (ws: { data: MeshSocketData }, token: unknown) => {
        if (ws.data.authenticated === true) return true;
        const proof = typeof token === 'string' ? access.verify(token) : undefined;
        if (proof?.principal) ws.data.principal = proof.principal;
        if (proof?.own) ws.data.own = true;
        return !access.required || proof !== undefined;
      }
    : undefined;
  const realtime = createRealtime({
    store: opts.store,
    log: opts.log,
    now,
    token: opts.token,
    limits,
    timers: opts.timers ?? REAL_TIMERS,
    cluster: opts.cluster,
    admit,
  });
  const http = createMeshHttp({
    store: opts.store,
    realtime,
    token: opts.token,
    limits,
    startedAt: now(),
  });
  return {
    realtime,
    fetch(req, server, caller) {
      if (new URL(req.url).pathname === '/v1/connect') {
        // Bun ignores the response of an upgraded request; a 101 keeps "undefined" meaning "not a mesh path".
        const proven = !!caller && isAuthenticated(caller);
        const data: MeshSocketData = {
          kind: 'mesh',
          closing: false,
          authenticated: proven,
          ...(proven ? { principal: ownerKey(caller) } : {}),
        };
        if (server.upgrade(req, { data })) return new Response(null, { status: 101 });
        return Response.json(
          { error: { code: 'A2A_BAD_REQUEST', message: 'expected a WebSocket upgrade' } },
          { status: 426 },
        );
      }
      return http(req, server as Server<unknown>, caller);
    },
    websocket: {
      // Frames between the protocol cap and twice it still arrive, so the sender gets a coded
      // `payload_too_large` instead of a bare 1009 close; Bun closes anything larger.
      maxPayloadLength: limits.maxFrameBytes * 2,
      // The protocol's own heartbeat replaces Bun's idle timer and automatic pings.
      idleTimeout: 0,
      sendPings: false,
      // Bun's own cut, past our coded one (realtime closes a slow reader at maxSocketBufferedBytes first).
      backpressureLimit: limits.maxSocketBufferedBytes * 2,
      closeOnBackpressureLimit: true,
      open: (ws) => realtime.open(ws),
      message: (ws, raw) => realtime.message(ws, raw),
      pong: (ws) => realtime.pong(ws),
      drain: (ws) => realtime.drain(ws),
      close: (ws) => realtime.close(ws),
    },
    close: () => realtime.shutdown(),
    actFor(project, name, principal) {
      const p = realtime.roster.get(project, name);
      if (!p?.ws.data.own) return false;
      p.ws.data.principal = principal;
      return true;
    },
  };
}
