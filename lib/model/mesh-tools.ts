/**
 * @module lib/model/mesh-tools — the mesh as tools for a model: `a2a_peers`, `a2a_message` and
 * `a2a_history`, as JSON-schema function definitions (the hub serves them at `GET /api/mesh/tools`)
 * and, for an agent with a mesh presence, the calls behind them. A model may not attach files:
 * an attachment is a local path, and a model naming paths could send anything the process reads.
 */

import type { MeshClient } from '../mesh/client.ts';
import type { MeshMessage } from '../mesh/wire.ts';
import { decodeText } from '../mesh/payload.ts';
import type { AgentTool } from './agent.ts';
import type { ToolDefinition } from './chat.ts';

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

/** A message as a model reads it: who, to whom, when, what. */
const line = (m: MeshMessage) => ({
  ref: m.messageRef,
  from: m.from.name,
  to: m.target.type === 'agent' ? m.target.name : '*',
  at: new Date(m.createdAt).toISOString(),
  text: decodeText(m.payload).slice(0, 2000),
  ...(m.replyTo ? { replyTo: m.replyTo } : {}),
});

/** The three tools for the agent `agentId`, which holds a presence through `client`. */
export function meshTools(client: MeshClient, agentId: string): AgentTool[] {
  const [peers, message, history] = MESH_TOOL_DEFINITIONS as [
    ToolDefinition,
    ToolDefinition,
    ToolDefinition,
  ];
  return [
    {
      definition: peers,
      run: async () => {
        const s = client.status(agentId);
        if (s?.state !== 'connected')
          return {
            ok: false,
            error: {
              code: 'A2A_CLIENT_CLOSED',
              message: `${agentId} is not connected to the mesh`,
            },
          };
        return {
          ok: true,
          result: { project: s.project, self: s.name, peers: client.peers(agentId) },
        };
      },
    },
    {
      definition: message,
      run: async (args) => {
        const target = args.target as { type?: unknown; name?: unknown } | undefined;
        const text = typeof args.text === 'string' ? args.text : undefined;
        if (!text) return bad('text is required');
        if (!target || (target.type !== 'agent' && target.type !== 'project'))
          return bad('target.type must be agent or project');
        if (target.type === 'agent' && !str(target.name))
          return bad('target.name is required for type agent');
        const r = await client.send(agentId, {
          target:
            target.type === 'agent'
              ? { type: 'agent', name: str(target.name)! }
              : { type: 'project' },
          text,
          ...(str(args.replyTo) ? { replyTo: str(args.replyTo)! } : {}),
          ...(str(args.messageId) ? { messageId: str(args.messageId)! } : {}),
        });
        return r.ok
          ? {
              ok: true,
              result: { ref: r.result.message.messageRef, recipients: r.result.recipients },
            }
          : { ok: false, error: { code: r.error.code, message: r.error.message } };
      },
    },
    {
      definition: history,
      run: async (args) => {
        const limit =
          typeof args.limit === 'number' && Number.isInteger(args.limit)
            ? Math.min(Math.max(args.limit, 1), 100)
            : 20;
        const r = await client.history(agentId, {
          limit,
          ...(str(args.before) ? { before: str(args.before)! } : {}),
          ...(str(args.after) ? { after: str(args.after)! } : {}),
          ...(str(args.from) ? { from: str(args.from)! } : {}),
        });
        return r.ok
          ? { ok: true, result: { messages: r.result.map(line) } }
          : { ok: false, error: { code: r.error.code, message: r.error.message } };
      },
    },
  ];
}
