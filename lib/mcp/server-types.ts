/**
 * @module lib/mcp/server-types — what an MCP server is made of (lib/mcp/server.ts): the context a
 * method runs in, the toolbox, the shelf of resources, the book of prompts, the completer, and the
 * options that gather them.
 */

import type { Principal } from '../auth/principal.ts';
import type { McpExchange } from './exchange.ts';
import type { McpLimits } from './limits.ts';
import type {
  CompletionRef,
  InputRequiredResult,
  McpPrompt,
  McpResource,
  McpResourceTemplate,
  McpTool,
  PromptMessage,
  ResourceContents,
  ToolResult,
} from './protocol.ts';
import type { McpSession } from './sessions.ts';
import type { TaskOffer, TaskTable } from './tasks.ts';

export interface McpCallContext {
  /** The 2025-11-25 session the request runs in; none over a stateless revision. */
  session?: McpSession;
  /** The revision this request speaks (a session's, or the one its `_meta` names). */
  revision: string;
  /** The HTTP request's headers, over the stateless revision (its `Mcp-Param-*` are checked). */
  headers?: Headers;
  caller: Principal;
  /** Whom the tasks this request makes belong to (default the caller's owner key). */
  owner?: string;
  /** What the method may say to the client while it answers (progress, logs, its own requests). */
  exchange: McpExchange;
}

/**
 * A call refused as the protocol says rather than answered as a tool error: its arguments or
 * state are invalid (-32602), or it needs a client capability the client did not declare (-32021).
 */
export type ToolRefusal =
  | { refuse: 'invalid-params'; message: string }
  | {
      refuse: 'missing-capability';
      message: string;
      requiredCapabilities: Record<string, object>;
    };

/** The tools one caller may see and call. */
export interface McpToolbox {
  list(ctx: McpCallContext): Promise<McpTool[]>;
  /** undefined: no tool of that name is offered to this caller. */
  call(
    name: string,
    args: Record<string, unknown>,
    ctx: McpCallContext,
  ): Promise<ToolResult | InputRequiredResult | ToolRefusal | TaskOffer | undefined>;
}

export interface McpShelf {
  list(ctx: McpCallContext): Promise<McpResource[]>;
  /** undefined: no such resource. */
  read(uri: string, ctx: McpCallContext): Promise<ResourceContents | undefined>;
  /** The URI templates of resources not listed one by one. */
  templates?(ctx: McpCallContext): Promise<McpResourceTemplate[]>;
  /** Whether clients may subscribe to a resource's changes (`resources/subscribe`). */
  subscribable?: boolean;
}

export interface McpPromptBook {
  list(ctx: McpCallContext): Promise<McpPrompt[]>;
  /** undefined: no such prompt; a string: the arguments are wrong (said to the client). */
  get(
    name: string,
    args: Record<string, string>,
    ctx: McpCallContext,
  ): Promise<
    { description?: string; messages: PromptMessage[] } | InputRequiredResult | string | undefined
  >;
}

export interface McpCompleter {
  complete(
    ref: CompletionRef,
    argument: { name: string; value: string },
    ctx: McpCallContext,
  ): Promise<{ values: string[]; total?: number; hasMore?: boolean }>;
}

export interface McpServerOptions {
  info: { name: string; title?: string; version: string };
  instructions?: string;
  tools: McpToolbox;
  resources: McpShelf;
  prompts?: McpPromptBook;
  completions?: McpCompleter;
  /** The task table of the tasks extension; without one no tool runs as a task. */
  tasks?: TaskTable;
  limits: Pick<McpLimits, 'argumentBytes' | 'subscriptions'>;
  /** An unexpected error in a tool or resource (logged by the caller; the client gets a generic one). */
  onError?: (method: string, error: unknown) => void;
}
