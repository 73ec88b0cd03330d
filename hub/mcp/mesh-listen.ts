/**
 * @module hub/mcp/mesh-listen — the mesh for MCP 2026-07-28 clients, which have no session: a
 * principal is present in the mesh (under its name, as hub/mcp/mesh-presence.ts does for a
 * session) while it holds a `subscriptions/listen` stream subscribed to its inbox,
 * `lume://mesh/inbox`. Each message the presence receives goes to each such stream of that
 * principal as `notifications/resources/updated` for the inbox, the message itself in `_meta`
 * under `lume-a2a/meshMessage`; reading the inbox gives the newest ones. The presence leaves with
 * the principal's last such stream. An anonymous caller has no name to be present under and is
 * refused. No stream keeps history (the revision has no SSE resumption): each message carries its
 * mesh ref, and a client that listens again reads what it missed with `a2a_history` `after` it.
 */

import { isAuthenticated, ownerKey, type Principal } from '../../lib/auth/principal.ts';
import { bearerOf } from '../../lib/auth/access.ts';
import { presenceActor } from '../../lib/agents/mesh-actors.ts';
import { meshTools } from '../../lib/agents/mesh-tools.ts';
import type { AgentTool } from '../../lib/agents/model-agent.ts';
import type { Log } from '../../lib/log.ts';
import { createMeshClient, type InboundMessage, type MeshClient } from '../../lib/mesh/client.ts';
import type { ListenHook } from '../../lib/mcp/http-stateless.ts';
import {
  errorResult,
  okResult,
  RPC,
  type McpResource,
  type ResourceContents,
  type ToolResult,
} from '../../lib/mcp/protocol.ts';
import { joinUnderName } from '../mesh/principal-presence.ts';

const MESH_INBOX_URI = 'lume://mesh/inbox';
/** Where a received message rides on its notification. */
const MESSAGE_META = 'lume-a2a/meshMessage';
/** Messages the inbox resource keeps per presence (the newest). */
const INBOX_MESSAGES = 32;
const TEXT_CHARS = 16_000;

export interface MeshListenDeps {
  /** Where the hub itself is reached (known once it listens). */
  hubUrl: () => string | undefined;
  project: string;
  log: Log;
}

type Tell = (method: string, params: Record<string, unknown>) => void;

/** One principal's presence: joined once, shared by its inbox streams, gone with the last. */
interface Held {
  agentId: string;
  client?: MeshClient;
  tools: AgentTool[];
  name?: string;
  tells: Set<Tell>;
  inbox: Record<string, unknown>[];
  ready: Promise<string | undefined>;
  left: boolean;
}

const line = (m: InboundMessage) => ({
  ref: m.message.messageRef,
  from: m.message.from.name,
  to: m.message.target.type === 'agent' ? m.message.target.name : '*',
  at: new Date(m.message.createdAt).toISOString(),
  text: m.text.slice(0, TEXT_CHARS),
  ...(m.message.replyTo ? { replyTo: m.message.replyTo } : {}),
});

const NOT_LISTENING = `open subscriptions/listen with resourceSubscriptions ["${MESH_INBOX_URI}"] to be present in the mesh (or use a 2025-11-25 session)`;

const noMesh = (message: string) => ({
  refuse: { rpc: RPC.INTERNAL_ERROR, code: 'MCP_NO_MESH', message },
});

/** Joins `caller`'s presence under its name; `ready` says why not, when it could not. */
function hold(deps: MeshListenDeps, caller: { name: string }, token?: string): Held {
  const h: Held = {
    agentId: `mcp-listen-${crypto.randomUUID()}`,
    tools: [],
    tells: new Set(),
    inbox: [],
    left: false,
    ready: Promise.resolve(undefined),
  };
  h.ready = (async () => {
    const url = deps.hubUrl();
    if (!url) return 'the hub is not listening yet';
    const client = createMeshClient({
      hubUrl: url,
      ...(token ? { token } : {}),
      log: deps.log,
      onInbound: (m) => {
        const message = line(m);
        h.inbox.push(message);
        if (h.inbox.length > INBOX_MESSAGES) h.inbox.shift();
        for (const tell of h.tells)
          tell('notifications/resources/updated', {
            uri: MESH_INBOX_URI,
            _meta: { [MESSAGE_META]: message },
          });
      },
    });
    h.client = client;
    const joined = await joinUnderName(client, h.agentId, deps.project, caller.name);
    if (!joined.ok) return joined.error.message;
    h.name = joined.result;
    h.tools = meshTools(presenceActor(client, h.agentId));
    return undefined;
  })();
  return h;
}

export function createMeshListens(deps: MeshListenDeps) {
  /** By owner key; at most one per principal, and only while one of its streams is open. */
  const held = new Map<string, Held>();

  function leave(key: string, h: Held): void {
    if (h.left) return;
    h.left = true;
    if (held.get(key) === h) held.delete(key);
    if (h.client) void h.client.disconnect(h.agentId);
  }

  /** The hook of lib/mcp/http-stateless.ts: a stream subscribed to the inbox holds the presence. */
  const onListen: ListenHook = async ({ uris, caller, req }) => {
    if (!uris.has(MESH_INBOX_URI)) return undefined;
    if (caller.kind === 'anonymous')
      return {
        refuse: {
          rpc: RPC.INVALID_REQUEST,
          code: 'UNAUTHENTICATED',
          message: 'the mesh inbox is a principal’s: send a bearer token',
        },
      };
    const key = ownerKey(caller);
    const token = bearerOf(req);
    for (let tries = 0; tries < 2; tries++) {
      let h = held.get(key);
      if (!h) held.set(key, (h = hold(deps, caller, token ? token : undefined)));
      const why = await h.ready;
      if (why !== undefined) {
        if (h.tells.size === 0) leave(key, h);
        return noMesh(why);
      }
      // It left while this stream waited for its join (the last other stream ended): join anew.
      if (h.left) continue;
      return {
        attach(tell) {
          h.tells.add(tell);
          return () => {
            h.tells.delete(tell);
            if (h.tells.size === 0) leave(key, h);
          };
        },
      };
    }
    return noMesh('the presence left; listen again');
  };

  return {
    onListen,
    /** A mesh tool call of a caller with no session, through its listening presence. */
    async call(
      name: string,
      args: Record<string, unknown>,
      caller: Principal,
    ): Promise<ToolResult> {
      const h = isAuthenticated(caller) ? held.get(ownerKey(caller)) : undefined;
      if (!h || h.left || (await h.ready) !== undefined)
        return errorResult('MCP_NO_MESH', NOT_LISTENING);
      const tool = h.tools.find((t) => t.definition.name === name);
      if (!tool) return errorResult('MCP_NO_MESH', NOT_LISTENING);
      const r = await tool.run(args, AbortSignal.timeout(10_000));
      return r.ok ? okResult(r.result) : errorResult(r.error.code, r.error.message);
    },
    /** The inbox as a resource of a principal's stateless calls. */
    list(caller: Principal, inSession: boolean): McpResource[] {
      if (inSession || !isAuthenticated(caller)) return [];
      return [
        {
          uri: MESH_INBOX_URI,
          name: 'mesh inbox',
          title: 'Messages to you in the mesh',
          description: `The newest ${INBOX_MESSAGES} messages your mesh presence received; you are present while a subscriptions/listen stream of yours subscribes to this URI`,
          mimeType: 'application/json',
        },
      ];
    },
    /** undefined: not the inbox, or the caller has none (anonymous). */
    read(uri: string, caller: Principal): ResourceContents | undefined {
      if (uri !== MESH_INBOX_URI || !isAuthenticated(caller)) return undefined;
      const h = held.get(ownerKey(caller));
      const present = h && !h.left && h.name !== undefined;
      return {
        uri,
        mimeType: 'application/json',
        text: JSON.stringify({
          presence: present ? h.name : null,
          messages: present ? h.inbox : [],
        }),
      };
    },
    close(): void {
      for (const [key, h] of [...held]) leave(key, h);
    },
  };
}
