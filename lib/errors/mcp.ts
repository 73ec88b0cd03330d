/**
 * @module lib/errors/mcp — codes of the hub's MCP endpoint (lib/mcp/, hub/mcp/): carried in a JSON-RPC
 * error's `data.code` or a tool result's `error.code`; the status is what the Streamable HTTP
 * transport answers for it.
 */

import type { ErrorSpec } from './spec.ts';

export const MCP_ERRORS = {
  MCP_BAD_JSON: { http: 400, message: 'the body is not valid JSON' },
  MCP_BATCH: { http: 400, message: 'MCP takes one JSON-RPC message per request' },
  MCP_BAD_MESSAGE: { http: 400, message: 'not a JSON-RPC 2.0 message' },
  MCP_BAD_PARAMS: { http: 400, message: 'malformed params' },
  MCP_ARGS_TOO_LARGE: { http: 413, message: "a tool call's arguments are too large" },
  MCP_TOO_LARGE: { http: 413, message: 'the message is too large' },
  MCP_NOT_ACCEPTABLE: {
    http: 406,
    message: 'Accept must list application/json and text/event-stream',
  },
  MCP_NOT_JSON: { http: 415, message: 'Content-Type must be application/json' },
  MCP_BAD_PROTOCOL_VERSION: { http: 400, message: 'unsupported MCP-Protocol-Version' },
  MCP_SESSION_REQUIRED: { http: 400, message: 'the Mcp-Session-Id header is missing' },
  MCP_UNKNOWN_SESSION: { http: 404, message: 'no such MCP session' },
  MCP_ALREADY_INITIALIZED: { http: 400, message: 'the session is already initialized' },
  MCP_SESSIONS_FULL: { http: 503, message: 'too many MCP sessions are open' },
  MCP_STREAM_OPEN: { http: 409, message: 'the session already has its stream open' },
  MCP_UNKNOWN_METHOD: { http: 404, message: 'no such MCP method' },
  MCP_UNKNOWN_TOOL: { http: 404, message: 'no such tool for this caller' },
  MCP_UNKNOWN_RESOURCE: { http: 404, message: 'no such resource' },
  MCP_UNKNOWN_PROMPT: { http: 404, message: 'no such prompt' },
  MCP_TOO_MANY_SUBSCRIPTIONS: {
    http: 400,
    message: 'the session subscribes to as many resources as it may',
  },
  MCP_CLIENT_CANNOT: {
    http: 400,
    message: 'the client did not declare the capability this request of the server needs',
  },
  MCP_CLIENT_REFUSED: { http: 400, message: 'the client refused a request of the server' },
  MCP_CLIENT_TIMEOUT: { http: 504, message: 'the client did not answer a request of the server' },
  MCP_CLIENT_BUSY: { http: 429, message: 'too many requests of the server wait on this client' },
  MCP_LISTENERS_FULL: { http: 503, message: 'too many subscription streams are open' },
  MCP_TOO_MANY_LISTENERS: {
    http: 429,
    message: 'this principal holds as many subscription streams as it may',
  },
  MCP_HEADER_MISMATCH: {
    http: 400,
    message: 'an MCP header is missing or disagrees with the body (-32020)',
  },
  MCP_BAD_META: {
    http: 400,
    message: "_meta lacks the revision or the client's capabilities",
  },
  MCP_MIXED_REVISIONS: {
    http: 400,
    message: "a request mixes a session revision's form with the stateless one",
  },
  MCP_MISSING_CAPABILITY: {
    http: 400,
    message: 'the request needs a client capability the client did not declare (-32021)',
  },
  MCP_UNKNOWN_TASK: {
    http: 400,
    message: "no such task of this principal (-32602; another principal's task answers the same)",
  },
  MCP_TOO_MANY_TASKS: {
    http: 429,
    message: 'the principal keeps as many unfinished tasks as it may (-32600)',
  },
  MCP_TASKS_FULL: {
    http: 503,
    message: 'the server keeps as many unfinished tasks as it may (-32600)',
  },
  MCP_TASK_RESULT_TOO_LARGE: {
    http: 413,
    message: "a task's result is too large to keep: the task is failed (-32603)",
  },
  MCP_NO_MESH: { http: 503, message: 'the mesh presence of this caller is not connected' },
} as const satisfies Record<string, ErrorSpec>;

export type McpErrorCode = keyof typeof MCP_ERRORS;
