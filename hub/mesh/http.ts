/**
 * @module hub/mesh/http — the mesh's HTTP routes: `/healthz`, `/v1/meta`, `/v1/history`,
 * `/v1/presence`, `/v1/watch` (a project's roster and new messages as SSE, for the console) and
 * `POST /api/projects.*`. Errors are `{error: {code, message}}` with the status
 * the error registry gives the code, except where the mesh protocol answers in a 200 body.
 * This file routes; the reads are hub/mesh/http-reads.ts, the projects API
 * hub/mesh/http-projects.ts, the answers hub/mesh/http-answers.ts.
 */

import type { Server } from 'bun';
import type { Principal } from '../../lib/auth/principal.ts';
import { PROTOCOL_VERSION } from '../../lib/mesh/limits.ts';
import { json, readError } from './http-answers.ts';
import { projectsApi } from './http-projects.ts';
import { SseStreams } from '../../lib/sse/sse.ts';
import { history, presence, watch } from './http-reads.ts';
import { bearer, tokenAccepted } from './trust.ts';
import type { MeshHttpOptions } from './http-options.ts';

export type { MeshHttpOptions } from './http-options.ts';

export function createMeshHttp(opts: MeshHttpOptions) {
  const authorized = (req: Request) => tokenAccepted(opts.token, bearer(req));
  // Counted by client address: anonymous watchers are many callers, not one principal.
  const watchers = new SseStreams({
    max: opts.limits.maxWatchers,
    maxPerOwner: opts.limits.maxWatchersPerAddress,
  });

  /** Answers a mesh route, or undefined when the path is not the mesh's. */
  return function handle(
    req: Request,
    server: Server<unknown>,
    caller?: Principal,
  ): Response | Promise<Response> | undefined {
    const url = new URL(req.url);
    const path = url.pathname;
    const get = req.method === 'GET' || req.method === 'HEAD';
    if (path === '/healthz')
      return get ? json({ ok: true }) : readError('A2A_BAD_REQUEST', 'use GET');
    if (path === '/v1/meta')
      return get
        ? json({
            pid: process.pid,
            port: server.port,
            baseUrl: server.url.origin,
            startedAt: opts.startedAt,
            protocolVersion: PROTOCOL_VERSION,
          })
        : readError('A2A_BAD_REQUEST', 'use GET');
    if (path === '/v1/history' || path === '/v1/presence' || path === '/v1/watch') {
      if (!get) return readError('A2A_BAD_REQUEST', 'use GET');
      if (!authorized(req)) return readError('unauthorized', 'missing or wrong bearer token');
      return path === '/v1/history'
        ? history(opts, url, caller)
        : path === '/v1/presence'
          ? presence(opts, url)
          : watch(opts, req, url, caller, {
              streams: watchers,
              address: server.requestIP?.(req)?.address ?? 'unknown',
            });
    }
    const op = /^\/api\/projects\.(create|list|delete)$/.exec(path)?.[1];
    if (op) return projectsApi(opts, req, op);
    return undefined;
  };
}
