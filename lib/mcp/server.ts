/**
 * @module lib/mcp/server — the MCP methods over any transport: `initialize`, `ping`, `tools/list`,
 * `tools/call`, `resources/list`, `resources/read`, `resources/templates/list` and
 * `logging/setLevel`, answered from a toolbox and a shelf of resources the caller provides. A
 * malformed call is a JSON-RPC error with the project's code in `error.data.code`; a tool's own
 * failure is a tool result with `isError`, so the model reads it.
 */

import { isPlainObject } from '../json/guards.ts';
import type { Principal } from '../auth/principal.ts';
import { jsonBytes } from '../limits.ts';
import { answer, failure, rpcError, type RpcAnswer, type RpcId } from './jsonrpc.ts';
import type { McpLimits } from './limits.ts';
import {
  MCP_LATEST_VERSION,
  MCP_PROTOCOL_VERSIONS,
  RPC,
  type McpResource,
  type McpTool,
  type ResourceContents,
  type ToolResult,
} from './protocol.ts';
import type { McpSession } from './sessions.ts';

export interface McpCallContext {
  session: McpSession;
  caller: Principal;
}

/** The tools one caller may see and call. */
export interface McpToolbox {
  list(ctx: McpCallContext): Promise<McpTool[]>;
  /** undefined: no tool of that name is offered to this caller. */
  call(
    name: string,
    args: Record<string, unknown>,
    ctx: McpCallContext,
  ): Promise<ToolResult | undefined>;
}

export interface McpShelf {
  list(ctx: McpCallContext): Promise<McpResource[]>;
  /** undefined: no such resource. */
  read(uri: string, ctx: McpCallContext): Promise<ResourceContents | undefined>;
}

export interface McpServerOptions {
  info: { name: string; title?: string; version: string };
  instructions?: string;
  tools: McpToolbox;
  resources: McpShelf;
  limits: Pick<McpLimits, 'argumentBytes'>;
  /** An unexpected error in a tool or resource (logged by the caller; the client gets a generic one). */
  onError?: (method: string, error: unknown) => void;
}

/** The revision to speak: the client's when served, else the newest (lifecycle §Version Negotiation). */
export function negotiateVersion(requested: unknown): string {
  return typeof requested === 'string' && MCP_PROTOCOL_VERSIONS.includes(requested)
    ? requested
    : MCP_LATEST_VERSION;
}

export function createMcpServer(opts: McpServerOptions) {
  const bad = (id: RpcId, message: string, reason: string) =>
    failure(id, rpcError(RPC.INVALID_PARAMS, message, reason));

  async function toolsCall(id: RpcId, p: Record<string, unknown>, ctx: McpCallContext) {
    if (typeof p.name !== 'string' || !p.name || p.name.length > 128)
      return bad(id, 'params.name must be a tool name', 'MCP_BAD_PARAMS');
    if (p.arguments !== undefined && !isPlainObject(p.arguments))
      return bad(id, 'params.arguments must be an object', 'MCP_BAD_PARAMS');
    const args = (p.arguments ?? {}) as Record<string, unknown>;
    if (jsonBytes(args) > opts.limits.argumentBytes)
      return bad(
        id,
        `arguments must be under ${opts.limits.argumentBytes} bytes as JSON`,
        'MCP_ARGS_TOO_LARGE',
      );
    const result = await opts.tools.call(p.name, args, ctx);
    if (!result) return bad(id, `Unknown tool: ${p.name.slice(0, 64)}`, 'MCP_UNKNOWN_TOOL');
    return answer(id, result);
  }

  async function resourcesRead(id: RpcId, p: Record<string, unknown>, ctx: McpCallContext) {
    if (typeof p.uri !== 'string' || !p.uri || p.uri.length > 512)
      return bad(id, 'params.uri must be a resource URI', 'MCP_BAD_PARAMS');
    const contents = await opts.resources.read(p.uri, ctx);
    if (!contents)
      return failure(
        id,
        rpcError(
          RPC.RESOURCE_NOT_FOUND,
          `Resource not found: ${p.uri.slice(0, 128)}`,
          'MCP_UNKNOWN_RESOURCE',
        ),
      );
    return answer(id, { contents: [contents] });
  }

  return {
    /** The answer to `initialize` in the revision negotiated. */
    initializeResult(protocolVersion: string) {
      return {
        protocolVersion,
        capabilities: {
          tools: { listChanged: true },
          resources: { listChanged: true, subscribe: false },
          logging: {},
        },
        serverInfo: opts.info,
        ...(opts.instructions ? { instructions: opts.instructions } : {}),
      };
    },

    /** Answers one request of an initialized session. */
    async handle(
      id: RpcId,
      method: string,
      params: Record<string, unknown>,
      ctx: McpCallContext,
    ): Promise<RpcAnswer> {
      try {
        switch (method) {
          case 'ping':
          case 'logging/setLevel':
            return answer(id, {});
          case 'initialize':
            return failure(
              id,
              rpcError(
                RPC.INVALID_REQUEST,
                'this session is already initialized',
                'MCP_ALREADY_INITIALIZED',
              ),
            );
          case 'tools/list':
            return answer(id, { tools: await opts.tools.list(ctx) });
          case 'tools/call':
            return await toolsCall(id, params, ctx);
          case 'resources/list':
            return answer(id, { resources: await opts.resources.list(ctx) });
          case 'resources/templates/list':
            return answer(id, { resourceTemplates: [] });
          case 'resources/read':
            return await resourcesRead(id, params, ctx);
          default:
            return failure(
              id,
              rpcError(
                RPC.METHOD_NOT_FOUND,
                `Method not found: ${method.slice(0, 64)}`,
                'MCP_UNKNOWN_METHOD',
              ),
            );
        }
      } catch (e) {
        opts.onError?.(method, e);
        return failure(id, rpcError(RPC.INTERNAL_ERROR, 'Internal error', 'INTERNAL'));
      }
    },
  };
}

export type McpServer = ReturnType<typeof createMcpServer>;
