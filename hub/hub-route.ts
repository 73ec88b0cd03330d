/**
 * @module hub/hub-route — the hub's one fetch handler: the access policy admits the request, then
 * the part of the hub its route table names answers (health, MCP, joins, mesh, the console's mesh
 * sends, sign-in, the API, the console's files), and the hub's node answers everything else. With
 * tenants, `/{tenant}/` before the API, MCP or discovery is taken off first and the caller placed
 * in that tenant (hub/http/tenant-paths.ts).
 */

import type { Server } from 'bun';
import type { NodeApp } from '../lib/node/node-types.ts';
import type { Principal } from '../lib/auth/principal.ts';
import type { createJoinService } from './fleet/join.ts';
import { joinsNotOffered } from './fleet/join.ts';
import type { HubAccess } from './http/access.ts';
import type { createHubApi } from './http/api.ts';
import type { createConsole } from './http/console.ts';
import type { createLogin } from './http/login.ts';
import type { createMeshSendRoutes } from './http/mesh-send.ts';
import {
  isResourceMetadataPath,
  resourceMetadata,
  withResourceMetadata,
} from './http/resource-metadata.ts';
import { hubOwnerOf } from './http/routes.ts';
import { isTenantScoped, tenantCaller, tenantRequest } from './http/tenant-paths.ts';
import type { createHubMcp } from './mcp/surface.ts';
import type { MeshServer, MeshSocketData } from './mesh/server.ts';

export interface HubParts {
  access: HubAccess;
  node: NodeApp;
  mcp: { fetch: ReturnType<typeof createHubMcp>['fetch'] };
  joins?: Pick<ReturnType<typeof createJoinService>, 'fetch'>;
  mesh: MeshServer;
  meshSend: ReturnType<typeof createMeshSendRoutes>;
  login: ReturnType<typeof createLogin>;
  api: ReturnType<typeof createHubApi>;
  consoleSite: ReturnType<typeof createConsole>;
  /** Tenants the hub serves (hub/http/tenant-paths.ts); none: no route acts in a tenant. */
  tenants?: readonly string[];
}

export function hubRoute(
  p: HubParts,
): (req: Request, server: Server<MeshSocketData>) => Promise<Response> {
  const { access, node, login } = p;
  /** The answer of the part that owns `path`, or undefined to let the node answer. */
  async function partAnswer(
    req: Request,
    server: Server<MeshSocketData>,
    path: string,
    caller: Principal,
    client: string,
    tenant?: string,
  ): Promise<Response | undefined> {
    switch (hubOwnerOf(path)) {
      case 'health': // the process's health is the node's (its checks include the trace and the mesh store)
        return undefined;
      case 'mcp':
        if (isResourceMetadataPath(path)) return resourceMetadata(req, access.issuers, tenant);
        {
          const res = await p.mcp.fetch(req, caller, client);
          return res && withResourceMetadata(res, req, access.issuers, tenant);
        }
      case 'join':
        return p.joins ? p.joins.fetch(req) : joinsNotOffered();
      case 'mesh':
        return p.mesh.fetch(req, server, caller);
      case 'console-mesh':
        return p.meshSend.fetch(req, caller);
      case 'login':
        return login.fetch(req, { client, caller });
      case 'api':
        return p.api.fetch(req, caller);
      case 'console': {
        const file = p.consoleSite.fetch(req);
        if (file !== undefined)
          return path === '/' || path === '/index.html'
            ? login.consolePage(req, caller, () => file)
            : file;
        return undefined;
      }
    }
    return undefined;
  }
  const tenants = p.tenants ?? [];
  return async (given, server) => {
    // `/{tenant}/api/…` and discovery in a tenant: admitted and answered as the route it names.
    const inTenant = tenantRequest(given, tenants);
    const req = inTenant?.req ?? given;
    const admitted = await access.admit(req, inTenant?.tenant);
    if (admitted instanceof Response)
      return new URL(req.url).pathname === '/mcp'
        ? withResourceMetadata(admitted, req, access.issuers, inTenant?.tenant)
        : admitted;
    let { caller } = admitted;
    if (admitted.crossSiteNavigation) return login.crossSiteNavigation(req);
    // The part the route table names answers; the hub's node answers everything else, including
    // the coded 404, and authenticates its A2A requests with the same policy (bearer token,
    // session, or a fleet node's signature).
    const path = new URL(req.url).pathname;
    if (tenants.length && isTenantScoped(path)) {
      const scoped = tenantCaller(caller, inTenant?.tenant, tenants);
      if (scoped instanceof Response) return scoped;
      caller = scoped;
    }
    // The client's address is the connection's (`given`: a request taken out of a tenant is a copy).
    const client = server?.requestIP?.(given)?.address ?? 'unknown';
    return (
      (await partAnswer(req, server, path, caller, client, inTenant?.tenant)) ??
      node.app.handle(req)
    );
  };
}
