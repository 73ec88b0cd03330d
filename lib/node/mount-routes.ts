/**
 * @module lib/node/mount-routes — the node's Elysia app: every route of its table
 * (lib/node/routes.ts) mounted on its handler, and routing or framework errors answered as coded
 * JSON (handlers themselves return values).
 */

import { Elysia, type AnyElysia } from 'elysia';
import type { Log } from '../log.ts';
import { NODE_ROUTE_TABLE, type NodeHandler } from './routes.ts';

export type RouteHandler = (ctx: { request: Request }) => unknown;

/** The ordinary 404 of a node, also for the paths the HTTP+JSON binding does not claim. */
export const noRoute = (): Response =>
  new Response(JSON.stringify({ error: { code: 'NOT_FOUND', message: 'No such route' } }), {
    status: 404,
    headers: { 'content-type': 'application/json' },
  });

export interface MountOptions {
  handlers: Record<NodeHandler, RouteHandler>;
  /** False: the A2A routes (card, `/a2a`, HTTP+JSON) are not mounted. */
  speaksA2A: boolean;
  /** False: `GET /peer/identity` is not mounted. */
  publishesIdentity: boolean;
  /** False: `/mcp` is not mounted. */
  servesMcp: boolean;
  /** What answers a path no route claims (the `/{tenant}/…` routes), before the ordinary 404. */
  fallback?: (request: Request) => Promise<Response>;
  log: Log;
}

export function mountNodeRoutes(o: MountOptions): AnyElysia {
  // The error hook comes first so it covers every route registered after it.
  const app = new Elysia({ normalize: false }).onError(({ code, set, request }) => {
    if (code === 'NOT_FOUND') {
      if (!o.fallback) return noRoute();
      // Elysia keeps a not-found's 404 unless told the answer's own status.
      return o.fallback(request).then((res) => {
        set.status = res.status;
        return res;
      });
    }
    set.headers['content-type'] = 'application/json';
    o.log('error', 'request failed', { code: String(code) });
    set.status = 500;
    return { error: { code: 'INTERNAL', message: 'Internal error' } };
  });
  // Every route the node serves comes from its table, and only from there.
  for (const route of NODE_ROUTE_TABLE) {
    if (route.when === 'a2a' && !o.speaksA2A) continue;
    if (route.when === 'identity' && !o.publishesIdentity) continue;
    if (route.when === 'mcp' && !o.servesMcp) continue;
    const handler = o.handlers[route.handler];
    // The A2A bindings and MCP read their bodies themselves (a signed body is checked as it arrived).
    const hook = route.when === 'a2a' || route.when === 'mcp' ? { parse: 'none' as const } : {};
    if (route.method === 'GET') app.get(route.path, handler, hook);
    else if (route.method === 'POST') app.post(route.path, handler, hook);
    else app.all(route.path, handler, hook);
  }
  return app;
}
