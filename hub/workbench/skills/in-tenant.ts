/**
 * @module hub/workbench/skills/in-tenant — the fleet invoker a hub capability calls nodes with:
 * run in a tenant, every call it makes is made for the caller in that tenant (the owner key
 * travels as `onBehalfOf`, as delegate and Ask send it); untenanted, the calls are the hub's own.
 */

import { ownerKey } from '../../../lib/auth/principal.ts';
import type { CallContext } from '../../../lib/catalog/catalog.ts';
import type { FleetInvoker } from '../../../lib/fleet/invoke.ts';

/** `invoker` as it is outside a tenant; in one, each `invoke` carries the caller's owner key. */
export function callsFor(invoker: FleetInvoker, context?: CallContext): FleetInvoker {
  if (context?.caller.tenant === undefined) return invoker;
  const onBehalfOf = ownerKey(context.caller);
  return {
    invoke: (target, capability, args, timeoutMs, opts) =>
      invoker.invoke(target, capability, args, timeoutMs, { onBehalfOf, ...opts }),
    message: (target, skill, args, opts) => invoker.message(target, skill, args, opts),
  };
}
