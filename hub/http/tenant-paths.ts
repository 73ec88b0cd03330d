/**
 * @module hub/http/tenant-paths — the hub's own routes in a tenant: with tenants configured,
 * `/{tenant}/api/…`, `/{tenant}/mcp`, `/{tenant}/.well-known/ai-catalog.json` and `/{tenant}/ard/…`
 * are the same routes acting in that tenant, as the A2A `/{tenant}/…` routes are (lib/node/tenants.ts). The
 * prefix is taken off before the access policy admits the request, so it admits the route it
 * serves; then the caller is placed in the tenant, or refused with TENANT_FORBIDDEN (403) when it
 * may not act there, or acts without naming a tenant while its token names some.
 */

import { isA2AError } from '../../lib/a2a/errors.ts';
import type { Principal } from '../../lib/auth/principal.ts';
import { inTenant } from '../../lib/node/tenants.ts';
import { AI_CATALOG_PATH, ARD_BASE_PATH } from '../fleet/ai-catalog.ts';
import { statusOf } from '../../lib/errors/registry.ts';
import { failed } from './api-replies.ts';
import { hubOwnerOf } from './routes.ts';
import { PROTECTED_RESOURCE_PATH } from './resource-metadata.ts';

/** `/{segment}/{rest}`: a first segment of at most 64 characters and the path after it. */
const FIRST_SEGMENT = /^\/([^/]{1,64})(\/.*)$/;
/** The MCP endpoint (hub/mcp/surface.ts). */
const MCP_PATH = '/mcp';
/** `/.well-known/oauth-protected-resource/{tenant}/mcp`: a tenant's MCP resource metadata. */
const TENANT_METADATA = /^\/\.well-known\/oauth-protected-resource\/([^/]{1,64})\/mcp$/;

/** Whether a hub route acts per tenant: the console API, MCP and discovery (the A2A routes are the node's). */
export function isTenantScoped(path: string): boolean {
  return (
    hubOwnerOf(path) === 'api' ||
    path === MCP_PATH ||
    path === AI_CATALOG_PATH ||
    path.startsWith(`${ARD_BASE_PATH}/`)
  );
}

/**
 * A request to `/{tenant}/<hub route>` for a tenant the hub serves: the same request without the
 * prefix, and the tenant. Undefined for any other path (an unknown tenant's path is not the hub's).
 */
export function tenantRequest(
  req: Request,
  tenants: readonly string[],
): { req: Request; tenant: string } | undefined {
  if (tenants.length === 0) return undefined;
  const url = new URL(req.url);
  // A tenant's `/mcp` has its own protected-resource metadata (RFC 9728: the resource's path after
  // the well-known one): answered as the hub's, for that tenant's resource.
  const meta = TENANT_METADATA.exec(url.pathname);
  if (meta && tenants.includes(meta[1]!)) {
    url.pathname = `${PROTECTED_RESOURCE_PATH}${MCP_PATH}`;
    return { req: new Request(url, req), tenant: meta[1]! };
  }
  const m = FIRST_SEGMENT.exec(url.pathname);
  if (!m || !tenants.includes(m[1]!) || !isTenantScoped(m[2]!)) return undefined;
  url.pathname = m[2]!;
  return { req: new Request(url, req), tenant: m[1]! };
}

/** The caller of a tenant-scoped route placed in `tenant` (none: untenanted), or the 403 refusal. */
export function tenantCaller(
  caller: Principal,
  tenant: string | undefined,
  tenants: readonly string[],
): Principal | Response {
  const scoped = inTenant(caller, tenant, tenants);
  return isA2AError(scoped)
    ? failed({ code: 'TENANT_FORBIDDEN', message: scoped.message }, statusOf('TENANT_FORBIDDEN'))
    : scoped;
}
