/**
 * @module hub/http/api — the hub's HTTP API for the console: `GET /api/fleet` (aggregated fleet),
 * `GET /api/fleet/stream` (the fleet and its recent history, pushed as SSE), `GET /api/trace`
 * (paged call trace), `GET /api/trace/stream` (new trace records as SSE), `GET /api/tasks/stream`
 * (the hub's task list as SSE whenever it changes; tasks are changed through the A2A binding),
 * `POST /api/local-invoke` (the browser's only way to a node: the target is a fleet node name and
 * the hub signs the call), `POST /api/hub` (one of the hub's own capabilities), `POST /api/ask`
 * (Ask Agent), `GET /api/negotiations[/<id>]` and `GET /api/model` (whether the hub has a model
 * configured and it answers; never its address or key). The hub's access policy (hub/http/access.ts) has
 * admitted every request and says who sent it; a POST that makes the hub act for its caller
 * (local-invoke, a capability that changes state) needs an authenticated one. The hub's tasks are not here: the console reads and changes them through the A2A HTTP+JSON binding, as
 * any client does. Every failure is `{ok: false, error: {code, message}}` with the status the
 * error registry gives its code; an unexpected error is a 500 with a generic message and a log line.
 * This file routes; the POSTs that act are hub/http/api-actions.ts, what is accepted
 * hub/http/api-input.ts, how it answers hub/http/api-replies.ts.
 */
import { EVENT_QUEUE_MAX_ITEMS } from '../../lib/event-queue.ts';
import type { SseOptions } from '../../lib/sse/sse.ts';
import type { Log } from '../../lib/log.ts';
import type { TraceStore } from '../../lib/fleet/trace.ts';
import { statusOf } from '../../lib/errors/registry.ts';
import { ANONYMOUS, ownerKey, type Principal } from '../../lib/auth/principal.ts';
import type { FleetSnapshot } from '../fleet/view.ts';
import { getNegotiation, listNegotiations } from '../workbench/negotiation-record.ts';
import { MESH_TOOL_DEFINITIONS } from '../../lib/agents/mesh-tools.ts';
import { type ActionDeps, askRoute, hubCapability, localInvoke } from './api-actions.ts';
import { traceQuery } from './api-input.ts';
import { failed, INTERNAL, json, refuse } from './api-replies.ts';
import { lastEventId, liveResponse } from '../../lib/sse/live.ts';
import { traceFrames } from './trace-live.ts';
import type { FleetFeed, TaskFeeds } from './live.ts';

export interface HubApiDeps extends ActionDeps {
  view: { snapshot(): Promise<FleetSnapshot> };
  trace: TraceStore;
  log: Log;
  /** Where negotiation records are kept (`DATA_DIR/hub/negotiations`). */
  negotiationsDir: string;
  /** Queue bound and shutdown registry of `/api/trace/stream` (a reader too far behind gets `event: close` STREAM_TOO_SLOW). */
  sse?: SseOptions;
  /** The hub's model, when one is configured: whether it answers its pings. */
  model?: { readonly up: boolean };
  /** What the live pages are pushed: the fleet, and the hub's task list. */
  live: { fleet: FleetFeed; tasks: TaskFeeds };
}

/** Which part of the API answers a request (undefined: not an `/api/` path it serves). */
function route(
  deps: HubApiDeps,
  req: Request,
  caller: Principal,
): Promise<Response> | Response | undefined {
  const { pathname, searchParams } = new URL(req.url);
  if (!pathname.startsWith('/api/')) return undefined;
  if (pathname === '/api/negotiations' || pathname.startsWith('/api/negotiations/')) {
    if (req.method !== 'GET')
      return refuse(
        'METHOD_NOT_ALLOWED',
        'GET only; start one with POST /api/hub {"skill":"negotiation.start"}',
      );
    const id = pathname.slice('/api/negotiations/'.length);
    // A caller reads back the negotiations it started, in its tenant; another's is not found.
    const owner = ownerKey(caller);
    if (pathname === '/api/negotiations')
      return listNegotiations(deps.negotiationsDir, owner).then((n) => json({ negotiations: n }));
    return getNegotiation(deps.negotiationsDir, id, owner).then((r) =>
      r.ok ? json(r.result) : failed(r.error, statusOf(r.error.code)),
    );
  }
  switch (pathname) {
    case '/api/fleet':
      return req.method === 'GET'
        ? deps.view.snapshot().then((s) => json(s))
        : refuse('METHOD_NOT_ALLOWED', 'GET only');
    case '/api/trace': {
      if (req.method !== 'GET') return refuse('METHOD_NOT_ALLOWED', 'GET only');
      const q = traceQuery(searchParams);
      if (typeof q === 'string') return refuse('BAD_QUERY', q);
      // In a tenant (`/{tenant}/api/trace`), only the calls made for it.
      return json(deps.trace.page(caller.tenant ? { ...q, tenants: [caller.tenant] } : q));
    }
    case '/api/trace/stream':
      // One record per call: the trace stream keeps the queues' general bound, not the live pages' 64.
      return req.method === 'GET'
        ? liveResponse(
            req,
            traceFrames(deps.trace, lastEventId(req), caller.tenant),
            { ...deps.sse, owner: ownerKey(caller) },
            EVENT_QUEUE_MAX_ITEMS,
          )
        : refuse('METHOD_NOT_ALLOWED', 'GET only');
    case '/api/fleet/stream':
      return req.method === 'GET'
        ? liveResponse(req, (push) => deps.live.fleet.listen(push, lastEventId(req)), {
            ...deps.sse,
            owner: ownerKey(caller),
          })
        : refuse('METHOD_NOT_ALLOWED', 'GET only');
    case '/api/tasks/stream':
      return req.method === 'GET'
        ? liveResponse(req, (push) => deps.live.tasks.listen(caller, push, lastEventId(req)), {
            ...deps.sse,
            owner: ownerKey(caller),
          })
        : refuse('METHOD_NOT_ALLOWED', 'GET only');
    case '/api/local-invoke':
      return req.method === 'POST'
        ? localInvoke(deps, req, caller)
        : refuse('METHOD_NOT_ALLOWED', 'POST only');
    case '/api/hub':
      return req.method === 'POST'
        ? hubCapability(deps, req, caller)
        : refuse('METHOD_NOT_ALLOWED', 'POST only');
    case '/api/ask':
      return req.method === 'POST'
        ? askRoute(deps, req, caller)
        : refuse('METHOD_NOT_ALLOWED', 'POST only');
    // What the console needs to offer a negotiation with models; nothing that locates or unlocks the model.
    case '/api/model':
      return req.method === 'GET'
        ? json({ configured: deps.model !== undefined, answering: deps.model?.up ?? false })
        : refuse('METHOD_NOT_ALLOWED', 'GET only');
    // The mesh as tools for a model: the OpenAI-style function definitions (lib/agents/mesh-tools.ts).
    case '/api/mesh/tools':
      return req.method === 'GET'
        ? json({ tools: MESH_TOOL_DEFINITIONS.map((f) => ({ type: 'function', function: f })) })
        : refuse('METHOD_NOT_ALLOWED', 'GET only');
    default:
      return undefined;
  }
}

export function createHubApi(deps: HubApiDeps): {
  fetch(req: Request, caller?: Principal): Promise<Response> | Response | undefined;
} {
  /** An unexpected error: logged here, answered 500 without its cause. */
  function internal(e: unknown, req: Request): Response {
    deps.log('error', 'hub api request failed', {
      path: new URL(req.url).pathname,
      error: (e as Error)?.name ?? 'unknown',
    });
    return failed(INTERNAL, 500);
  }

  return {
    fetch(req, caller = ANONYMOUS) {
      let answer: Promise<Response> | Response | undefined;
      try {
        answer = route(deps, req, caller);
      } catch (e) {
        return internal(e, req);
      }
      return answer instanceof Promise ? answer.catch((e) => internal(e, req)) : answer;
    },
  };
}
