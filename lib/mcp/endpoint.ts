/**
 * @module lib/mcp/endpoint — a whole MCP endpoint from a server's definition: its sessions, its
 * methods (lib/mcp/server.ts) and its Streamable HTTP transport (lib/mcp/http.ts), bounded by
 * MCP_LIMITS (its task table too, when its tools may run as tasks). A node that serves MCP at `/mcp` (lib/node/) is made of one; the hub builds its own
 * (hub/mcp/surface.ts) because its sessions also hold mesh presences.
 */

import type { Principal } from '../auth/principal.ts';
import type { SseStreams } from '../sse/sse.ts';
import { createMcpHttp } from './http.ts';
import { MCP_LIMITS, type McpLimits } from './limits.ts';
import { createMcpServer } from './server.ts';
import type { McpServerOptions } from './server-types.ts';
import { McpSessions } from './sessions.ts';
import { createTaskTable } from './tasks.ts';

/**
 * What a node declares to serve MCP: its server's tools, resources, prompts, …, and whether its
 * tools may run as tasks (the tasks extension, with a task table bounded by the limits).
 */
export type McpDefinition = Omit<McpServerOptions, 'limits' | 'tasks'> & { tasks?: boolean };

export interface McpEndpointOptions {
  definition: McpDefinition;
  limits?: Partial<McpLimits>;
  allowedOrigin(origin: string): boolean;
  anonymousAllowed: boolean;
  streams?: SseStreams;
}

export interface McpEndpoint {
  fetch(req: Request, caller: Principal, client?: string): Promise<Response>;
  /** Ends every session (the process stops). */
  close(): Promise<void>;
}

export function createMcpEndpoint(o: McpEndpointOptions): McpEndpoint {
  const limits: McpLimits = { ...MCP_LIMITS, ...o.limits };
  const sessions = new McpSessions(limits);
  const { tasks: withTasks, ...definition } = o.definition;
  const tasks = withTasks ? createTaskTable(limits) : undefined;
  const server = createMcpServer({ ...definition, limits, ...(tasks ? { tasks } : {}) });
  const http = createMcpHttp({
    server,
    sessions,
    limits,
    allowedOrigin: o.allowedOrigin,
    anonymousAllowed: o.anonymousAllowed,
    ...(o.streams ? { streams: o.streams } : {}),
  });
  return {
    fetch: http.fetch,
    close: () => {
      tasks?.close();
      return sessions.endAll();
    },
  };
}

const LOOPBACK_NAMES = new Set(['127.0.0.1', 'localhost', '[::1]']);

/**
 * Whether a browser page of `origin` may talk to a server bound to `host`: the loopback names and
 * the bound or published host only (a page of another site whose name was rebound to this
 * address carries its own origin).
 */
export function ownHostOrigin(host: string, publicUrl?: string): (origin: string) => boolean {
  const names = new Set(LOOPBACK_NAMES);
  if (host !== '0.0.0.0' && host !== '::') names.add(host.includes(':') ? `[${host}]` : host);
  if (publicUrl) names.add(new URL(publicUrl).hostname);
  return (origin) => {
    try {
      const u = new URL(origin);
      return (u.protocol === 'http:' || u.protocol === 'https:') && names.has(u.hostname);
    } catch {
      return false;
    }
  };
}
