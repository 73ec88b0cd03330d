/**
 * @module lib/mcp/http-refusals — how MCP's Streamable HTTP transport refuses a request: a
 * JSON-RPC error without an id under the HTTP status its registry code has, the checks of the
 * `Accept` header and of the session a request names, and the answer to a method the endpoint
 * does not take.
 */

import type { McpErrorCode } from '../errors/mcp.ts';
import { statusOf } from '../errors/registry.ts';
import { fail, ok, type Failure, type Result } from '../errors/result.ts';
import { failure, rpcError, type RpcError } from './jsonrpc.ts';
import { RPC } from './protocol.ts';
import type { McpSession, McpSessions } from './sessions.ts';

export const SESSION_HEADER = 'mcp-session-id';
export const JSON_HEADERS = { 'content-type': 'application/json', 'cache-control': 'no-store' };

/** A refusal before any session: a JSON-RPC error without an id, with the HTTP status the transport asks for. */
export const refuse = (status: number, error: RpcError, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(failure(null, error)), {
    status,
    headers: { ...JSON_HEADERS, ...headers },
  });

/** A refusal with its code's registry status. */
export const bad = (reason: McpErrorCode | 'METHOD_NOT_ALLOWED', message: string) =>
  refuse(statusOf(reason), rpcError(RPC.INVALID_REQUEST, message, reason));

/** Whether the request's `Accept` lists `type` (parameters aside). */
export const accepts = (req: Request, type: string) =>
  (req.headers.get('accept') ?? '')
    .toLowerCase()
    .split(',')
    .some((t) => t.split(';')[0]!.trim() === type);

/** The caller's session named by the header; another caller's session is unknown. */
export function sessionOf(
  sessions: McpSessions,
  req: Request,
  owner: string,
): Result<McpSession, Failure<'MCP_SESSION_REQUIRED' | 'MCP_UNKNOWN_SESSION'>> {
  const id = req.headers.get(SESSION_HEADER);
  if (id === null)
    return fail('MCP_SESSION_REQUIRED', 'send the Mcp-Session-Id header that initialize answered');
  const s = /^[\x21-\x7e]{1,128}$/.test(id) ? sessions.find(id, owner) : undefined;
  return s ? ok(s) : fail('MCP_UNKNOWN_SESSION', 'no such session: initialize again');
}

export function methodNotAllowed(): Response {
  const r = bad('METHOD_NOT_ALLOWED', 'the MCP endpoint takes POST, GET and DELETE');
  r.headers.set('allow', 'POST, GET, DELETE');
  return r;
}
