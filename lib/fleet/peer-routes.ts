/**
 * @module lib/fleet/peer-routes — framework-free handlers of POST /peer/invoke and POST /peer/relay: standard
 * Request in, standard Response out, every failure a coded JSON answer.
 *
 * Mounting (e.g. in lib/node/create-node.ts):
 *   .post('/peer/invoke', ({ request }) => handlePeerInvoke(request, peerDeps))
 *   .post('/peer/relay', ({ request }) => handlePeerRelay(request, peerDeps))
 * with peerDeps = { self, verifier, dispatch, client, fleet, spans, log }. The handlers read the raw body
 * themselves (the signature covers those exact bytes), so the framework must not parse it first.
 */

import { isPlainObject } from '../json/guards.ts';
import type { Fleet } from '../config/fleet-file.ts';
import { tracedCall, type CallSink } from './traced-call.ts';
import { fleetMember } from '../config/fleet-file.ts';
import type { Log } from '../log.ts';
import { silentLog } from '../log.ts';
import type { PeerClient } from '../peer/client.ts';
import { parseJsonBody, readBodyBytes } from '../body.ts';
import { messageOf, statusOf } from '../errors/registry.ts';
import type { PeerErrorCode } from '../errors/peer.ts';
import type { Failure, Result } from '../errors/result.ts';
import { NODE_NAME, PEER_HEADER, parseSignature, SCOPE } from '../peer/signature.ts';
import type { PeerVerifier } from '../peer/verifier.ts';
import { isOwnerKey, tenantOfKey } from '../auth/principal.ts';

export interface PeerRouteDeps {
  /** This node's fleet name. */
  self: string;
  verifier: PeerVerifier;
  /**
   * Runs one capability of this node's catalog; the only way a peer request reaches code. `from`
   * is the verified calling node, `onBehalfOf` the owner key it says it acts for (signed with the body).
   */
  dispatch: (
    capability: string,
    args: Record<string, unknown>,
    from: { node: string; onBehalfOf?: string },
  ) => Promise<Result>;
  /** Needed by /peer/relay: signs and sends the forwarded call as this node. */
  client?: PeerClient;
  /** Needed by /peer/relay: route entries must be fleet members. */
  fleet?: Fleet;
  /**
   * Where this process records the signed calls it serves and forwards (the hub's trace), each in
   * a span of the caller's W3C trace. Without it the caller's trace context is passed on as is.
   */
  spans?: CallSink;
  log?: Log;
  /** Largest accepted request body (default 1 MiB). */
  maxBodyBytes?: number;
  /** Most node-to-node steps a relayed call may take, first caller to last node (default 4). */
  maxHops?: number;
  /** Timeout of each forwarded call in ms (default 10 000). */
  relayTimeout?: number;
}

/**
 * Whether `node` may name another principal (`onBehalfOf`): the fleet's hub (it acts for its
 * console users and token holders), or a node the ring or this node's fleet file marks a relay.
 * Anyone else naming one would take that principal's share of a limited resource (the executor's
 * slots) or its tasks.
 */
function mayActFor(deps: PeerRouteDeps, node: string): boolean {
  if (deps.fleet?.hub.name === node || deps.verifier.isRelay?.(node) === true) return true;
  return (deps.fleet && fleetMember(deps.fleet, node)?.relay) === true;
}

const notDelegate = (node: string) =>
  peerError(
    'PEER_NOT_DELEGATE',
    `${node} is neither the hub nor a relay: mark it "relay": true in the key ring or the fleet file`,
  );

const json = (status: number, body: unknown) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });

/** A coded failure answer; the status comes from the error registry unless given. */
/** A trace record's tenant: the one the owner key a call acts for is in (lib/auth/principal.ts). */
function inTenantOf(key: string | undefined): { tenant?: string } {
  const tenant = tenantOfKey(key);
  return tenant === undefined ? {} : { tenant };
}

export function peerError(
  code: PeerErrorCode | (string & {}),
  message?: string,
  status?: number,
  at?: string,
): Response {
  return failureAnswer(
    { code, message: message ?? messageOf(code), ...(at ? { at } : {}) },
    status,
  );
}

/**
 * A failure answered as it came (a capability's, or a node's further down): code, message, the
 * field it names and the node it came from; the status is the code's registry status unless given.
 */
function failureAnswer(failure: Failure & { at?: string }, status?: number): Response {
  const { code, message, field, at } = failure;
  return json(status ?? statusOf(code), {
    ok: false,
    error: { code, message, ...(field ? { field } : {}), ...(at ? { at } : {}) },
  });
}

/** The node a refused request's signature names, for the log line, when it is a node name. */
function statedNode(request: Request): string | undefined {
  const stated = parseSignature(request.headers.get(PEER_HEADER));
  return stated.ok && NODE_NAME.test(stated.result.node) ? stated.result.node : undefined;
}

/** Refuses bytes that are not UTF-8; one decoder serves every request (a whole-body decode keeps no state). */
const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

type Admitted = { caller: string; scope: string; body: Record<string, unknown> };

/** Shared front half of both routes: method, size, signature, JSON object body. */
async function admit(
  request: Request,
  route: string,
  deps: PeerRouteDeps,
  log: Log,
): Promise<Admitted | Response> {
  if (request.method !== 'POST') return peerError('PEER_METHOD');
  const max = deps.maxBodyBytes ?? 1024 * 1024;
  let bytes: Uint8Array | undefined;
  try {
    bytes = await readBodyBytes(request, max);
  } catch {
    return peerError('PEER_BAD_REQUEST', 'body could not be read');
  }
  if (!bytes) return peerError('PEER_TOO_LARGE', `body exceeds ${max} bytes`);
  // The route is the one this handler serves, not the URL path, so a mount prefix changes nothing.
  const v = await deps.verifier.verify(request.headers, bytes, route);
  if (!v.ok) {
    log('warn', 'peer refused', { code: v.error.code, node: statedNode(request), path: route });
    return peerError(v.error.code, v.error.message);
  }
  let text: string;
  try {
    text = strictUtf8.decode(bytes);
  } catch {
    return peerError('PEER_BAD_REQUEST', 'body is not UTF-8');
  }
  const parsed = parseJsonBody(text);
  if (!parsed.ok)
    return parsed.error.code === 'BAD_JSON'
      ? peerError('PEER_BAD_REQUEST', 'body is not JSON')
      : peerError(parsed.error.code, parsed.error.message);
  const body = parsed.result;
  if (!isPlainObject(body)) return peerError('PEER_BAD_REQUEST', 'body must be a JSON object');
  return { caller: v.result.node, scope: v.result.scope, body: body as Record<string, unknown> };
}

function argsOf(body: Record<string, unknown>): Record<string, unknown> | undefined {
  const a = body.args;
  if (a === undefined || a === null) return {};
  return typeof a === 'object' && !Array.isArray(a) ? (a as Record<string, unknown>) : undefined;
}

/** POST /peer/invoke: body `{capability, args}`, signed scope = capability. Never throws. */
export async function handlePeerInvoke(request: Request, deps: PeerRouteDeps): Promise<Response> {
  const log = deps.log ?? silentLog;
  try {
    const a = await admit(request, '/peer/invoke', deps, log);
    if (a instanceof Response) return a;
    const { capability } = a.body;
    if (typeof capability !== 'string' || !SCOPE.test(capability))
      return peerError('PEER_BAD_REQUEST', 'capability must be a name');
    if (a.scope !== capability) {
      log('warn', 'peer refused', { code: 'PEER_SCOPE', node: a.caller });
      return peerError('PEER_SCOPE', 'the signed scope is not the body capability');
    }
    const args = argsOf(a.body);
    if (!args) return peerError('PEER_BAD_REQUEST', 'args must be a JSON object');
    const { onBehalfOf } = a.body;
    if (onBehalfOf !== undefined && !isOwnerKey(onBehalfOf))
      return peerError('PEER_BAD_REQUEST', 'onBehalfOf must be an owner key such as user:alice');
    if (onBehalfOf !== undefined && !mayActFor(deps, a.caller)) {
      log('warn', 'peer refused', { code: 'PEER_NOT_DELEGATE', node: a.caller });
      return notDelegate(a.caller);
    }
    const started = performance.now();
    const run = () =>
      deps.dispatch(capability, args, {
        node: a.caller,
        ...(onBehalfOf !== undefined ? { onBehalfOf } : {}),
      });
    const r = deps.spans
      ? await tracedCall(
          deps.spans,
          { from: a.caller, to: deps.self, capability, ...inTenantOf(onBehalfOf) },
          run,
        )
      : await run();
    const ms = Math.round(performance.now() - started);
    log('info', 'peer invoke', {
      from: a.caller,
      capability,
      ok: r.ok,
      ms,
      code: r.ok ? undefined : r.error.code,
    });
    if (r.ok)
      return json(
        200,
        r.summary === undefined
          ? { ok: true, result: r.result }
          : { ok: true, result: r.result, summary: r.summary },
      );
    // A declared code answers its registry status; a capability's own code answers 422.
    return failureAnswer(r.error);
  } catch (e) {
    // A dispatch bug: log its kind only (a message could carry caller data), answer a coded 500.
    log('error', 'peer invoke crashed', { error: (e as Error)?.name ?? 'unknown' });
    return peerError('PEER_FAILED');
  }
}

/**
 * POST /peer/relay: body `{route, capability, args, trail, onBehalfOf?}`, signed scope = "relay:" +
 * capability. Forwards to route[0], re-signed as this node: a plain invoke when it is the last
 * entry, another relay otherwise. The full path (trail, caller, this node, route) may not repeat a
 * node or exceed `maxHops` steps. The original principal travels along, signed at every step: the
 * caller's `onBehalfOf`, or the calling node itself (`node:<caller>`), so the last node's task
 * ownership and per-principal limits apply to whoever started the call, not to the relay. Never throws.
 */
export async function handlePeerRelay(request: Request, deps: PeerRouteDeps): Promise<Response> {
  const log = deps.log ?? silentLog;
  try {
    if (!deps.client || !deps.fleet) return peerError('PEER_NO_ROUTE', 'this node does not relay');
    const a = await admit(request, '/peer/relay', deps, log);
    if (a instanceof Response) return a;
    const { capability, route, trail = [] } = a.body;
    if (typeof capability !== 'string' || !SCOPE.test(capability))
      return peerError('PEER_BAD_REQUEST', 'capability must be a name');
    if (a.scope !== `relay:${capability}`)
      return peerError('PEER_SCOPE', 'the signed scope is not relay:<capability>');
    const maxHops = deps.maxHops ?? 4;
    const names = (x: unknown) =>
      Array.isArray(x) &&
      x.length <= 16 &&
      x.every((n) => typeof n === 'string' && NODE_NAME.test(n));
    if (!names(route) || (route as string[]).length === 0)
      return peerError('PEER_BAD_REQUEST', 'route must list 1 to 16 node names');
    if (!names(trail)) return peerError('PEER_BAD_REQUEST', 'trail must list node names');
    const args = argsOf(a.body);
    if (!args) return peerError('PEER_BAD_REQUEST', 'args must be a JSON object');
    const { onBehalfOf } = a.body;
    if (onBehalfOf !== undefined && !isOwnerKey(onBehalfOf))
      return peerError('PEER_BAD_REQUEST', 'onBehalfOf must be an owner key such as user:alice');
    if (onBehalfOf !== undefined && !mayActFor(deps, a.caller)) {
      log('warn', 'peer refused', { code: 'PEER_NOT_DELEGATE', node: a.caller });
      return notDelegate(a.caller);
    }
    const original = onBehalfOf ?? `node:${a.caller}`;
    const hops = route as string[];
    const path = [...(trail as string[]), a.caller, deps.self, ...hops];
    if (new Set(path).size !== path.length)
      return peerError('PEER_LOOP', `route ${path.join(' > ')} visits a node twice`);
    if (path.length - 1 > maxHops)
      return peerError('PEER_HOPS', `route takes ${path.length - 1} steps, limit ${maxHops}`);
    const stranger = hops.find((n) => !fleetMember(deps.fleet!, n));
    if (stranger) return peerError('PEER_NO_ROUTE', `${stranger} is not a fleet node`);
    const [next, ...rest] = hops as [string, ...string[]];
    const opts = { timeout: deps.relayTimeout ?? 10_000, onBehalfOf: original };
    const client = deps.client;
    const forward = () =>
      rest.length
        ? client.peerRelay(next, rest, capability, args, {
            ...opts,
            trail: [...(trail as string[]), a.caller],
          })
        : client.peerFetch(next, capability, args, opts);
    // Recorded as two calls: the one received (caller to this node) and, under it, the one forwarded.
    const spans = deps.spans;
    const r = spans
      ? await tracedCall(
          spans,
          {
            from: a.caller,
            to: deps.self,
            capability: `relay:${capability}`,
            ...inTenantOf(original),
          },
          () =>
            tracedCall(
              spans,
              { from: deps.self, to: next, capability, ...inTenantOf(original) },
              forward,
            ),
        )
      : await forward();
    log('info', 'peer relay', {
      from: a.caller,
      to: next,
      capability,
      ok: r.ok,
      code: r.ok ? undefined : r.error.code,
    });
    if (r.ok)
      return json(
        200,
        r.summary === undefined
          ? { ok: true, result: r.result }
          : { ok: true, result: r.result, summary: r.summary },
      );
    // The relay is transparent: the status the next node answered, or without an answer the
    // registry's status of the client's code. A refusal further down is not the caller's
    // signature failing: never answer it as 401.
    const status =
      r.error.status === undefined
        ? statusOf(r.error.code, 502)
        : r.error.status === 401
          ? 502
          : r.error.status;
    return failureAnswer({ ...r.error, at: r.error.at ?? next }, status);
  } catch (e) {
    log('error', 'peer relay crashed', { error: (e as Error)?.name ?? 'unknown' });
    return peerError('PEER_FAILED');
  }
}
