/**
 * @module lib/node/tenants — the tenants a node serves (`tenants`, `TENANTS`) and a request's
 * tenant applied to its caller: the 1.0 `tenant` member of JSON-RPC params and gRPC requests, or
 * the `/{tenant}/…` HTTP+JSON routes. A request of tenant `t` acts as its caller in `t`, so the
 * owner key (lib/auth/principal.ts) and with it tasks, lists, streams and push configs are kept
 * apart by tenant as well as by owner, and another tenant's task is TASK_NOT_FOUND. A caller whose
 * token names tenants may use those only (TENANT_FORBIDDEN otherwise). Without tenants configured
 * the member is ignored and nothing changes.
 */

import { a2aError, isA2AError, type A2AError } from '../a2a/errors.ts';
import type { OperationTable } from '../a2a/operation-table.ts';
import type { Operation, V1Method } from '../a2a/operations.ts';
import type { Principal } from '../auth/principal.ts';

/** A tenant's name: lower-case letters, digits and dashes (so a path segment needs no escaping). */
const TENANT_NAME = /^[a-z0-9][a-z0-9-]{0,62}$/;

/** The path of a `/{tenant}/…` HTTP+JSON route: the tenant and the route's own path. */
const TENANT_ROUTE = /^\/([^/]{1,64})(\/(?:message:[a-z]+|tasks(?:\/.*)?|extendedAgentCard))$/;

/** The caller acting in `tenant`, or why it may not. */
export function inTenant(
  caller: Principal,
  tenant: string | undefined,
  tenants: readonly string[],
): Principal | A2AError {
  if (tenants.length === 0) return caller;
  const named = 'tenants' in caller ? caller.tenants : undefined;
  if (tenant === undefined || tenant === '') {
    // A token that names tenants may not act outside them.
    if (named?.length)
      return a2aError('TENANT_FORBIDDEN', 'This token may act only in its tenants; name one');
    return caller;
  }
  if (!TENANT_NAME.test(tenant) || !tenants.includes(tenant) || (named && !named.includes(tenant)))
    return a2aError('TENANT_FORBIDDEN', 'This caller may not act in that tenant');
  return { ...caller, tenant };
}

/** `/{tenant}/tasks…` → the tenant and the path without it; undefined for any other path. */
export function tenantRoute(path: string): { tenant: string; path: string } | undefined {
  const m = TENANT_ROUTE.exec(path);
  return m ? { tenant: m[1]!, path: m[2]! } : undefined;
}

/** The 1.0 operations with each request's `tenant` applied to its caller (0.3 has no tenants). */
export function tenantOperations(
  table: OperationTable,
  tenants: readonly string[],
): OperationTable {
  if (tenants.length === 0) return table;
  const wrap = (ops: Readonly<Record<V1Method, Operation>>) =>
    Object.freeze(
      Object.fromEntries(
        Object.entries(ops).map(([name, op]) => [
          name,
          ((params, notification, caller, ctx) => {
            // A caller already placed in a tenant by its route keeps it.
            if (caller.tenant !== undefined) return op(params, notification, caller, ctx);
            const t = (params as { tenant?: unknown } | null)?.tenant;
            const scoped = inTenant(caller, typeof t === 'string' ? t : undefined, tenants);
            return isA2AError(scoped) ? scoped : op(params, notification, scoped, ctx);
          }) satisfies Operation,
        ]),
      ) as Record<V1Method, Operation>,
    );
  return Object.freeze({
    '1.0': wrap(table['1.0']),
    '1.1': wrap(table['1.1']),
    '0.3': table['0.3'],
  });
}
