/**
 * @module lib/mcp/http-stateless — a POST in MCP's stateless revision (2026-07-28) on the same
 * endpoint as the session ones: no session, no `initialize`; the request names its revision and
 * the client's capabilities in `_meta`, and its method (and tool, prompt or resource) again in the
 * `Mcp-Method` / `Mcp-Name` headers, which must agree with the body (`HeaderMismatch`, -32020,
 * 400). A revision not served is `UnsupportedProtocolVersion` (-32022, 400, with the ones served).
 * Every result carries `resultType`, the server's identity in `_meta` and, where cacheable,
 * `ttlMs` and `cacheScope`; `subscriptions/listen` holds the stream of change notifications the
 * client opted in to.
 */

import type { Principal } from '../auth/principal.ts';
import { statusOf as httpStatusOf } from '../errors/registry.ts';
import { isPlainObject } from '../json/guards.ts';
import { sseResponse } from '../sse/sse.ts';
import { answerRequest, type AnswerDeps } from './http-answer.ts';
import { JSON_HEADERS } from './http-refusals.ts';
import {
  failure,
  rpcError,
  type McpMessage,
  type RpcAnswer,
  type RpcError,
  type RpcId,
} from './jsonrpc.ts';
import {
  LOG_LEVELS,
  MCP_PROTOCOL_VERSIONS,
  MCP_STATELESS_VERSIONS,
  META,
  RPC,
  type LogLevel,
} from './protocol.ts';
import { listenUris, type McpSessions } from './sessions.ts';
import { TASKS_EXTENSION } from './tasks.ts';

/** Whether a request's `_meta` capabilities declare the tasks extension. */
function declaresTasksIn(meta: unknown): boolean {
  const caps = isPlainObject(meta) ? meta[META.clientCapabilities] : undefined;
  const ext = isPlainObject(caps) ? caps.extensions : undefined;
  return isPlainObject(ext) && ext[TASKS_EXTENSION] !== undefined;
}

/**
 * What a server adds to a `subscriptions/listen` stream for resource URIs it feeds itself (the
 * hub: a mesh presence's inbox): undefined when none of `uris` is its own; a refusal (the
 * stream is not opened); or `attach`, called once the stream is acknowledged with a way to tell
 * it, returning what to run when it ends.
 */
export type ListenHook = (l: {
  uris: ReadonlySet<string>;
  caller: Principal;
  req: Request;
}) => Promise<
  | undefined
  | { refuse: { rpc: number; code: string; message: string } }
  | { attach(tell: (method: string, params: Record<string, unknown>) => void): () => void }
>;

export interface StatelessDeps extends AnswerDeps {
  sessions: McpSessions;
  limits: AnswerDeps['limits'] & { subscriptions: number };
  onListen?: ListenHook;
}

type Request_ = Extract<McpMessage, { kind: 'request' }>;

/** Results a client may cache: they carry `ttlMs` and `cacheScope`. */
const CACHEABLE = new Set([
  'server/discover',
  'tools/list',
  'prompts/list',
  'resources/list',
  'resources/templates/list',
  'resources/read',
]);

/** The body value `Mcp-Name` mirrors, for the methods that have one. */
const NAMED: Record<string, 'name' | 'uri' | 'taskId'> = {
  'tools/call': 'name',
  'prompts/get': 'name',
  'resources/read': 'uri',
  // The tasks extension routes its methods by task id.
  'tasks/get': 'taskId',
  'tasks/update': 'taskId',
  'tasks/cancel': 'taskId',
};

const refusal = (
  id: RpcId | null,
  status: number,
  code: number,
  message: string,
  reason: string,
  data?: Record<string, unknown>,
) =>
  new Response(
    JSON.stringify(
      failure(id, { code, message, data: { code: reason, ...data } as { code: string } }),
    ),
    { status, headers: JSON_HEADERS },
  );

const mismatch = (id: RpcId | null, message: string) =>
  refusal(id, 400, RPC.HEADER_MISMATCH, `Header mismatch: ${message}`, 'MCP_HEADER_MISMATCH');

/** A header value as sent: the Base64 sentinel form `=?base64?…?=` decoded. */
function headerValue(raw: string | null): string | null {
  const m = raw === null ? null : /^=\?base64\?([A-Za-z0-9+/=]*)\?=$/.exec(raw);
  return m ? Buffer.from(m[1]!, 'base64').toString('utf8') : raw;
}

/** Whether a request is in the stateless form: its `_meta` names a revision. */
export const isStatelessForm = (m: McpMessage): boolean =>
  m.kind !== 'response' &&
  isPlainObject(m.params._meta) &&
  Object.hasOwn(m.params._meta, META.protocolVersion);

/** The header checks and the revision check; undefined when the request may run. */
function statelessRefusal(req: Request, m: Request_ | null, id: RpcId | null) {
  const meta = m && isPlainObject(m.params._meta) ? m.params._meta : {};
  const header = req.headers.get('mcp-protocol-version');
  if (header === null) return mismatch(id, 'the MCP-Protocol-Version header is missing');
  const version = meta[META.protocolVersion];
  if (typeof version !== 'string' || !isPlainObject(meta[META.clientCapabilities]))
    return refusal(
      id,
      400,
      RPC.INVALID_PARAMS,
      `_meta must carry ${META.protocolVersion} and ${META.clientCapabilities}`,
      'MCP_BAD_META',
    );
  if (header !== version)
    return mismatch(id, `MCP-Protocol-Version '${header.slice(0, 32)}' is not the body's`);
  if (!MCP_STATELESS_VERSIONS.includes(version))
    return refusal(
      id,
      400,
      RPC.UNSUPPORTED_PROTOCOL_VERSION,
      'Unsupported protocol version',
      'MCP_BAD_PROTOCOL_VERSION',
      {
        supported: [...MCP_STATELESS_VERSIONS, ...MCP_PROTOCOL_VERSIONS],
        requested: version.slice(0, 64),
      },
    );
  if (!m) return undefined;
  const method = headerValue(req.headers.get('mcp-method'));
  if (method !== m.method) return mismatch(id, `Mcp-Method does not match the body's method`);
  const field = NAMED[m.method];
  if (field) {
    const name = headerValue(req.headers.get('mcp-name'));
    if (name === null) return mismatch(id, `the Mcp-Name header is missing`);
    if (name !== m.params[field]) return mismatch(id, `Mcp-Name does not match params.${field}`);
  }
  return undefined;
}

/** The HTTP status of a stateless answer: 404 for an unknown method, 400 for the protocol's refusals. */
function statusOf(a: RpcAnswer): number {
  if (!('error' in a)) return 200;
  if (a.error.code === RPC.METHOD_NOT_FOUND) return 404;
  const protocol: number[] = [
    RPC.HEADER_MISMATCH,
    RPC.MISSING_CLIENT_CAPABILITY,
    RPC.UNSUPPORTED_PROTOCOL_VERSION,
  ];
  return protocol.includes(a.error.code) ? 400 : 200;
}

export async function statelessPost(
  deps: StatelessDeps,
  req: Request,
  m: McpMessage,
  caller: Principal,
  owner: string,
): Promise<Response> {
  const id = m.kind === 'request' ? m.id : null;
  const refused = statelessRefusal(req, m.kind === 'request' ? m : null, id);
  if (refused) return refused;
  if (m.kind !== 'request') return new Response(null, { status: 202 });
  const meta = m.params._meta as Record<string, unknown>;
  if (m.method === 'subscriptions/listen') return listen(deps, m, req, caller, owner);
  const level = meta[META.logLevel];
  const shape = (a: RpcAnswer): RpcAnswer => {
    if (!('result' in a) || !isPlainObject(a.result)) return a;
    const r: Record<string, unknown> = { resultType: 'complete', ...a.result };
    r._meta = { ...(isPlainObject(r._meta) ? r._meta : {}), [META.serverInfo]: deps.server.info };
    if (CACHEABLE.has(m.method) && r.resultType === 'complete') {
      r.ttlMs ??= 0;
      r.cacheScope ??= 'private';
    }
    return { ...a, result: r };
  };
  return answerRequest(deps, m, {
    owner,
    ctx: { revision: meta[META.protocolVersion] as string, caller, owner, headers: req.headers },
    clientCapabilities: meta[META.clientCapabilities] as Record<string, unknown>,
    logLevel: LOG_LEVELS.includes(level as LogLevel) ? (level as LogLevel) : 'none',
    shape,
    status: statusOf,
  });
}

const listenRefused = (id: RpcId, rpc: number, code: string, message: string) =>
  new Response(JSON.stringify(failure(id, rpcError(rpc, message, code))), {
    status: httpStatusOf(code),
    headers: httpStatusOf(code) === 503 ? { ...JSON_HEADERS, 'retry-after': '60' } : JSON_HEADERS,
  });

/**
 * `subscriptions/listen`: the acknowledgment first, then each change the client opted in to and
 * what the server feeds itself for its own resource URIs (`onListen`).
 */
async function listen(
  deps: StatelessDeps,
  m: Request_,
  req: Request,
  caller: Principal,
  owner: string,
): Promise<Response> {
  const asked = isPlainObject(m.params.notifications) ? m.params.notifications : {};
  // Task notifications are the tasks extension's: asked for without it declared, -32021 (no task
  // is followed on a stream yet, so a declaring client's `taskIds` are not acknowledged).
  if (asked.taskIds !== undefined && !declaresTasksIn(m.params._meta))
    return new Response(
      JSON.stringify(
        failure(m.id, {
          code: RPC.MISSING_CLIENT_CAPABILITY,
          message: `task notifications need the ${TASKS_EXTENSION} extension declared`,
          data: {
            code: 'MCP_MISSING_CAPABILITY',
            requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } },
          },
        } as RpcError),
      ),
      { status: 400, headers: JSON_HEADERS },
    );
  const full = deps.sessions.listenRefusal(owner);
  if (full) return listenRefused(m.id, RPC.INTERNAL_ERROR, full.code, full.message);
  const own = await deps.onListen?.({
    uris: listenUris(asked, deps.limits.subscriptions),
    caller,
    req,
  });
  if (own && 'refuse' in own)
    return listenRefused(m.id, own.refuse.rpc, own.refuse.code, own.refuse.message);
  let detach: (() => void) | undefined;
  const opened = deps.sessions.listen(m.id, asked, owner, () => detach?.());
  if (!opened.ok)
    return listenRefused(m.id, RPC.INTERNAL_ERROR, opened.error.code, opened.error.message);
  if (own) detach = own.attach(opened.result.tell);
  const queue = opened.result.queue;
  return sseResponse(
    queue,
    (x) => x,
    () => queue.close(),
    { ...(deps.streams ? { streams: deps.streams } : {}), owner },
  );
}
