/**
 * @module lib/mcp/protocol — the Model Context Protocol as this project speaks it: the revisions
 * served (2025-11-25, the one the official TypeScript SDK speaks, and the two before it), the
 * JSON-RPC error codes, and the shapes of tools, tool results, content, resources and prompts.
 */
import { isPlainObject } from '../json/guards.ts';

/** The newest revision first; `initialize` answers the client's revision when it is listed, else the newest. */
export const MCP_PROTOCOL_VERSIONS = Object.freeze(['2025-11-25', '2025-06-18', '2025-03-26']);
export const MCP_LATEST_VERSION = MCP_PROTOCOL_VERSIONS[0]!;

/**
 * The stateless revisions (no `initialize`, no session: every request carries its revision and
 * the client's capabilities in `_meta`), served beside the session ones on the same endpoint.
 */
export const MCP_STATELESS_VERSIONS = Object.freeze(['2026-07-28']);

/** The `_meta` keys of the stateless revisions. */
export const META = Object.freeze({
  protocolVersion: 'io.modelcontextprotocol/protocolVersion',
  clientCapabilities: 'io.modelcontextprotocol/clientCapabilities',
  clientInfo: 'io.modelcontextprotocol/clientInfo',
  serverInfo: 'io.modelcontextprotocol/serverInfo',
  logLevel: 'io.modelcontextprotocol/logLevel',
  subscriptionId: 'io.modelcontextprotocol/subscriptionId',
});

/** MCP's log levels, least severe first (RFC 5424's syslog severities). */
export const LOG_LEVELS = Object.freeze([
  'debug',
  'info',
  'notice',
  'warning',
  'error',
  'critical',
  'alert',
  'emergency',
] as const);
export type LogLevel = (typeof LOG_LEVELS)[number];

/** JSON-RPC 2.0 error codes, and MCP's own for a resource that does not exist. */
export const RPC = Object.freeze({
  PARSE_ERROR: -32700,
  INVALID_REQUEST: -32600,
  METHOD_NOT_FOUND: -32601,
  INVALID_PARAMS: -32602,
  INTERNAL_ERROR: -32603,
  RESOURCE_NOT_FOUND: -32002,
  /** 2026-07-28: a header disagrees with the body, or a required one is missing. */
  HEADER_MISMATCH: -32020,
  /** 2026-07-28: the request needs a client capability the client did not declare. */
  MISSING_CLIENT_CAPABILITY: -32021,
  /** 2026-07-28: the revision asked for is not served (`data: {supported, requested}`). */
  UNSUPPORTED_PROTOCOL_VERSION: -32022,
});

/** MCP tool annotations (hints a harness shows or uses to ask before a call). */
export interface ToolAnnotations {
  title?: string;
  readOnlyHint?: boolean;
  destructiveHint?: boolean;
  idempotentHint?: boolean;
  openWorldHint?: boolean;
}

/** A JSON Schema of a tool's arguments: always an object. */
export interface InputSchema {
  type: 'object';
  properties?: Record<string, unknown>;
  required?: string[];
  additionalProperties?: boolean;
  [keyword: string]: unknown;
}

export interface McpTool {
  name: string;
  title?: string;
  description: string;
  inputSchema: InputSchema;
  annotations: ToolAnnotations;
}

export interface TextContent {
  type: 'text';
  text: string;
}

/** Base64 media: an image or a sound. */
export interface MediaContent {
  type: 'image' | 'audio';
  data: string;
  mimeType: string;
}

/** A resource's contents carried inside a result. */
export interface EmbeddedResource {
  type: 'resource';
  resource: ResourceContents;
}

/** What a tool result or a prompt message carries. */
export type ContentBlock = TextContent | MediaContent | EmbeddedResource;

/**
 * 2026-07-28's multi-round-trip answer: the method needs more from the client first
 * (`inputRequests`, by key, each an `elicitation/create`, `sampling/createMessage` or `roots/list`)
 * and is asked again with `inputResponses` under the same keys and the `requestState` echoed.
 */
export interface InputRequiredResult {
  resultType: 'input_required';
  inputRequests?: Record<string, { method: string; params: Record<string, unknown> }>;
  requestState?: string;
}

/** A tool's answer: its text for the model and the same value as structured content. */
export interface ToolResult {
  content: ContentBlock[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
  _meta?: Record<string, unknown>;
}

export interface McpResource {
  uri: string;
  name: string;
  title?: string;
  description?: string;
  mimeType: string;
}

/** A resource's contents: text, or bytes as base64 (`blob`). */
export type ResourceContents = { uri: string; mimeType: string } & (
  | { text: string }
  | { blob: string }
);

/** A family of resources named by an RFC 6570 URI template (`test://item/{id}`). */
export interface McpResourceTemplate {
  uriTemplate: string;
  name: string;
  title?: string;
  description?: string;
  mimeType?: string;
}

export interface McpPrompt {
  name: string;
  title?: string;
  description: string;
  arguments?: { name: string; description?: string; required?: boolean }[];
}

export interface PromptMessage {
  role: 'user' | 'assistant';
  content: ContentBlock;
}

/** A successful answer as a tool result: the value as text and as structured content. */
export function okResult(value: unknown): ToolResult {
  const structured = isPlainObject(value) ? (value as Record<string, unknown>) : { value };
  return {
    content: [{ type: 'text', text: JSON.stringify(value) }],
    structuredContent: structured,
  };
}

/** A coded failure as a tool result the model can read (`isError`), not a protocol error. */
export function errorResult(code: string, message: string, field?: string): ToolResult {
  const error = { ok: false, error: field ? { code, message, field } : { code, message } };
  return {
    content: [{ type: 'text', text: `${code}: ${message}` }],
    structuredContent: error,
    isError: true,
  };
}

/** What `completion/complete` refers to: a prompt's argument or a resource template's variable. */
export type CompletionRef =
  | { type: 'ref/prompt'; name: string }
  | { type: 'ref/resource'; uri: string };
