/**
 * @module lib/mcp/endpoint — a whole MCP endpoint from a server's definition: its sessions, its
 * methods (lib/mcp/server.ts) and its Streamable HTTP transport (lib/mcp/http.ts), bounded by
 * MCP_LIMITS. A node that serves MCP at `/mcp` (lib/node/) is made of one; the hub builds its own
 * (hub/mcp/surface.ts) because its sessions also hold mesh presences.
 */

import type { Principal } from '../auth/principal.ts';
import type { SseStreams } from '../sse/sse.ts';
import { createMcpHttp } from './http.ts';
import { MCP_LIMITS, type McpLimits } from './limits.ts';
import { createMcpServer } from './server.ts';
import type { McpServerOptions } from './server-types.ts';
import { McpSessions } from './sessions.ts';

/** What a node declares to serve MCP: its server's tools, resources, prompts, … */
export type McpDefinition = Omit<McpServerOptions, 'limits'>;

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
  const server = createMcpServer({ ...o.definition, limits });
  const http = createMcpHttp({
    server,
    sessions,
    limits,
    allowedOrigin: o.allowedOrigin,
    anonymousAllowed: o.anonymousAllowed,
    ...(o.streams ? { streams: o.streams } : {}),
  });
  return { fetch: http.fetch, close: () => sessions.endAll() };
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
