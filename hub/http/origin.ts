/**
 * @module hub/origin — keeps pages on other sites from making the hub act through its A2A node
 * (`/a2a`, the HTTP+JSON routes, `/peer/*`): a request of any method but GET, HEAD or OPTIONS
 * that carries an `Origin` other than the hub's own is refused. Browsers send `Origin` with every
 * such request, so a cross-site form or `fetch` cannot send a message or cancel a task, whatever
 * its content type; A2A clients outside a browser send none and are not affected.
 */

const READS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** The 403 for a cross-site request that would change something, or undefined to let it through. */
export function refuseCrossSite(req: Request): Response | undefined {
  if (READS.has(req.method)) return undefined;
  const origin = req.headers.get('origin');
  if (origin === null || origin === new URL(req.url).origin) return undefined;
  return Response.json(
    { error: { code: 'FORBIDDEN_ORIGIN', message: 'requests from another site may only read' } },
    { status: 403, headers: { 'cache-control': 'no-store' } },
  );
}
