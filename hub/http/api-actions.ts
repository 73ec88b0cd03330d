/**
 * @module hub/http/api-actions — the console API's POSTs that make the hub act: a call to a fleet
 * node the hub signs (`/api/local-invoke`), one of the hub's own capabilities (`/api/hub`) and an
 * Ask Agent question (`/api/ask`); each question's calls share one W3C trace.
 */

import { isPlainObject } from '../../lib/json/guards.ts';
import {
  isAuthenticated,
  ownerKey,
  PRINCIPAL_NAME,
  type Principal,
} from '../../lib/auth/principal.ts';
import { mayRun, scopeFor } from '../../lib/auth/scopes.ts';
import type { Catalog } from '../../lib/catalog/catalog.ts';
import type { Fleet } from '../../lib/config/fleet-file.ts';
import type { FleetInvoker } from '../../lib/fleet/invoke.ts';
import type { AskAnswer } from '../workbench/ask.ts';
import { upstreamStatus } from '../../lib/errors/registry.ts';
import { childContext, currentTrace, withTrace } from '../../lib/telemetry/trace-context.ts';
import { CAPABILITY, postedObject } from './api-input.ts';
import { failed, json, refuse, unauthenticated } from './api-replies.ts';

/** What the POSTs that act need of the hub (the API's dependencies include these). */
export interface ActionDeps {
  fleet: Fleet;
  invoker: FleetInvoker;
  /** The hub's own capabilities (sector.movement, customer.reach, entity.resolve, …). */
  hubCatalog: Catalog;
  /** `onBehalfOf`: in a tenant, the caller's owner key, so the tenant travels with each call. */
  ask: (question: string, opts?: { onBehalfOf?: string }) => Promise<AskAnswer>;
}

export async function localInvoke(
  deps: ActionDeps,
  req: Request,
  caller: Principal,
): Promise<Response> {
  // The hub signs this call as itself, which a node trusts with anything: only for a principal.
  if (!isAuthenticated(caller)) return unauthenticated('A call through the hub');
  const body = await postedObject(req);
  if (body instanceof Response) return body;
  const b = body as { target?: unknown; capability?: unknown; args?: unknown };
  if (typeof b.target !== 'string' || !PRINCIPAL_NAME.test(b.target))
    return refuse('BAD_REQUEST', 'target must be a fleet node name (never a URL)');
  // Read each time: nodes join the running hub.
  if (!deps.fleet.nodes.some((n) => n.name === b.target))
    return refuse('UNKNOWN_TARGET', `no fleet node named ${b.target}`);
  if (typeof b.capability !== 'string' || !CAPABILITY.test(b.capability))
    return refuse('BAD_REQUEST', 'capability must be a capability id such as sector.movement');
  if (b.args !== undefined && !isPlainObject(b.args))
    return refuse('BAD_REQUEST', 'args must be an object');
  // The node sees the hub's signature, not the caller's scopes: an issuer's user's call is taken
  // for one that changes state (the hub does not know the node's capability), exec.* for one that runs work.
  if (!mayRun(caller, { id: b.capability, readOnly: false }))
    return failed(
      {
        code: 'INSUFFICIENT_SCOPE',
        message: `${b.capability} through the hub needs the scope ${scopeFor({ id: b.capability, readOnly: false })}`,
      },
      403,
    );
  const r = await deps.invoker.invoke(
    b.target,
    b.capability,
    (b.args ?? {}) as Record<string, unknown>,
    undefined,
    { onBehalfOf: ownerKey(caller) },
  );
  // The node's summary line goes on to the console, as `/api/hub` passes the hub's own. A node's
  // failure: the caller's mistake keeps its 4xx, anything else is an upstream failure.
  if (r.ok)
    return json({ ok: true, result: r.result, ...(r.summary ? { summary: r.summary } : {}) });
  return failed(r.error, upstreamStatus(r.error.code));
}

/**
 * A question's calls share one W3C trace: a request that came without a `traceparent` starts
 * one here (its root span is the request, which is not a trace record), so the console groups
 * the calls of one skill or one ask by trace id.
 */
const asOneTrace = <T>(work: () => Promise<T>): Promise<T> =>
  withTrace(currentTrace() ?? childContext(), work);

/** Runs one of the hub's own capabilities (each calls nodes through fleet.invoke). */
export async function hubCapability(
  deps: ActionDeps,
  req: Request,
  caller: Principal,
): Promise<Response> {
  const body = await postedObject(req);
  if (body instanceof Response) return body;
  if (typeof body.skill !== 'string' || !CAPABILITY.test(body.skill))
    return refuse('BAD_REQUEST', "skill must be one of the hub's capability ids");
  if (body.args !== undefined && !isPlainObject(body.args))
    return refuse('BAD_REQUEST', 'args must be an object');
  // As over A2A: a capability that changes state or runs work needs a principal.
  if (deps.hubCatalog.find(body.skill)?.readOnly === false && !isAuthenticated(caller))
    return unauthenticated(body.skill);
  const r = await asOneTrace(() =>
    deps.hubCatalog.invoke(body.skill as string, body.args ?? {}, undefined, { caller }),
  );
  if (r.ok)
    return json({ ok: true, result: r.result, ...(r.summary ? { summary: r.summary } : {}) });
  // The hub's capabilities fail on the caller's mistake (4xx) or because a node they asked failed.
  return failed(r.error, upstreamStatus(r.error.code));
}

export async function askRoute(
  deps: ActionDeps,
  req: Request,
  caller: Principal,
): Promise<Response> {
  const body = await postedObject(req);
  if (body instanceof Response) return body;
  if (typeof body.question !== 'string' || !body.question.trim() || body.question.length > 2000)
    return refuse('BAD_REQUEST', 'question must be a non-empty string of at most 2000 characters');
  // Asked in a tenant, the calls Ask makes are made for the caller in it (untenanted: as the hub).
  const opts = caller.tenant !== undefined ? { onBehalfOf: ownerKey(caller) } : undefined;
  return json(await asOneTrace(() => deps.ask(body.question as string, opts)));
}
