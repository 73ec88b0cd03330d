/**
 * @module lib/mcp/http — MCP's Streamable HTTP transport (revision 2025-11-25) as a plain
 * `Request → Response` handler: POST carries one JSON-RPC message (a request is answered as JSON,
 * a notification or response with 202), GET opens the session's one stream of server messages
 * (SSE), DELETE ends the session. `initialize` makes a session bound to its caller; every later
 * request names it in `Mcp-Session-Id`, and a session id of another caller is answered as unknown
 * (404). An `Origin` that is not the server's own is refused on every method (the transport's
 * security warning: DNS rebinding), an unsupported `MCP-Protocol-Version` is 400. A POST is
 * lib/mcp/http-post.ts, the refusals lib/mcp/http-refusals.ts.
 */

import { isAuthenticated, ownerKey, type Principal } from '../auth/principal.ts';
import { sseResponse } from '../sse/sse.ts';
import { statusOf } from '../errors/registry.ts';
import { rpcError } from './jsonrpc.ts';
import { MCP_PROTOCOL_VERSIONS, RPC } from './protocol.ts';
import { post, type McpPostDeps } from './http-post.ts';
import { accepts, bad, methodNotAllowed, refuse, sessionOf } from './http-refusals.ts';

export interface McpHttpOptions extends McpPostDeps {
  /** Whether a browser page of this origin may talk to the endpoint (the server's own pages only). */
  allowedOrigin(origin: string): boolean;
  /** Whether an anonymous caller may open a session at all (loopback: yes, for read-only tools). */
  anonymousAllowed: boolean;
}

const VERSION_HEADER = 'mcp-protocol-version';

export function createMcpHttp(opts: McpHttpOptions) {
  const { sessions } = opts;

  function get(req: Request, owner: string): Response {
    if (!accepts(req, 'text/event-stream'))
      return bad('MCP_NOT_ACCEPTABLE', 'Accept must list text/event-stream');
    const found = sessionOf(sessions, req, owner);
    if (!found.ok) return bad(found.error.code, found.error.message);
    const session = found.result;
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
    const found = sessionOf(sessions, req, owner);
    if (!found.ok) return bad(found.error.code, found.error.message);
    const session = found.result;
    await sessions.end(session.id);
    return new Response(null, { status: 204 });
  }

  return {
    /**
     * Answers one request to the MCP endpoint as `caller` (the surface authenticated it), sent from
     * the address `client`.
     */
    async fetch(req: Request, caller: Principal, client = 'unknown'): Promise<Response> {
      const refused = refusedCaller(opts, req, caller);
      if (refused) return refused;
      const owner = sessionOwner(caller, client);
      switch (req.method) {
        case 'POST':
          return post(opts, req, caller, owner);
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

/**
 * Whom a session belongs to. Anonymous callers are one principal elsewhere, but their sessions are
 * told apart by address: another address cannot use or end them, and its initialize flood recycles
 * only its own share (sessionsPerPrincipal), not theirs.
 */
const sessionOwner = (caller: Principal, client: string): string =>
  isAuthenticated(caller) ? ownerKey(caller) : `anonymous@${client}`;

/** The refusal of every method: another origin, an anonymous caller where none may come, an unknown protocol version. */
function refusedCaller(
  opts: McpHttpOptions,
  req: Request,
  caller: Principal,
): Response | undefined {
  const origin = req.headers.get('origin');
  if (origin !== null && !opts.allowedOrigin(origin))
    return refuse(
      statusOf('FORBIDDEN_ORIGIN'),
      rpcError(RPC.INVALID_REQUEST, 'requests from another origin are refused', 'FORBIDDEN_ORIGIN'),
    );
  if (!isAuthenticated(caller) && !opts.anonymousAllowed)
    return refuse(
      statusOf('UNAUTHENTICATED'),
      rpcError(RPC.INVALID_REQUEST, 'send a bearer token', 'UNAUTHENTICATED'),
      { 'www-authenticate': 'Bearer realm="lume-a2a"' },
    );
  // A POST's revision is read with its body (lib/mcp/http-post.ts): the stateless one is there.
  const version = req.method === 'POST' ? null : req.headers.get(VERSION_HEADER);
  if (version !== null && !MCP_PROTOCOL_VERSIONS.includes(version))
    return bad(
      'MCP_BAD_PROTOCOL_VERSION',
      `unsupported MCP-Protocol-Version; served: ${MCP_PROTOCOL_VERSIONS.join(', ')}`,
    );
  return undefined;
}
