/**
 * @module hub/mcp/mesh-presence — the mesh tools (`a2a_peers`, `a2a_message`, `a2a_history`,
 * lib/agents/mesh-tools.ts) for an MCP session, acting as its principal: the session holds one mesh
 * presence named after the principal (`alice`, or `alice-2` … when that name is present already),
 * joined on the first mesh call with the session's own bearer token, left when the session ends.
 * A message sent to that presence reaches the MCP client as a `notifications/message` on its
 * stream; when that stream ends (the harness went away) the presence leaves too, and the next mesh
 * call joins again. A caller with no session (MCP 2026-07-28) speaks through the presence its
 * `subscriptions/listen` stream holds (hub/mcp/mesh-listen.ts). Anonymous callers have no name to
 * be present under: they get `a2a_peers` and `a2a_history` as nobody (what the hub shows anonymous callers; nothing on a hub that requires a
 * principal) and no `a2a_message`; nor has an issuer's user whose token carries a2a.read alone.
 */

import { isAuthenticated, type Principal } from '../../lib/auth/principal.ts';
import { mayWrite } from '../../lib/auth/scopes.ts';
import type { Log } from '../../lib/log.ts';
import { createMeshClient, type InboundMessage, type MeshClient } from '../../lib/mesh/client.ts';
import { errorResult, okResult, type McpTool, type ToolResult } from '../../lib/mcp/protocol.ts';
import type { McpSession, McpSessions } from '../../lib/mcp/sessions.ts';
import { createHubClient } from '../../lib/mesh/http-client.ts';
import { anonymousReader, presenceActor } from '../../lib/agents/mesh-actors.ts';
import { MESH_TOOL_DEFINITIONS, meshTools } from '../../lib/agents/mesh-tools.ts';
import type { AgentTool } from '../../lib/agents/model-agent.ts';
import { joinUnderName } from '../mesh/principal-presence.ts';
import { UNAUTHENTICATED_TOOL } from './fleet-tools.ts';

export interface McpMeshDeps {
  /** Where the hub itself is reached (known once it listens). */
  hubUrl: () => string | undefined;
  /** The mesh project MCP presences join (the hub's default project). */
  project: string;
  sessions: McpSessions;
  log: Log;
  /** The presences of callers with no session, held by their listen streams. */
  stateless: {
    call(name: string, args: Record<string, unknown>, caller: Principal): Promise<ToolResult>;
  };
}

const READ_ONLY = new Set(['a2a_peers', 'a2a_history']);
/** An issuer's user with a2a.read alone reads: sending changes state. */
const maySend = (caller: Principal) => isAuthenticated(caller) && mayWrite(caller);
const NO_SEND_SCOPE = (name: string) =>
  errorResult('INSUFFICIENT_SCOPE', `${name} needs the scope a2a.write`);

interface Presence {
  client: MeshClient;
  tools: AgentTool[];
}

/** A message the session's presence received, told to its MCP client as a log notification. */
function notifyInbound(
  sessions: McpMeshDeps['sessions'],
  session: McpSession,
  m: InboundMessage,
): void {
  sessions.notify(session, 'notifications/message', {
    level: 'info',
    logger: 'mesh',
    data: {
      ref: m.message.messageRef,
      from: m.message.from.name,
      to: m.message.target.type === 'agent' ? m.message.target.name : '*',
      text: m.text.slice(0, 16_000),
      ...(m.message.replyTo ? { replyTo: m.message.replyTo } : {}),
    },
  });
}

export function createMcpMesh(deps: McpMeshDeps) {
  const tokens = new WeakMap<McpSession, string>();
  const presences = new WeakMap<McpSession, Promise<Presence | ToolResult>>();

  const tools: McpTool[] = MESH_TOOL_DEFINITIONS.map((d) => ({
    name: d.name,
    description: `${d.description} (You are present in the mesh under your principal's name.)`,
    inputSchema: { ...d.parameters, type: 'object' },
    annotations: { readOnlyHint: READ_ONLY.has(d.name), openWorldHint: false },
  }));

  let reader: { url: string; tools: AgentTool[] } | undefined;
  /** The read-only tools as nobody: the hub's own mesh routes with no token. */
  function anonymousTools(): AgentTool[] | undefined {
    const url = deps.hubUrl();
    if (!url) return undefined;
    if (reader?.url !== url)
      reader = {
        url,
        tools: meshTools(anonymousReader(createHubClient({ baseUrl: url }), () => deps.project)),
      };
    return reader.tools;
  }

  const inbound = (session: McpSession, m: InboundMessage) =>
    notifyInbound(deps.sessions, session, m);

  async function join(
    session: McpSession,
    caller: Principal & { name: string },
  ): Promise<Presence | ToolResult> {
    const url = deps.hubUrl();
    if (!url) return errorResult('MCP_NO_MESH', 'the hub is not listening yet');
    const token = tokens.get(session);
    const client = createMeshClient({
      hubUrl: url,
      ...(token ? { token } : {}),
      log: deps.log,
      onInbound: (m) => inbound(session, m),
    });
    const leave = () => {
      presences.delete(session);
      for (const list of [session.cleanups, session.streamEnded]) {
        const at = list.indexOf(leave);
        if (at >= 0) list.splice(at, 1);
      }
      void client.disconnect(session.id);
    };
    session.cleanups.push(leave);
    session.streamEnded.push(leave);
    const joined = await joinUnderName(client, session.id, deps.project, caller.name);
    if (joined.ok) return { client, tools: meshTools(presenceActor(client, session.id)) };
    leave();
    return errorResult('MCP_NO_MESH', joined.error.message);
  }

  return {
    /** Remembers the bearer token a session was opened with: its presence joins the mesh with it. */
    attach(session: McpSession, token: string | undefined): void {
      if (token) tokens.set(session, token);
    },
    list(caller: Principal): McpTool[] {
      return maySend(caller) ? tools : tools.filter((t) => READ_ONLY.has(t.name));
    },
    /** undefined: not a mesh tool. */
    async call(
      name: string,
      args: Record<string, unknown>,
      session: McpSession | undefined,
      caller: Principal,
    ): Promise<ToolResult | undefined> {
      if (!tools.some((t) => t.name === name)) return undefined;
      if (caller.kind === 'anonymous') {
        if (!READ_ONLY.has(name)) return UNAUTHENTICATED_TOOL(name);
        const tool = anonymousTools()?.find((t) => t.definition.name === name);
        if (!tool) return errorResult('MCP_NO_MESH', 'the hub is not listening yet');
        const r = await tool.run(args, AbortSignal.timeout(10_000));
        return r.ok ? okResult(r.result) : errorResult(r.error.code, r.error.message);
      }
      if (!READ_ONLY.has(name) && !maySend(caller)) return NO_SEND_SCOPE(name);
      // No session (2026-07-28): the presence a subscriptions/listen stream holds (hub/mcp/mesh-listen.ts).
      if (!session) return deps.stateless.call(name, args, caller);
      let p = presences.get(session);
      if (!p) presences.set(session, (p = join(session, caller)));
      const presence = await p;
      // A failed join is not kept: the next call tries again.
      if (!('client' in presence)) {
        presences.delete(session);
        return presence;
      }
      const tool = presence.tools.find((t) => t.definition.name === name)!;
      const r = await tool.run(args, AbortSignal.timeout(10_000));
      return r.ok ? okResult(r.result) : errorResult(r.error.code, r.error.message);
    },
  };
}
