/**
 * @module lib/metrics/endpoint — `GET /metrics`: the process's registry in the Prometheus text format.
 * Read-only operational data, yet it tells traffic and error rates: a process bound to loopback
 * serves it to anyone who can reach it; bound beyond loopback it serves it only through an access
 * hook (the same authentication as the process's API), and refuses with METRICS_FORBIDDEN without one.
 */

import { isLoopbackHost } from '../auth/access.ts';
import { statusOf, messageOf } from '../errors/registry.ts';
import { PROMETHEUS_CONTENT_TYPE, type MetricsRegistry } from './registry.ts';

/**
 * Decides who may read `/metrics` beyond loopback: undefined lets the request through, a Response
 * (a 401 or 403 of the API's access policy) refuses it.
 */
export type MetricsAccess = (req: Request) => Response | undefined | Promise<Response | undefined>;

export function metricsHandler(
  registry: MetricsRegistry,
  o: { host: string; access?: MetricsAccess },
): (req: Request) => Promise<Response> {
  const open = isLoopbackHost(o.host);
  return async (req) => {
    if (o.access) {
      const refused = await o.access(req);
      if (refused) return refused;
    } else if (!open) {
      const code = 'METRICS_FORBIDDEN';
      return Response.json(
        { ok: false, error: { code, message: messageOf(code) } },
        { status: statusOf(code) },
      );
    }
    return new Response(registry.render(), {
      headers: { 'content-type': PROMETHEUS_CONTENT_TYPE, 'cache-control': 'no-store' },
    });
  };
}
