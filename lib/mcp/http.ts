/**
 * @module lib/mcp/http — MCP's Streamable HTTP transport (revision 2025-11-25) as a plain
 * `Request → Response` handler: POST carries one JSON-RPC message (a request is answered as JSON,
 * a notification or response with 202), GET opens the session's one stream of server messages
 * (SSE), DELETE ends the session. `initialize` makes a session bound to its caller; every later
 * request names it in `Mcp-Session-Id`, and a session id of another caller is answered as unknown
 * (404). An `Origin` that is not the server's own is refused on every method (the transport's
 * security warning: DNS rebinding), an unsupported `MCP-Protocol-Version` is 400.
 */

import { ownerKey, isAuthenticated, type Principal } from '../auth/principal.ts';
import { readBodyBytes } from '../body.ts';
import { sseResponse, type SseStreams } from '../a2a/sse.ts';
import { failure, parseMessage, rpcError, type RpcError } from './jsonrpc.ts';
import type { McpLimits } from './limits.ts';
import { MCP_PROTOCOL_VERSIONS, RPC } from './protocol.ts';
import { statusOf } from '../errors/registry.ts';
import type { McpErrorCode } from '../errors/mcp.ts';
import { negotiateVersion, type McpServer } from './server.ts';
import type { McpSession, McpSessions } from './sessions.ts';

export interface McpHttpOptions {
  server: McpServer;
  sessions: McpSessions;
  limits: Pick<McpLimits, 'bodyBytes'>;
  /** Whether a browser page of this origin may talk to the endpoint (the server's own pages only). */
  allowedOrigin(origin: string): boolean;
  /** Whether an anonymous caller may open a session at all (loopback: yes, for read-only tools). */
  anonymousAllowed: boolean;
  /** Runs once a session is made (the hub ties its mesh presence to it). */
  onSession?: (s: McpSession, caller: Principal, req: Request) => void;
  /** The open SSE streams of the process, so a shutdown ends them. */
  streams?: SseStreams;
}

const SESSION_HEADER = 'mcp-session-id';
const VERSION_HEADER = 'mcp-protocol-version';
const JSON_HEADERS = { 'content-type': 'application/json', 'cache-control': 'no-store' };

/** A refusal before any session: a JSON-RPC error without an id, with the HTTP status the transport asks for. */
const refuse = (status: number, error: RpcError, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(failure(null, error)), {
    status,
    headers: { ...JSON_HEADERS, ...headers },
  });
/** A refusal with its code's registry status. */
const bad = (reason: McpErrorCode | 'METHOD_NOT_ALLOWED', message: string) =>
  refuse(statusOf(reason), rpcError(RPC.INVALID_REQUEST, message, reason));

const accepts = (req: Request, type: string) =>
  (req.headers.get('accept') ?? '')
    .toLowerCase()
    .split(',')
    .some((t) => t.split(';')[0]!.trim() === type);

export function createMcpHttp(opts: McpHttpOptions) {
  const { server, sessions } = opts;

  /** The caller's session named by the header, or the refusal. */
  function sessionOf(req: Request, owner: string): McpSession | Response {
    const id = req.headers.get(SESSION_HEADER);
    if (id === null)
      return bad('MCP_SESSION_REQUIRED', 'send the Mcp-Session-Id header that initialize answered');
    const s = /^[\x21-\x7e]{1,128}$/.test(id) ? sessions.find(id, owner) : undefined;
    return s ?? bad('MCP_UNKNOWN_SESSION', 'no such session: initialize again');
  }

  async function post(req: Request, caller: Principal, owner: string): Promise<Response> {
    if (!accepts(req, 'application/json') || !accepts(req, 'text/event-stream'))
      return bad('MCP_NOT_ACCEPTABLE', 'Accept must list application/json and text/event-stream');
    const type = (req.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
    if (type !== 'application/json')
      return bad('MCP_NOT_JSON', 'Content-Type must be application/json');
    const bytes = await readBodyBytes(req, opts.limits.bodyBytes).catch(() => undefined);
    if (!bytes)
      return bad('MCP_TOO_LARGE', `a message must be under ${opts.limits.bodyBytes} bytes`);
    const parsed = parseMessage(new TextDecoder().decode(bytes));
    if (!parsed.ok)
      return new Response(JSON.stringify(failure(parsed.id, parsed.error)), {
        status: statusOf(parsed.error.data?.code ?? 'MCP_BAD_MESSAGE'),
        headers: JSON_HEADERS,
      });
    const m = parsed.message;
    if (m.kind === 'request' && m.method === 'initialize') {
      if (req.headers.has(SESSION_HEADER))
        return bad(
          'MCP_ALREADY_INITIALIZED',
          'initialize starts a session: send it without Mcp-Session-Id',
        );
      const info = m.params.clientInfo as { name?: unknown; version?: unknown } | undefined;
      const version = negotiateVersion(m.params.protocolVersion);
      const opened = sessions.open(
        owner,
        version,
        `${String(info?.name ?? 'unknown')}/${String(info?.version ?? '?')}`,
      );
      if (!opened.ok)
        return refuse(
          statusOf(opened.error.code),
          rpcError(RPC.INTERNAL_ERROR, opened.error.message, opened.error.code),
          {
            'retry-after': '60',
          },
        );
      opts.onSession?.(opened.result, caller, req);
      return new Response(
        JSON.stringify({ jsonrpc: '2.0', id: m.id, result: server.initializeResult(version) }),
        {
          status: 200,
          headers: { ...JSON_HEADERS, 'mcp-session-id': opened.result.id },
        },
      );
    }
    const session = sessionOf(req, owner);
    if (session instanceof Response) return session;
    // Notifications (initialized, cancelled) and responses to server requests need no answer.
    if (m.kind !== 'request') return new Response(null, { status: 202 });
    const out = await server.handle(m.id, m.method, m.params, { session, caller });
    return new Response(JSON.stringify(out), { status: 200, headers: JSON_HEADERS });
  }

  function get(req: Request, owner: string): Response {
    if (!accepts(req, 'text/event-stream'))
      return bad('MCP_NOT_ACCEPTABLE', 'Accept must list text/event-stream');
    const session = sessionOf(req, owner);
    if (session instanceof Response) return session;
    const queue = sessions.openStream(session);
    if (!queue) return bad('MCP_STREAM_OPEN', 'this session already has its stream open');
    return sseResponse(
      queue,
      (m) => m,
      () => queue.close(),
      {
        ...(opts.streams ? { streams: opts.streams } : {}),
      },
    );
  }

  async function remove(req: Request, owner: string): Promise<Response> {
    const session = sessionOf(req, owner);
    if (session instanceof Response) return session;
    await sessions.end(session.id);
    return new Response(null, { status: 204 });
  }

  return {
    /** Answers one request to the MCP endpoint as `caller` (the surface authenticated it). */
    async fetch(req: Request, caller: Principal): Promise<Response> {
      const origin = req.headers.get('origin');
      if (origin !== null && !opts.allowedOrigin(origin))
        return refuse(
          statusOf('FORBIDDEN_ORIGIN'),
          rpcError(
            RPC.INVALID_REQUEST,
            'requests from another origin are refused',
            'FORBIDDEN_ORIGIN',
          ),
        );
      if (!isAuthenticated(caller) && !opts.anonymousAllowed)
        return refuse(
          statusOf('UNAUTHENTICATED'),
          rpcError(RPC.INVALID_REQUEST, 'send a bearer token', 'UNAUTHENTICATED'),
          {
            'www-authenticate': 'Bearer realm="lume-a2a"',
          },
        );
      const version = req.headers.get(VERSION_HEADER);
      if (version !== null && !MCP_PROTOCOL_VERSIONS.includes(version))
        return bad(
          'MCP_BAD_PROTOCOL_VERSION',
          `unsupported MCP-Protocol-Version; served: ${MCP_PROTOCOL_VERSIONS.join(', ')}`,
        );
      const owner = ownerKey(caller);
      switch (req.method) {
        case 'POST':
          return post(req, caller, owner);
        case 'GET':
          return get(req, owner);
        case 'DELETE':
          return remove(req, owner);
        default:
          return methodNotAllowed();
      }
    },
  };
}

function methodNotAllowed(): Response {
  const r = bad('METHOD_NOT_ALLOWED', 'the MCP endpoint takes POST, GET and DELETE');
  r.headers.set('allow', 'POST, GET, DELETE');
  return r;
}
