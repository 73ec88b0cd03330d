/**
 * @module lib/mcp/http-post — a POST to MCP's Streamable HTTP endpoint: one JSON-RPC message,
 * checked for its headers and size; `initialize` opens a session bound to the caller, any other
 * request runs in the session it names. A request is answered as JSON unless its method speaks to
 * the client before it ends (progress, logs, a request of the server's own): then the answer is an
 * SSE stream of those messages ending with the answer. A response of the client goes to the
 * server request waiting on it; a notification or response is accepted with 202.
 */

import type { Principal } from '../auth/principal.ts';
import { readBodyBytes } from '../body.ts';
import { statusOf } from '../errors/registry.ts';
import { isPlainObject } from '../json/guards.ts';
import type { SseStreams } from '../sse/sse.ts';
import { answerRequest } from './http-answer.ts';
import { failure, parseMessage, rpcError, type McpMessage } from './jsonrpc.ts';
import type { McpLimits } from './limits.ts';
import { MCP_PROTOCOL_VERSIONS, MCP_STATELESS_VERSIONS, RPC } from './protocol.ts';
import { isStatelessForm, statelessPost, type ListenHook } from './http-stateless.ts';
import { negotiateVersion, type McpServer } from './server.ts';
import type { McpSession, McpSessions } from './sessions.ts';
import { accepts, bad, JSON_HEADERS, refuse, SESSION_HEADER, sessionOf } from './http-refusals.ts';

/** What a POST reads; the transport's options (lib/mcp/http.ts) carry it. */
export interface McpPostDeps {
  server: McpServer;
  sessions: McpSessions;
  limits: Pick<
    McpLimits,
    'bodyBytes' | 'streamMessages' | 'pendingRequests' | 'clientAnswerMs' | 'subscriptions'
  >;
  /** The open SSE streams of the process, so a shutdown ends them. */
  streams?: SseStreams;
  /** Runs once a session is made (the hub ties its mesh presence to it). */
  onSession?: (s: McpSession, caller: Principal, req: Request) => void;
  /** What the server feeds a 2026-07-28 `subscriptions/listen` stream itself (the hub: mesh inboxes). */
  onListen?: ListenHook;
}

export async function post(
  deps: McpPostDeps,
  req: Request,
  caller: Principal,
  owner: string,
): Promise<Response> {
  if (!accepts(req, 'application/json') || !accepts(req, 'text/event-stream'))
    return bad('MCP_NOT_ACCEPTABLE', 'Accept must list application/json and text/event-stream');
  const type = (req.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
  if (type !== 'application/json')
    return bad('MCP_NOT_JSON', 'Content-Type must be application/json');
  const bytes = await readBodyBytes(req, deps.limits.bodyBytes).catch(() => undefined);
  if (!bytes) return bad('MCP_TOO_LARGE', `a message must be under ${deps.limits.bodyBytes} bytes`);
  const parsed = parseMessage(new TextDecoder().decode(bytes));
  if (!parsed.ok)
    return new Response(JSON.stringify(failure(parsed.id, parsed.error)), {
      status: statusOf(parsed.error.data?.code ?? 'MCP_BAD_MESSAGE'),
      headers: JSON_HEADERS,
    });
  const m = parsed.message;
  const stateless = isStatelessForm(m);
  const session = req.headers.get(SESSION_HEADER);
  if (stateless && session !== null)
    return bad(
      'MCP_MIXED_REVISIONS',
      'a request in the stateless form (a revision in _meta) names no session',
    );
  // `initialize` in the stateless form is a method 2026-07-28 does not have (404 there).
  if (m.kind === 'request' && m.method === 'initialize' && !stateless)
    return initialize(deps, req, m, caller, owner);
  const header = req.headers.get('mcp-protocol-version');
  // No session and no session revision named: the stateless revision, whose checks say what is missing.
  if (stateless || (session === null && header !== null && !MCP_PROTOCOL_VERSIONS.includes(header)))
    return statelessPost(deps, req, m, caller, owner);
  if (header !== null && !MCP_PROTOCOL_VERSIONS.includes(header))
    return bad(
      'MCP_BAD_PROTOCOL_VERSION',
      `unsupported MCP-Protocol-Version; served: ${[...MCP_STATELESS_VERSIONS, ...MCP_PROTOCOL_VERSIONS].join(', ')}`,
    );
  return inSession(deps, req, m, caller, owner);
}

/** A message of a 2025-11-25 (or earlier) session. */
async function inSession(
  deps: McpPostDeps,
  req: Request,
  m: McpMessage,
  caller: Principal,
  owner: string,
): Promise<Response> {
  const found = sessionOf(deps.sessions, req, owner);
  if (!found.ok) return bad(found.error.code, found.error.message);
  const session = found.result;
  // A response answers a request of the server's; it and notifications need no answer.
  if (m.kind === 'response') session.pending.get(String(m.id))?.(m.answer);
  if (m.kind !== 'request') return new Response(null, { status: 202 });
  return answerRequest(deps, m, {
    owner,
    ctx: { session, revision: session.protocolVersion, caller },
    clientCapabilities: session.clientCapabilities,
    logLevel: session.logLevel,
  });
}

/** `initialize`: a new session for the caller, in the protocol version both sides speak. */
function initialize(
  deps: McpPostDeps,
  req: Request,
  m: Extract<McpMessage, { kind: 'request' }>,
  caller: Principal,
  owner: string,
): Response {
  if (req.headers.has(SESSION_HEADER))
    return bad(
      'MCP_ALREADY_INITIALIZED',
      'initialize starts a session: send it without Mcp-Session-Id',
    );
  const info = m.params.clientInfo as { name?: unknown; version?: unknown } | undefined;
  const version = negotiateVersion(m.params.protocolVersion);
  const capabilities = m.params.capabilities;
  const opened = deps.sessions.open(
    owner,
    version,
    `${String(info?.name ?? 'unknown')}/${String(info?.version ?? '?')}`,
    isPlainObject(capabilities) ? capabilities : {},
  );
  if (!opened.ok)
    return refuse(
      statusOf(opened.error.code),
      rpcError(RPC.INTERNAL_ERROR, opened.error.message, opened.error.code),
      { 'retry-after': '60' },
    );
  deps.onSession?.(opened.result, caller, req);
  return new Response(
    JSON.stringify({ jsonrpc: '2.0', id: m.id, result: deps.server.initializeResult(version) }),
    { status: 200, headers: { ...JSON_HEADERS, 'mcp-session-id': opened.result.id } },
  );
}
