/**
 * @module lib/mcp/server — the MCP methods over any transport: `initialize`, `ping`, the tools,
 * resources (templates and subscriptions too), prompts, completions and `logging/setLevel`,
 * answered from a toolbox, a shelf of resources and optionally a book of prompts and a completer
 * the caller provides (lib/mcp/server-types.ts); the capabilities `initialize` declares follow
 * what was provided. A malformed call is a JSON-RPC error with the project's code in
 * `error.data.code`; a tool's own failure is a tool result with `isError`, so the model reads it.
 * What each method does is lib/mcp/server-methods.ts, its parameters lib/mcp/server-params.ts.
 */

import { answer, failure, rpcError, type RpcAnswer, type RpcId } from './jsonrpc.ts';
import {
  MCP_LATEST_VERSION,
  MCP_PROTOCOL_VERSIONS,
  MCP_STATELESS_VERSIONS,
  RPC,
} from './protocol.ts';
import { methodRunner } from './server-methods.ts';
import type { McpCallContext, McpServerOptions } from './server-types.ts';
import { TASKS_EXTENSION } from './tasks.ts';

/** The revision to speak: the client's when served, else the newest (lifecycle §Version Negotiation). */
export function negotiateVersion(requested: unknown): string {
  return typeof requested === 'string' && MCP_PROTOCOL_VERSIONS.includes(requested)
    ? requested
    : MCP_LATEST_VERSION;
}

const notFound = (id: RpcId, method: string) =>
  failure(
    id,
    rpcError(
      RPC.METHOD_NOT_FOUND,
      `Method not found: ${method.slice(0, 64)}`,
      'MCP_UNKNOWN_METHOD',
    ),
  );

export function createMcpServer(opts: McpServerOptions) {
  const run = methodRunner(opts);

  return {
    /** Who the server is (`serverInfo`). */
    info: opts.info,

    /** What this server can do, as `initialize` declares it. */
    capabilities(): Record<string, unknown> {
      return {
        tools: { listChanged: true },
        resources: { listChanged: true, subscribe: opts.resources.subscribable === true },
        ...(opts.prompts ? { prompts: { listChanged: true } } : {}),
        ...(opts.completions ? { completions: {} } : {}),
        logging: {},
      };
    },

    /** The answer to `initialize` in the revision negotiated. */
    initializeResult(protocolVersion: string) {
      return {
        protocolVersion,
        capabilities: this.capabilities(),
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
      if (method === 'server/discover' && !ctx.session)
        return answer(id, {
          supportedVersions: [...MCP_STATELESS_VERSIONS, ...MCP_PROTOCOL_VERSIONS],
          capabilities: {
            ...this.capabilities(),
            // The tasks extension exists only in the stateless revision.
            ...(opts.tasks ? { extensions: { [TASKS_EXTENSION]: {} } } : {}),
          },
          ...(opts.instructions ? { instructions: opts.instructions } : {}),
        });
      if (method === 'initialize' && ctx.session)
        return failure(
          id,
          rpcError(
            RPC.INVALID_REQUEST,
            'this session is already initialized',
            'MCP_ALREADY_INITIALIZED',
          ),
        );
      try {
        return (await run(id, method, params, ctx)) ?? notFound(id, method);
      } catch (e) {
        opts.onError?.(method, e);
        return failure(id, rpcError(RPC.INTERNAL_ERROR, 'Internal error', 'INTERNAL'));
      }
    },
  };
}

export type McpServer = ReturnType<typeof createMcpServer>;
