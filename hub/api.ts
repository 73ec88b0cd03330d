/**
 * @module hub/api — the hub's HTTP API for the console: `GET /api/fleet` (aggregated fleet),
 * `GET /api/trace` (paged call trace), `GET /api/trace/stream` (new trace records as SSE) and
 * `POST /api/local-invoke`, the browser's only way to a node: same-origin only, the target is a
 * fleet node name, and the hub signs the call itself.
 */

import { readBodyBytes } from '../lib/body.ts';
import { EventQueue } from '../lib/event-queue.ts';
import { sseResponse } from '../lib/a2a-sse.ts';
import type { Fleet, FleetInvoker } from '../lib/fleet.ts';
import type { Log } from '../lib/log.ts';
import type { TraceOutcome, TraceQuery, TraceRecord, TraceStore } from '../lib/trace.ts';
import type { FleetSnapshot } from './fleet-view.ts';

export interface HubApiDeps {
  fleet: Fleet;
  view: { snapshot(): Promise<FleetSnapshot> };
  trace: TraceStore;
  invoker: FleetInvoker;
  log: Log;
}

/** Every refusal of the API, with its HTTP status. */
export const API_ERRORS = {
  BAD_QUERY: 400,
  BAD_REQUEST: 400,
  FORBIDDEN_ORIGIN: 403,
  UNKNOWN_TARGET: 404,
  TOO_LARGE: 413,
  METHOD_NOT_ALLOWED: 405,
} as const;
type ApiError = keyof typeof API_ERRORS;

const json = (body: unknown, status = 200) => Response.json(body, { status, headers: { 'cache-control': 'no-store' } });
const refuse = (code: ApiError, message: string) => json({ ok: false, error: { code, message } }, API_ERRORS[code]);

const NAME = /^[a-z][a-z0-9-]{0,31}$/;
const CAPABILITY = /^[a-z][a-z0-9-]*(\.[a-z][a-z0-9-]*)+$/;
const OUTCOMES: ReadonlySet<string> = new Set(['ok', 'failed', 'empty']);
const MAX_INVOKE_BODY = 64 * 1024;

function traceQuery(params: URLSearchParams): TraceQuery | string {
  const q: TraceQuery = {};
  for (const [key, value] of params) {
    if (key === 'limit' || key === 'before') {
      const n = Number(value);
      if (!/^\d+$/.test(value) || n < 1 || n > Number.MAX_SAFE_INTEGER) return `${key} must be a positive integer`;
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
    } else return `unknown parameter ${key}`;
  }
  return q;
}

export function createHubApi(deps: HubApiDeps): { fetch(req: Request): Promise<Response> | Response | undefined } {
  const nodeNames = new Set(deps.fleet.nodes.map((n) => n.name));

  async function localInvoke(req: Request): Promise<Response> {
    // Same-origin only: a page elsewhere must not be able to make the hub sign calls for it.
    const origin = req.headers.get('origin');
    if (!origin || origin !== new URL(req.url).origin) return refuse('FORBIDDEN_ORIGIN', 'local-invoke accepts same-origin requests only');
    if (!(req.headers.get('content-type') ?? '').startsWith('application/json')) return refuse('BAD_REQUEST', 'send application/json');
    const bytes = await readBodyBytes(req, MAX_INVOKE_BODY).catch(() => undefined);
    if (!bytes) return refuse('TOO_LARGE', `body must be under ${MAX_INVOKE_BODY} bytes`);
    let body: unknown;
    try {
      body = JSON.parse(new TextDecoder().decode(bytes));
    } catch {
      return refuse('BAD_REQUEST', 'body is not JSON');
    }
    const b = body as { target?: unknown; capability?: unknown; args?: unknown };
    if (!b || typeof b !== 'object' || Array.isArray(b)) return refuse('BAD_REQUEST', 'body must be an object {target, capability, args}');
    if (typeof b.target !== 'string' || !NAME.test(b.target)) return refuse('BAD_REQUEST', 'target must be a fleet node name (never a URL)');
    if (!nodeNames.has(b.target)) return refuse('UNKNOWN_TARGET', `no fleet node named ${b.target}`);
    if (typeof b.capability !== 'string' || !CAPABILITY.test(b.capability)) return refuse('BAD_REQUEST', 'capability must be a capability id such as sector.movement');
    if (b.args !== undefined && (typeof b.args !== 'object' || b.args === null || Array.isArray(b.args))) return refuse('BAD_REQUEST', 'args must be an object');
    const r = await deps.invoker.invoke(b.target, b.capability, (b.args ?? {}) as Record<string, unknown>);
    return r.ok ? json({ ok: true, result: r.result }) : json({ ok: false, error: { code: r.error.code, message: r.error.message } }, 502);
  }

  function traceStream(req: Request): Response {
    const queue = new EventQueue<TraceRecord>(() => unsubscribe());
    const unsubscribe = deps.trace.subscribe((r) => queue.push(r));
    req.signal.addEventListener('abort', () => queue.close(), { once: true });
    return sseResponse(queue, (r) => r, () => queue.close());
  }

  return {
    fetch(req) {
      const { pathname, searchParams } = new URL(req.url);
      if (!pathname.startsWith('/api/')) return undefined;
      switch (pathname) {
        case '/api/fleet':
          return req.method === 'GET' ? deps.view.snapshot().then((s) => json(s)) : refuse('METHOD_NOT_ALLOWED', 'GET only');
        case '/api/trace': {
          if (req.method !== 'GET') return refuse('METHOD_NOT_ALLOWED', 'GET only');
          const q = traceQuery(searchParams);
          return typeof q === 'string' ? refuse('BAD_QUERY', q) : json(deps.trace.page(q));
        }
        case '/api/trace/stream':
          return req.method === 'GET' ? traceStream(req) : refuse('METHOD_NOT_ALLOWED', 'GET only');
        case '/api/local-invoke':
          return req.method === 'POST' ? localInvoke(req) : refuse('METHOD_NOT_ALLOWED', 'POST only');
        default:
          return undefined;
      }
    },
  };
}
