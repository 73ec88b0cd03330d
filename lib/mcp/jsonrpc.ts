/**
 * @module lib/mcp/jsonrpc — the JSON-RPC 2.0 envelopes of MCP: one message per body (MCP dropped
 * batches in 2025-06-18), told apart as a request, a notification or a response, and the answers
 * built for them. Every malformed message becomes an error value, never a throw.
 */

import { isPlainObject } from '../json/guards.ts';
import { parseJsonBody } from '../body.ts';
import { RPC } from './protocol.ts';

export type RpcId = string | number;

export type McpMessage =
  | { kind: 'request'; id: RpcId; method: string; params: Record<string, unknown> }
  | { kind: 'notification'; method: string; params: Record<string, unknown> }
  | { kind: 'response'; id: RpcId; answer: { result: unknown } | { error: unknown } };

export interface RpcError {
  code: number;
  message: string;
  /** The project's stable code, so a client need not parse the message. */
  data?: { code: string };
}

export type RpcAnswer =
  | { jsonrpc: '2.0'; id: RpcId; result: unknown }
  | { jsonrpc: '2.0'; id: RpcId | null; error: RpcError };

export type Parsed =
  | { ok: true; message: McpMessage }
  | { ok: false; error: RpcError; id: RpcId | null };

const isId = (v: unknown): v is RpcId =>
  (typeof v === 'string' && v.length > 0 && v.length <= 256) ||
  (typeof v === 'number' && Number.isSafeInteger(v));

export const rpcError = (code: number, message: string, reason?: string): RpcError => ({
  code,
  message,
  ...(reason ? { data: { code: reason } } : {}),
});

/** Reads one message from a body's text. */
export function parseMessage(text: string): Parsed {
  const parsed = parseJsonBody(text);
  if (!parsed.ok)
    return {
      ok: false,
      id: null,
      error: rpcError(
        RPC.PARSE_ERROR,
        parsed.error.message,
        parsed.error.code === 'BAD_JSON' ? 'MCP_BAD_JSON' : parsed.error.code,
      ),
    };
  const v = parsed.result;
  if (Array.isArray(v))
    return {
      ok: false,
      id: null,
      error: rpcError(
        RPC.INVALID_REQUEST,
        'send one JSON-RPC message per request: MCP has no batches since 2025-06-18',
        'MCP_BATCH',
      ),
    };
  if (!isPlainObject(v) || v.jsonrpc !== '2.0')
    return {
      ok: false,
      id: null,
      error: rpcError(RPC.INVALID_REQUEST, 'a JSON-RPC 2.0 object is expected', 'MCP_BAD_MESSAGE'),
    };
  const hasId = Object.hasOwn(v, 'id');
  if (hasId && !isId(v.id))
    return {
      ok: false,
      id: null,
      error: rpcError(RPC.INVALID_REQUEST, 'id must be a string or an integer', 'MCP_BAD_MESSAGE'),
    };
  const id = hasId ? (v.id as RpcId) : null;
  if (typeof v.method === 'string') {
    if (v.method.length === 0 || v.method.length > 128)
      return {
        ok: false,
        id,
        error: rpcError(RPC.INVALID_REQUEST, 'method must be a short string', 'MCP_BAD_MESSAGE'),
      };
    if (v.params !== undefined && !isPlainObject(v.params))
      return {
        ok: false,
        id,
        error: rpcError(RPC.INVALID_PARAMS, 'params must be an object', 'MCP_BAD_PARAMS'),
      };
    const params = (v.params ?? {}) as Record<string, unknown>;
    return {
      ok: true,
      message:
        id === null
          ? { kind: 'notification', method: v.method, params }
          : { kind: 'request', id, method: v.method, params },
    };
  }
  if (id !== null && Object.hasOwn(v, 'result'))
    return { ok: true, message: { kind: 'response', id, answer: { result: v.result } } };
  if (id !== null && isPlainObject(v.error))
    return { ok: true, message: { kind: 'response', id, answer: { error: v.error } } };
  return {
    ok: false,
    id,
    error: rpcError(RPC.INVALID_REQUEST, 'a request needs a method', 'MCP_BAD_MESSAGE'),
  };
}

export const answer = (id: RpcId, result: unknown): RpcAnswer => ({ jsonrpc: '2.0', id, result });
export const failure = (id: RpcId | null, error: RpcError): RpcAnswer => ({
  jsonrpc: '2.0',
  id,
  error,
});
