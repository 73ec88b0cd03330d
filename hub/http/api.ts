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
 */

import { parseJsonBody, readBodyBytes } from '../../lib/body.ts';
import { EVENT_QUEUE_MAX_ITEMS } from '../../lib/event-queue.ts';
import type { SseOptions } from '../../lib/a2a/sse.ts';
import type { FleetInvoker } from '../../lib/fleet/invoke.ts';
import type { Fleet } from '../../lib/fleet/config.ts';
import type { Log } from '../../lib/log.ts';
import type { TraceOutcome, TraceQuery, TraceStore } from '../../lib/fleet/trace.ts';
import type { HubErrorCode } from '../../lib/errors/hub.ts';
import { statusOf, upstreamStatus } from '../../lib/errors/registry.ts';
import type { Failure } from '../../lib/errors/result.ts';
import type { Catalog } from '../../lib/catalog/catalog.ts';
import { ANONYMOUS, isAuthenticated, ownerKey, type Principal } from '../../lib/auth/principal.ts';
import type { AskAnswer } from '../workbench/ask.ts';
import type { FleetSnapshot } from '../fleet/view.ts';
import { getNegotiation, listNegotiations } from '../workbench/negotiation-record.ts';
import { MESH_TOOL_DEFINITIONS } from '../../lib/model/mesh-tools.ts';
import { childContext, currentTrace, withTrace } from '../../lib/telemetry/trace-context.ts';
import { liveResponse, type Feed, type FleetFrame, type TaskFeeds } from './live.ts';

interface HubApiDeps {
  fleet: Fleet;
  view: { snapshot(): Promise<FleetSnapshot> };
  trace: TraceStore;
  invoker: FleetInvoker;
  log: Log;
  /** The hub's own capabilities (sector.movement, customer.reach, entity.resolve, …). */
  hubCatalog: Catalog;
  ask: (question: string) => Promise<AskAnswer>;
  /** Where negotiation records are kept (`DATA_DIR/hub/negotiations`). */
  negotiationsDir: string;
  /** Queue bound and shutdown registry of `/api/trace/stream` (a reader too far behind gets `event: close` STREAM_TOO_SLOW). */
  sse?: SseOptions;
  /** The hub's model, when one is configured: whether it answers its pings. */
  model?: { readonly up: boolean };
  /** What the live pages are pushed: the fleet, and the hub's task list. */
  live: { fleet: Feed<FleetFrame>; tasks: TaskFeeds };
}

const json = (body: unknown, status = 200) =>
  Response.json(body, { status, headers: { 'cache-control': 'no-store' } });
/** A coded failure answered with `status`: its code, message and the field it names. */
const failed = ({ code, message, field }: Failure, status: number) =>
  json({ ok: false, error: field ? { code, message, field } : { code, message } }, status);
/** One of the API's own refusals, answered with its registry status. */
const refuse = (code: HubErrorCode, message: string) => failed({ code, message }, statusOf(code));
/** What a client sees of an unexpected error: no cause, no internal text. */
const INTERNAL: Failure = { code: 'INTERNAL', message: 'Internal error' };

const NAME = /^[a-z][a-z0-9-]{0,31}$/;
const CAPABILITY = /^[a-z][a-z0-9-]*(\.[a-z][a-z0-9-]*)+$/;
const OUTCOMES: ReadonlySet<string> = new Set(['ok', 'failed', 'empty']);
const MAX_INVOKE_BODY = 64 * 1024;

function traceQuery(params: URLSearchParams): TraceQuery | string {
  const q: TraceQuery = {};
  for (const [key, value] of params) {
    if (key === 'limit' || key === 'before') {
      const n = Number(value);
      if (!/^\d+$/.test(value) || n < 1 || n > Number.MAX_SAFE_INTEGER)
        return `${key} must be a positive integer`;
      q[key] = n;
    } else if (key === 'from' || key === 'to') {
      if (!NAME.test(value)) return `${key} must be a node name`;
      q[key] = value;
    } else if (key === 'capability') {
      if (!CAPABILITY.test(value)) return 'capability must be a capability id';
      q.capability = value;
    } else if (key === 'outcome') {
      if (!OUTCOMES.has(value)) return 'outcome must be ok, failed or empty';
      q.outcome = value as TraceOutcome;
    } else if (key === 'traceId') {
      if (!/^[0-9a-f]{32}$/.test(value)) return 'traceId must be 32 lower-case hex digits';
      q.traceId = value;
    } else return `unknown parameter ${key}`;
  }
  return q;
}

/** The refusal of a POST that needs a principal. */
const unauthenticated = (what: string) =>
  Response.json(
    {
      ok: false,
      error: {
        code: 'UNAUTHENTICATED',
        message: `${what} needs an authenticated caller: sign in to the console or send a bearer token`,
      },
    },
    {
      status: statusOf('UNAUTHENTICATED'),
      headers: { 'cache-control': 'no-store', 'www-authenticate': 'Bearer realm="lume-a2a"' },
    },
  );

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

  /**
   * The JSON object a POST carries, or the refusal to answer. The access policy has already
   * refused other origins and bodies that are not JSON; this reads the body under its limit.
   */
  async function postedObject(req: Request): Promise<Record<string, unknown> | Response> {
    if (!(req.headers.get('content-type') ?? '').startsWith('application/json'))
      return refuse('BAD_REQUEST', 'send application/json');
    const bytes = await readBodyBytes(req, MAX_INVOKE_BODY).catch(() => undefined);
    if (!bytes) return refuse('TOO_LARGE', `body must be under ${MAX_INVOKE_BODY} bytes`);
    const parsed = parseJsonBody(new TextDecoder().decode(bytes));
    if (!parsed.ok)
      return parsed.error.code === 'BODY_TOO_DEEP'
        ? refuse('BODY_TOO_DEEP', parsed.error.message)
        : refuse('BAD_REQUEST', 'body is not JSON');
    const body = parsed.result;
    if (!body || typeof body !== 'object' || Array.isArray(body))
      return refuse('BAD_REQUEST', 'body must be a JSON object');
    return body as Record<string, unknown>;
  }

  async function localInvoke(req: Request, caller: Principal): Promise<Response> {
    // The hub signs this call as itself, which a node trusts with anything: only for a principal.
    if (!isAuthenticated(caller)) return unauthenticated('A call through the hub');
    const body = await postedObject(req);
    if (body instanceof Response) return body;
    const b = body as { target?: unknown; capability?: unknown; args?: unknown };
    if (typeof b.target !== 'string' || !NAME.test(b.target))
      return refuse('BAD_REQUEST', 'target must be a fleet node name (never a URL)');
    // Read each time: nodes join the running hub.
    if (!deps.fleet.nodes.some((n) => n.name === b.target))
      return refuse('UNKNOWN_TARGET', `no fleet node named ${b.target}`);
    if (typeof b.capability !== 'string' || !CAPABILITY.test(b.capability))
      return refuse('BAD_REQUEST', 'capability must be a capability id such as sector.movement');
    if (
      b.args !== undefined &&
      (typeof b.args !== 'object' || b.args === null || Array.isArray(b.args))
    )
      return refuse('BAD_REQUEST', 'args must be an object');
    const r = await deps.invoker.invoke(
      b.target,
      b.capability,
      (b.args ?? {}) as Record<string, unknown>,
      undefined,
      { onBehalfOf: ownerKey(caller) },
    );
    // A node's failure: the caller's mistake keeps its 4xx, anything else is an upstream failure.
    return r.ok
      ? json({ ok: true, result: r.result })
      : failed(r.error, upstreamStatus(r.error.code));
  }

  /**
   * A question's calls share one W3C trace: a request that came without a `traceparent` starts
   * one here (its root span is the request, which is not a trace record), so the console groups
   * the calls of one skill or one ask by trace id.
   */
  const asOneTrace = <T>(work: () => Promise<T>): Promise<T> =>
    withTrace(currentTrace() ?? childContext(), work);

  /** Runs one of the hub's own capabilities (each calls nodes through fleet.invoke). */
  async function hubCapability(req: Request, caller: Principal): Promise<Response> {
    const body = await postedObject(req);
    if (body instanceof Response) return body;
    if (typeof body.skill !== 'string' || !CAPABILITY.test(body.skill))
      return refuse('BAD_REQUEST', "skill must be one of the hub's capability ids");
    if (
      body.args !== undefined &&
      (typeof body.args !== 'object' || body.args === null || Array.isArray(body.args))
    )
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

  async function askRoute(req: Request): Promise<Response> {
    const body = await postedObject(req);
    if (body instanceof Response) return body;
    if (typeof body.question !== 'string' || !body.question.trim() || body.question.length > 2000)
      return refuse(
        'BAD_REQUEST',
        'question must be a non-empty string of at most 2000 characters',
      );
    return json(await asOneTrace(() => deps.ask(body.question as string)));
  }

  function route(req: Request, caller: Principal): Promise<Response> | Response | undefined {
    const { pathname, searchParams } = new URL(req.url);
    if (!pathname.startsWith('/api/')) return undefined;
    if (pathname === '/api/negotiations' || pathname.startsWith('/api/negotiations/')) {
      if (req.method !== 'GET')
        return refuse(
          'METHOD_NOT_ALLOWED',
          'GET only; start one with POST /api/hub {"skill":"negotiation.start"}',
        );
      const id = pathname.slice('/api/negotiations/'.length);
      if (pathname === '/api/negotiations')
        return listNegotiations(deps.negotiationsDir).then((n) => json({ negotiations: n }));
      return getNegotiation(deps.negotiationsDir, id).then((r) =>
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
        return typeof q === 'string' ? refuse('BAD_QUERY', q) : json(deps.trace.page(q));
      }
      case '/api/trace/stream':
        // One record per call: the trace stream keeps the queues' general bound, not the live pages' 64.
        return req.method === 'GET'
          ? liveResponse(
              req,
              (push) => deps.trace.subscribe(push),
              { ...deps.sse, owner: ownerKey(caller) },
              EVENT_QUEUE_MAX_ITEMS,
            )
          : refuse('METHOD_NOT_ALLOWED', 'GET only');
      case '/api/fleet/stream':
        return req.method === 'GET'
          ? liveResponse(req, (push) => deps.live.fleet.listen(push), {
              ...deps.sse,
              owner: ownerKey(caller),
            })
          : refuse('METHOD_NOT_ALLOWED', 'GET only');
      case '/api/tasks/stream':
        return req.method === 'GET'
          ? liveResponse(req, (push) => deps.live.tasks.listen(caller, push), {
              ...deps.sse,
              owner: ownerKey(caller),
            })
          : refuse('METHOD_NOT_ALLOWED', 'GET only');
      case '/api/local-invoke':
        return req.method === 'POST'
          ? localInvoke(req, caller)
          : refuse('METHOD_NOT_ALLOWED', 'POST only');
      case '/api/hub':
        return req.method === 'POST'
          ? hubCapability(req, caller)
          : refuse('METHOD_NOT_ALLOWED', 'POST only');
      case '/api/ask':
        return req.method === 'POST' ? askRoute(req) : refuse('METHOD_NOT_ALLOWED', 'POST only');
      // What the console needs to offer a negotiation with models; nothing that locates or unlocks the model.
      case '/api/model':
        return req.method === 'GET'
          ? json({ configured: deps.model !== undefined, answering: deps.model?.up ?? false })
          : refuse('METHOD_NOT_ALLOWED', 'GET only');
      // The mesh as tools for a model: the OpenAI-style function definitions (lib/model/mesh-tools.ts).
      case '/api/mesh/tools':
        return req.method === 'GET'
          ? json({ tools: MESH_TOOL_DEFINITIONS.map((f) => ({ type: 'function', function: f })) })
          : refuse('METHOD_NOT_ALLOWED', 'GET only');
      default:
        return undefined;
    }
  }

  return {
    fetch(req, caller = ANONYMOUS) {
      let answer: Promise<Response> | Response | undefined;
      try {
        answer = route(req, caller);
      } catch (e) {
        return internal(e, req);
      }
      return answer instanceof Promise ? answer.catch((e) => internal(e, req)) : answer;
    },
  };
}
