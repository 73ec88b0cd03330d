/**
 * @module lib/a2a/rest/binding — the A2A v1.0 HTTP+JSON (REST) binding as a plain `Request -> Response`
 * function: it maps each route to the v1.0 operation of the node's one table, builds its params from
 * the path, query and JSON body, and answers with the HTTP status and AIP-193 error bodies of the
 * one error table. Paths outside the binding get `undefined`, for the caller's own 404.
 */

import { isPlainObject } from '../../json/guards.ts';
import { a2aError, isA2AError, restStreamEnd, toRestError, type A2AError } from '../errors.ts';
import {
  challenge,
  jsonResponse,
  parseRequestJson,
  readBodyLimited,
  asks11,
  requestedVersion,
} from '../binding/shared.ts';
import type { Outcome, V1Method } from '../operations.ts';
import type { OperationTable } from '../operation-table.ts';
import { ANONYMOUS, ownerKey, type Principal } from '../../auth/principal.ts';
import type { Obj } from '../wire/params.ts';
import { sseResponse, type SseOptions } from '../../sse/sse.ts';
import { eventId } from '../wire/cursor.ts';
import type { Log } from '../../log.ts';

export interface RestHandlerOptions {
  /** The node's operation table, shared with the other bindings (this one runs its 1.0 half). */
  operations: OperationTable;
  log: Log;
  /** Largest request body accepted, in bytes. */
  maxBodyBytes?: number;
  /** Queue bound and shutdown registry of the streams this handler answers. */
  sse?: Omit<SseOptions, 'ending'>;
}

type HttpMethod = 'GET' | 'POST' | 'DELETE';
/** `none`: the body is ignored; `optional`: empty or a JSON object; `required`: a JSON object. */
type BodyUse = 'none' | 'optional' | 'required';

interface Endpoint {
  op: V1Method;
  body: BodyUse;
  /** HTTP status of a success (the SDK server's choices: 201 for a created config, 204 for a delete). */
  ok?: number;
  /** The operation's params from the path ids, the query and the body. */
  params: (ids: string[], query: URLSearchParams, body: Obj) => Obj;
}

/** Query parameters copied by name; ProtoJSON readers accept the camelCase and the snake_case name. */
function pick(query: URLSearchParams, names: string[]): Obj {
  const out: Obj = {};
  for (const name of names) {
    for (const n of [name, name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)]) {
      const v = query.get(n);
      if (v !== null) out[n] = v;
    }
  }
  return out;
}

/** Query strings carry text; ListTasks wants a boolean and accepts a TaskState number. */
function listQuery(query: URLSearchParams): Obj {
  const q = pick(query, [
    'contextId',
    'status',
    'pageSize',
    'pageToken',
    'historyLength',
    'statusTimestampAfter',
    'includeArtifacts',
  ]);
  for (const k of ['includeArtifacts', 'include_artifacts'])
    if (q[k] === 'true' || q[k] === 'false') q[k] = q[k] === 'true';
  if (typeof q.status === 'string' && /^\d+$/.test(q.status)) q.status = Number(q.status);
  return q;
}

const ROUTES: Record<string, Partial<Record<HttpMethod, Endpoint>>> = {
  'message:send': { POST: { op: 'SendMessage', body: 'required', params: (_i, _q, b) => b } },
  'message:stream': {
    POST: { op: 'SendStreamingMessage', body: 'required', params: (_i, _q, b) => b },
  },
  extendedAgentCard: { GET: { op: 'GetExtendedAgentCard', body: 'none', params: () => ({}) } },
  tasks: { GET: { op: 'ListTasks', body: 'none', params: (_i, q) => listQuery(q) } },
  'tasks/{id}': {
    GET: {
      op: 'GetTask',
      body: 'none',
      params: ([id], q) => ({ ...pick(q, ['historyLength', 'currentGeneration']), id }),
    },
  },
  'tasks/{id}:cancel': {
    POST: { op: 'CancelTask', body: 'optional', params: ([id], _q, b) => ({ ...b, id }) },
  },
  'tasks/{id}:subscribe': {
    // The proto says GET, the prose table POST; the SDK client uses POST.
    // A resume names its cursor as `?lastGeneration=` (or in a POST body, or `Last-Event-ID`).
    GET: {
      op: 'SubscribeToTask',
      body: 'none',
      params: ([id], q) => ({ ...pick(q, ['lastGeneration']), id }),
    },
    POST: {
      op: 'SubscribeToTask',
      body: 'optional',
      params: ([id], q, b) => ({ ...pick(q, ['lastGeneration']), ...b, id }),
    },
  },
  'tasks/{id}/pushNotificationConfigs': {
    POST: {
      op: 'CreateTaskPushNotificationConfig',
      body: 'required',
      ok: 201,
      params: ([taskId], _q, b) => ({ ...b, taskId }),
    },
    GET: {
      op: 'ListTaskPushNotificationConfigs',
      body: 'none',
      params: ([taskId]) => ({ taskId }),
    },
  },
  'tasks/{id}/pushNotificationConfigs/{configId}': {
    GET: {
      op: 'GetTaskPushNotificationConfig',
      body: 'none',
      params: ([taskId, id]) => ({ taskId, id }),
    },
    DELETE: {
      op: 'DeleteTaskPushNotificationConfig',
      body: 'none',
      ok: 204,
      params: ([taskId, id]) => ({ taskId, id }),
    },
  },
};

/**
 * The binding's routes as path templates with their methods and operations, for the node's route
 * table (lib/node/routes.ts): its metrics labels and its documentation read them from here.
 */
export const REST_ROUTES: ReadonlyArray<{
  template: string;
  methods: readonly HttpMethod[];
  ops: readonly V1Method[];
}> = Object.entries(ROUTES).map(([key, methods]) => ({
  template: `/${key}`,
  methods: Object.keys(methods) as HttpMethod[],
  ops: [...new Set(Object.values(methods).map((e) => e!.op))],
}));

/** Whether a path belongs to the binding at all; others are not ours to answer. */
function ours(first: string): boolean {
  return (
    first === 'tasks' ||
    first === 'extendedAgentCard' ||
    first === 'message' ||
    first.startsWith('message:')
  );
}

/** A path id: percent-decoded; a literal `:` separates a verb (clients encode a `:` in an id). */
function decodeId(raw: string): string | A2AError {
  try {
    const id = decodeURIComponent(raw);
    return id === '' ? a2aError('METHOD_NOT_FOUND', 'Empty id in path') : id;
  } catch {
    return a2aError('INVALID_REQUEST', 'Malformed percent-encoding in path');
  }
}

/** The route key (`tasks/{id}:cancel`) and its decoded ids, or null when no route has this shape. */
function resolve(segments: string[]): { key: string; ids: string[] } | A2AError | null {
  const [first, second, third, fourth, ...rest] = segments;
  if (first !== 'tasks' || second === undefined)
    return Object.hasOwn(ROUTES, first!) && segments.length === 1 ? { key: first!, ids: [] } : null;
  if (rest.length) return null;
  const colon = second.indexOf(':');
  const verb = colon < 0 ? '' : second.slice(colon);
  if (verb && (third !== undefined || (verb !== ':cancel' && verb !== ':subscribe'))) return null;
  const taskId = decodeId(colon < 0 ? second : second.slice(0, colon));
  if (isA2AError(taskId)) return taskId;
  if (third === undefined) return { key: `tasks/{id}${verb}`, ids: [taskId] };
  if (third !== 'pushNotificationConfigs') return null;
  if (fourth === undefined) return { key: 'tasks/{id}/pushNotificationConfigs', ids: [taskId] };
  const configId = decodeId(fourth);
  return isA2AError(configId)
    ? configId
    : { key: 'tasks/{id}/pushNotificationConfigs/{configId}', ids: [taskId, configId] };
}

/** Seconds a client refused `TASK_STORE_FULL` or `TOO_MANY_TURNS` waits before it tries again (docs/limits.md). */
const TASK_STORE_RETRY_AFTER_S = '5';
const RETRY_LATER: ReadonlySet<string> = new Set([
  'TASK_STORE_FULL',
  'TOO_MANY_TURNS',
  'TOO_MANY_LONG_POLLS',
  'LONG_POLLS_FULL',
]);

function errorResponse(
  err: A2AError,
  http?: number,
  status?: string,
  headers: Record<string, string> = {},
): Response {
  const { http: code, body } = toRestError(err, http, status);
  const res = jsonResponse(body, code, err.code);
  // A full task store empties as retention deletes finished tasks (at most once a second at the
  // bound), and a caller's turns end: tell the client when to try again, as the other 503s do.
  if (RETRY_LATER.has(err.code)) res.headers.set('retry-after', TASK_STORE_RETRY_AFTER_S);
  for (const [k, v] of Object.entries(headers)) res.headers.set(k, v);
  return res;
}

/**
 * `A2A-Version` (header, else the `A2A-Version` query parameter). Missing means 0.3 (spec §3);
 * this binding speaks only 1.0, so 0.3 and anything else is VersionNotSupported.
 */
function checkVersion(req: Request, query: URLSearchParams): A2AError | undefined {
  const header = req.headers.get('a2a-version');
  const raw = header !== null && header.trim() !== '' ? header : query.get('A2A-Version');
  const v = requestedVersion(raw);
  if (v === '1.0') return undefined;
  const asked =
    v === '0.3' && (raw ?? '').trim() === ''
      ? 'no A2A-Version (which means 0.3)'
      : `A2A-Version '${(raw ?? '').trim().slice(0, 32)}'`;
  return a2aError(
    'VERSION_NOT_SUPPORTED',
    `The request sent ${asked}; the HTTP+JSON binding speaks A2A 1.0 only (JSON-RPC at /a2a also speaks 0.3)`,
  );
}

const JSON_TYPES = new Set(['application/json', 'application/a2a+json']);

/** Reads the JSON object body an endpoint takes: `{}` when optional and empty. */
async function readBody(req: Request, use: BodyUse, max: number): Promise<Obj | Response> {
  if (use === 'none') return {};
  let text: string | null;
  try {
    text = await readBodyLimited(req, max);
  } catch {
    return errorResponse(a2aError('INVALID_REQUEST', 'Request body could not be read'));
  }
  if (text === null)
    return errorResponse(
      a2aError('INVALID_REQUEST', `Request body is larger than ${max} bytes`),
      413,
    );
  if (use === 'optional' && text.trim() === '') return {};
  const type = (req.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
  if (!JSON_TYPES.has(type))
    return errorResponse(
      a2aError(
        'CONTENT_TYPE_NOT_SUPPORTED',
        `Content-Type must be application/json or application/a2a+json, not '${type.slice(0, 64) || 'none'}'`,
      ),
    );
  const parsed = parseRequestJson(text);
  if (isA2AError(parsed)) return errorResponse(parsed);
  const doc = parsed.doc;
  return isPlainObject(doc)
    ? doc
    : errorResponse(a2aError('INVALID_PARAMS', 'The request body must be a JSON object'));
}

/** Builds the REST handler; it answers `undefined` for paths that are not REST routes. */
export function createRestHandler(
  opts: RestHandlerOptions,
): (req: Request, caller?: Principal) => Promise<Response | undefined> {
  const maxBody = opts.maxBodyBytes ?? 4 * 1024 * 1024;
  // A2A-Version 1.1 (header or query): the same operations, their answers with 1.1's members.
  const opsFor = (req: Request, query: URLSearchParams) =>
    asks11(req.headers.get('a2a-version')?.trim() || query.get('A2A-Version'))
      ? opts.operations['1.1']
      : opts.operations['1.0'];

  /** `caller`: who the node authenticated the request as (anonymous unless given). */
  return async function handleRest(
    req: Request,
    caller: Principal = ANONYMOUS,
  ): Promise<Response | undefined> {
    const url = new URL(req.url);
    const segments = url.pathname.split('/').slice(1);
    if (!ours(segments[0] ?? '')) return undefined;
    const route = resolve(segments);
    if (isA2AError(route)) return errorResponse(route);
    const methods = route ? ROUTES[route.key] : undefined;
    if (!route || !methods)
      return errorResponse(
        a2aError('METHOD_NOT_FOUND', `No A2A HTTP+JSON route ${url.pathname.slice(0, 256)}`),
      );
    const endpoint = methods[req.method as HttpMethod];
    if (!endpoint) {
      const allow = Object.keys(methods).join(', ');
      return errorResponse(
        a2aError(
          'METHOD_NOT_FOUND',
          `${req.method.slice(0, 16)} is not allowed here; use ${allow}`,
        ),
        405,
        'UNIMPLEMENTED',
        { Allow: allow },
      );
    }
    const refused = checkVersion(req, url.searchParams);
    if (refused) return errorResponse(refused);
    const body = await readBody(req, endpoint.body, maxBody);
    if (body instanceof Response) return body;

    let outcome: Outcome;
    try {
      outcome = await opsFor(req, url.searchParams)[endpoint.op](
        endpoint.params(route.ids, url.searchParams, body),
        false,
        caller,
        {
          lastEventId: req.headers.get('last-event-id'),
          asks11: asks11(
            req.headers.get('a2a-version')?.trim() || url.searchParams.get('A2A-Version'),
          ),
          signal: req.signal,
        },
      );
    } catch (e) {
      opts.log('error', 'a2a rest operation failed', {
        op: endpoint.op,
        error: (e as Error)?.message ?? String(e),
      });
      return errorResponse(a2aError('INTERNAL_ERROR'));
    }
    if (isA2AError(outcome))
      return outcome.code === 'UNAUTHENTICATED'
        ? challenge(errorResponse(outcome))
        : errorResponse(outcome);
    if ('stream' in outcome) {
      const { stream: sub, frame } = outcome;
      // Each `data:` line is a bare StreamResponse: the binding has no envelope.
      return sseResponse(
        sub,
        frame,
        () => sub.close(),
        { ...opts.sse, owner: ownerKey(caller), ending: restStreamEnd },
        eventId,
      );
    }
    if (endpoint.ok === 204) return new Response(null, { status: 204 });
    return jsonResponse(outcome.result, endpoint.ok ?? 200, null);
  };
}
