/**
 * @module lib/agents/mesh-tools — the mesh as tools for a model: `a2a_peers`, `a2a_message` and
 * `a2a_history`, as JSON-schema function definitions (the hub serves them at `GET /api/mesh/tools`),
 * and `meshToolsFor`, which gives the tools a caller may use, acting as that caller: the principal
 * whose message the model answers decides, never the node's own credentials (docs/security.md).
 * Attachments are files inside the node's data folder or inline base64 (agents/mesh-attachments.ts).
 */

import type { Principal } from '../auth/principal.ts';
import { mayWrite } from '../auth/scopes.ts';
import type { MeshMessage } from '../mesh/wire.ts';
import { decodeText } from '../mesh/payload.ts';
import type { AgentTool } from './model-agent.ts';
import type { ToolDefinition } from '../model/chat.ts';
import { readOnly, type MeshActor } from './mesh-actors.ts';
import { ATTACHMENT_SCHEMA, modelAttachments } from './mesh-attachments.ts';

export const MESH_TOOL_DEFINITIONS: readonly ToolDefinition[] = Object.freeze([
  {
    name: 'a2a_peers',
    description:
      'List the exact roster names currently present in this mesh project (yourself excluded).',
    parameters: { type: 'object', properties: {}, additionalProperties: false },
  },
  {
    name: 'a2a_message',
    description:
      'Send a message to one current peer (target {"type":"agent","name":…}) or to every current peer (target {"type":"project"}). The reply arrives later as a message of its own: do not wait or poll after sending.',
    parameters: {
      type: 'object',
      properties: {
        target: {
          type: 'object',
          properties: {
            type: { type: 'string', enum: ['agent', 'project'] },
            name: { type: 'string', description: 'Roster name, for type agent' },
          },
          required: ['type'],
          additionalProperties: false,
        },
        text: { type: 'string', description: 'The message', maxLength: 16000 },
        attachments: {
          type: 'array',
          maxItems: 8,
          description:
            "Files: {path} inside this node's data folder, or {name, base64} inline; 8 at most, 4 MiB with the text",
          items: ATTACHMENT_SCHEMA,
        },
        replyTo: {
          type: 'string',
          description: 'The ref of the message this answers (project:sequence)',
        },
        messageId: {
          type: 'string',
          description: 'Idempotency key: sending the same id again does not send twice',
        },
      },
      required: ['target', 'text'],
      additionalProperties: false,
    },
  },
  {
    name: 'a2a_history',
    description:
      'Earlier messages of this project (past context only), newest last: page with before/after (message refs), at most limit, or only those from one name.',
    parameters: {
      type: 'object',
      properties: {
        before: { type: 'string' },
        after: { type: 'string' },
        limit: { type: 'integer', minimum: 1, maximum: 100 },
        from: { type: 'string' },
      },
      additionalProperties: false,
    },
  },
]);

const str = (v: unknown) => (typeof v === 'string' && v ? v : undefined);
const bad = (message: string) => ({ ok: false as const, error: { code: 'BAD_ARGS', message } });
const coded = (e: { code: string; message: string }) => ({
  ok: false as const,
  error: { code: e.code, message: e.message },
});

/** A message as a model reads it: who, to whom, when, what. */
const line = (m: MeshMessage) => ({
  ref: m.messageRef,
  from: m.from.name,
  to: m.target.type === 'agent' ? m.target.name : '*',
  at: new Date(m.createdAt).toISOString(),
  text: decodeText(m.payload).slice(0, 2000),
  ...(m.replyTo ? { replyTo: m.replyTo } : {}),
  ...(m.attachments.length ? { files: m.attachments.map((a) => a.name) } : {}),
});

export interface MeshToolOptions {
  /** Where `{path}` attachments must lie (the node's data folder); absent: inline ones only. */
  dataDir?: string;
}

/** The tools of one actor: `a2a_message` only when the actor may send. */
export function meshTools(actor: MeshActor, o: MeshToolOptions = {}): AgentTool[] {
  const [peers, message, history] = MESH_TOOL_DEFINITIONS as [
    ToolDefinition,
    ToolDefinition,
    ToolDefinition,
  ];
  const tools: AgentTool[] = [
    {
      definition: peers,
      access: { id: 'mesh.peers', readOnly: true },
      run: async () => {
        const r = await actor.peers();
        return r.ok ? { ok: true, result: r.result } : coded(r.error);
      },
    },
  ];
  const send = actor.send;
  if (send)
    tools.push({
      definition: message,
      access: { id: 'mesh.message', readOnly: false },
      run: async (args) => {
        const target = args.target as { type?: unknown; name?: unknown } | undefined;
        const text = typeof args.text === 'string' ? args.text : undefined;
        if (!text) return bad('text is required');
        if (!target || (target.type !== 'agent' && target.type !== 'project'))
          return bad('target.type must be agent or project');
        if (target.type === 'agent' && !str(target.name))
          return bad('target.name is required for type agent');
        const files = await modelAttachments(args.attachments, Buffer.byteLength(text), o.dataDir);
        if (!files.ok) return coded(files.error);
        const r = await send({
          target:
            target.type === 'agent'
              ? { type: 'agent', name: str(target.name)! }
              : { type: 'project' },
          text,
          attachments: files.result,
          ...(str(args.replyTo) ? { replyTo: str(args.replyTo)! } : {}),
          ...(str(args.messageId) ? { messageId: str(args.messageId)! } : {}),
        });
        return r.ok
          ? { ok: true, result: { ...r.result, attachments: files.result.length } }
          : coded(r.error);
      },
    });
  tools.push({
    definition: history,
    access: { id: 'mesh.history', readOnly: true },
    run: async (args) => {
      const limit =
        typeof args.limit === 'number' && Number.isInteger(args.limit)
          ? Math.min(Math.max(args.limit, 1), 100)
          : 20;
      const r = await actor.history({
        limit,
        ...(str(args.before) ? { before: str(args.before)! } : {}),
        ...(str(args.after) ? { after: str(args.after)! } : {}),
        ...(str(args.from) ? { from: str(args.from)! } : {}),
      });
      return r.ok ? { ok: true, result: { messages: r.result.map(line) } } : coded(r.error);
    },
  });
  return tools;
}

/** How a caller may use the mesh through an agent: every tool, reading only, or nothing. */
export type MeshToolGrant = 'all' | 'read' | 'none';

/**
 * The one rule (docs/security.md, "A model's tools act for its caller"): an authenticated caller
 * gets every tool through the agent's presence (an issuer's user only with a2a.write or a2a.exec;
 * with a2a.read alone it reads); the agent answering its own mesh inbox (the
 * caller is the node itself) reads through its presence, since the sender is a member of the
 * project, but never sends (its answer is posted for it); an anonymous caller reads as nobody,
 * which on a hub that requires a principal is nothing.
 */
function meshGrant(caller: Principal, self: string): MeshToolGrant {
  if (caller.kind === 'anonymous') return 'read';
  // An issuer's user without a2a.write (or a2a.exec) reads; sending changes state.
  if (!mayWrite(caller)) return 'read';
  if (caller.kind === 'node' && caller.name === self) return 'read';
  return 'all';
}

export interface MeshAccess extends MeshToolOptions {
  /** The agent's roster name (and node name): a caller that is the node itself is its inbox. */
  self: string;
  /** The agent's presence: what an authenticated caller acts through. */
  presence: MeshActor;
  /** What an anonymous caller reads through (no credentials); absent: anonymous callers get none. */
  anonymous?: MeshActor;
}

/** The mesh tools `caller` may use, each acting as that caller (see `meshGrant`). */
export function meshToolsFor(caller: Principal, access: MeshAccess): AgentTool[] {
  const grant = meshGrant(caller, access.self);
  if (grant === 'all') return meshTools(access.presence, access);
  if (caller.kind !== 'anonymous') return meshTools(readOnly(access.presence), access);
  return access.anonymous ? meshTools(readOnly(access.anonymous), access) : [];
}
