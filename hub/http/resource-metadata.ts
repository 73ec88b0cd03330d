/**
 * @module hub/http/resource-metadata — the hub's `/mcp` as an OAuth 2 protected resource (the MCP
 * authorization spec; RFC 9728): `/.well-known/oauth-protected-resource` (and its `/mcp` form)
 * names the resource and the trusted issuers as its authorization servers, and a 401 of `/mcp`
 * says where that document is (`WWW-Authenticate: Bearer resource_metadata=…`), so a harness that
 * speaks MCP's OAuth finds the issuer, obtains a token bound to the resource (RFC 8707) and signs
 * in by itself. The resource is the hub's own origin (its Host is checked first) and `/mcp`.
 */

import { ALL_SCOPES } from '../../lib/auth/scopes.ts';

export const PROTECTED_RESOURCE_PATH = '/.well-known/oauth-protected-resource';
const MCP_PATH = '/mcp';

/** `/{tenant}` in a tenant, else nothing: where a tenant's `/mcp` is. */
const prefix = (tenant?: string) => (tenant === undefined ? '' : `/${tenant}`);

/**
 * The `/mcp` resource of the origin a request reached (its Host is one of the hub's names); in a
 * tenant, `/{tenant}/mcp`, a resource of its own (RFC 8707).
 */
export function mcpResource(req: Request, tenant?: string): string {
  return `${new URL(req.url).origin}${prefix(tenant)}${MCP_PATH}`;
}

/** RFC 9728 §3.1: the document's URL is the well-known path with the resource's path appended. */
const metadataUrl = (req: Request, tenant?: string) =>
  `${new URL(req.url).origin}${PROTECTED_RESOURCE_PATH}${prefix(tenant)}${MCP_PATH}`;

/** Whether a path is the metadata document (plain, or with the resource's path appended). */
export const isResourceMetadataPath = (path: string) =>
  path === PROTECTED_RESOURCE_PATH || path === `${PROTECTED_RESOURCE_PATH}${MCP_PATH}`;

/** The metadata document; 404 without trusted issuers (there is no authorization server to name). */
export function resourceMetadata(
  req: Request,
  issuers: readonly string[],
  tenant?: string,
): Response {
  if (issuers.length === 0)
    return Response.json(
      {
        ok: false,
        error: { code: 'NOT_FOUND', message: 'this hub trusts no issuer (auth.issuers)' },
      },
      { status: 404 },
    );
  return Response.json(
    {
      resource: mcpResource(req, tenant),
      authorization_servers: issuers,
      scopes_supported: ALL_SCOPES,
      bearer_methods_supported: ['header'],
      resource_name: 'lume-a2a hub MCP',
    },
    {
      headers: { 'cache-control': 'public, max-age=300', 'access-control-allow-origin': '*' },
    },
  );
}

/** A 401 of `/mcp` with the challenge naming the metadata document (when issuers are trusted). */
export function withResourceMetadata(
  res: Response,
  req: Request,
  issuers: readonly string[],
  tenant?: string,
): Response {
  if (res.status !== 401 || issuers.length === 0) return res;
  const headers = new Headers(res.headers);
  headers.set(
    'www-authenticate',
    `Bearer realm="lume-a2a", resource_metadata="${metadataUrl(req, tenant)}", scope="${ALL_SCOPES[0]}"`,
  );
  return new Response(res.body, { status: res.status, statusText: res.statusText, headers });
}
