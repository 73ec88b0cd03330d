/**
 * @module lib/agents/model-agent — a node's model-backed agent: a text message goes to the node's model,
 * which plans over the node's own read-only capabilities (and any extra tools, such as the mesh)
 * by tool calling and then answers in words. When the model fails, is slow, or (in `dynamic`
 * mode) did not answer its last ping, the keyword agent answers instead, and the task says so
 * (`metadata.plannedBy`, `metadata.modelNote`). A data part `{skill, args}` always goes straight
 * to the catalog. The card is agent-backed exactly while the model answers. A tool runs only within
 * the caller's scopes (lib/auth/scopes.ts): an issuer's user is offered, and may run, only the tools
 * its token covers, so a model cannot do for a reader what the reader may not do itself.
 */

import { isPlainObject } from '../json/guards.ts';
import type { Agent, AgentContext } from '../a2a/agent.ts';
import type { Principal } from '../auth/principal.ts';
import { mayRun } from '../auth/scopes.ts';
import type { Capability, Catalog } from '../catalog/catalog.ts';
import { catalogAgent, skillCall } from './keyword-agent.ts';
import type { Result } from '../errors/result.ts';
import type { Log } from '../log.ts';
import { chat, type ChatMessage, type ModelEndpoint, type ToolDefinition } from '../model/chat.ts';
import type { ModelHealth } from '../model/health.ts';

/** A tool the model may call: its definition and what runs it (a coded result, never a throw for expected failures). */
export interface AgentTool {
  definition: ToolDefinition;
  /** What the tool does, for the caller's scopes: reads only, or changes state (`id` `exec.*`: runs work). */
  access: { id: string; readOnly: boolean };
  /** `caller`: whom the model acts for (the catalog checks its scopes again). */
  run(
    args: Record<string, unknown>,
    signal: AbortSignal,
    caller?: Principal,
  ): Promise<Result<unknown>>;
}

/** `model`: the model plans every message it can; `dynamic`: only while its last ping or call succeeded. */
export type ModelMode = 'model' | 'dynamic';

export interface ModelAgentOptions {
  name: string;
  description: string;
  catalog: Catalog;
  endpoint: ModelEndpoint;
  health: ModelHealth;
  mode: ModelMode;
  /** Tools besides the catalog's, the same for every caller. */
  tools?: AgentTool[];
  /** Tools that act as the caller whose message the model answers (the mesh tools: agents/mesh-tools.ts). */
  toolsFor?: (caller: Principal) => AgentTool[];
  /** Per model call (default 20 000 ms). */
  timeoutMs?: number;
  /** Model calls per message (default 4): tool rounds, then the answer. */
  maxSteps?: number;
  log: Log;
  fetch?: typeof fetch;
}

/** What one tool call did, as the answer reports it. */
interface CallRecord {
  tool: string;
  args: Record<string, unknown>;
  ok: boolean;
  errorCode?: string;
}

const MAX_TOOL_RESULT = 8_000;

/** Function names the API accepts: `lan.status` becomes `lan_status`. */
const toolName = (id: string) => id.replace(/[^a-zA-Z0-9_-]/g, '_').slice(0, 64);

/** JSON-schema parameters for a capability's argument specs. */
function parametersOf(cap: Capability): Record<string, unknown> {
  return {
    type: 'object',
    properties: Object.fromEntries(
      Object.entries(cap.args).map(([k, a]) => [
        k,
        { type: a.type, description: a.description, ...(a.enum ? { enum: a.enum } : {}) },
      ]),
    ),
    required: Object.entries(cap.args)
      .filter(([, a]) => a.required)
      .map(([k]) => k),
    additionalProperties: false,
  };
}

/** The node's read-only capabilities as tools; the catalog checks every call's arguments. */
export function catalogTools(catalog: Catalog): AgentTool[] {
  return catalog.capabilities
    .filter((c) => c.readOnly)
    .map((cap) => ({
      definition: {
        name: toolName(cap.id),
        description: `${cap.name}: ${cap.description}`.slice(0, 1024),
        parameters: parametersOf(cap),
      },
      access: { id: cap.id, readOnly: cap.readOnly },
      run: async (args, signal, caller) => {
        const r = await catalog.invoke(cap.id, args, signal, caller ? { caller } : undefined);
        return r.ok ? { ok: true, result: r.result } : { ok: false, error: r.error };
      },
    }));
}

/**
 * The lines a model reads above a message that came over the mesh (lib/node/mesh-inbox.ts puts
 * them in `metadata["lume/mesh"]`): its envelope header, then what else arrived in the
 * conversation since the agent last spoke. Empty for any other message.
 */
function meshEnvelope(metadata: Record<string, unknown> | undefined): string {
  const mesh = metadata?.['lume/mesh'] as { header?: unknown; context?: unknown } | undefined;
  if (!mesh || typeof mesh.header !== 'string') return '';
  const context = Array.isArray(mesh.context)
    ? mesh.context.filter((c): c is string => typeof c === 'string')
    : [];
  return [mesh.header, ...context.map((c) => `(earlier) ${c}`), ''].join('\n');
}

const parseArgs = (text: string): Record<string, unknown> | undefined => {
  try {
    const v: unknown = JSON.parse(text || '{}');
    return isPlainObject(v) ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
};

/** One tool call of the model: an unknown tool or arguments that are not an object are coded. */
function runCall(
  tool: AgentTool | undefined,
  name: string,
  args: Record<string, unknown> | undefined,
  ctx: AgentContext,
): Promise<Result<unknown>> | Result<unknown> {
  if (!tool)
    return { ok: false, error: { code: 'UNKNOWN_TOOL', message: `no tool named ${name}` } };
  if (!args)
    return { ok: false, error: { code: 'BAD_ARGS', message: 'arguments must be a JSON object' } };
  return tool.run(args, ctx.signal, ctx.caller);
}

export function modelAgent(o: ModelAgentOptions): Agent {
  const fallback = catalogAgent(o.catalog);
  const fixed = [...catalogTools(o.catalog), ...(o.tools ?? [])];
  const system = `You are the agent of the "${o.name}" node: ${o.description} Use the tools for facts, then answer the user in a few plain sentences and name the tools you used. Never invent data.`;

  /** The keyword agent answers; the task says why the model did not. */
  async function byKeywords(ctx: AgentContext, why: string): Promise<void> {
    ctx.setMetadata({ plannedBy: 'keywords', modelNote: why });
    ctx.working(`Answered by the keyword agent: ${why}`);
    await fallback.handle(ctx);
  }

  return {
    async handle(ctx) {
      if (skillCall(ctx.data) || !ctx.text.trim()) return fallback.handle(ctx);
      if (o.mode === 'dynamic' && !o.health.up)
        return byKeywords(ctx, 'the model did not answer its last ping');
      ctx.working(`Asking ${o.endpoint.model}`);
      // The caller's tools are made for this turn: they act as whoever sent this message.
      // Only what the caller's scopes cover is offered; a call to anything else is UNKNOWN_TOOL.
      const tools = [...fixed, ...(o.toolsFor?.(ctx.caller) ?? [])].filter((t) =>
        mayRun(ctx.caller, t.access),
      );
      const byName = new Map(tools.map((t) => [t.definition.name, t]));
      const messages: ChatMessage[] = [
        { role: 'system', content: system },
        { role: 'user', content: meshEnvelope(ctx.message.metadata) + ctx.text },
      ];
      const calls: CallRecord[] = [];
      const steps = o.maxSteps ?? 4;
      for (let step = 0; step < steps; step++) {
        // The last step offers no tools, so the model must answer in words.
        const offer = step < steps - 1 ? tools.map((t) => t.definition) : [];
        const r = await chat(
          o.endpoint,
          { messages, tools: offer, timeoutMs: o.timeoutMs ?? 20_000, signal: ctx.signal },
          o.fetch,
        );
        o.health.report(r.ok);
        if (!r.ok) {
          o.log('warn', 'model call failed; keyword agent answers', {
            node: o.name,
            code: r.error.code,
          });
          return byKeywords(ctx, `${r.error.code}: ${r.error.message}`);
        }
        const reply = r.result;
        if (!reply.toolCalls.length) {
          const answer = (reply.content ?? '').trim() || 'The model gave no answer.';
          ctx.setMetadata({ plannedBy: 'model', model: o.endpoint.model });
          ctx.artifact(
            {
              name: 'answer',
              parts: [
                { text: answer, mediaType: 'text/plain' },
                {
                  data: { plannedBy: 'model', model: o.endpoint.model, answer, calls },
                  mediaType: 'application/json',
                },
              ],
            },
            { lastChunk: true },
          );
          return ctx.complete();
        }
        messages.push({
          role: 'assistant',
          content: reply.content,
          tool_calls: reply.toolCalls.map((c) => ({
            id: c.id,
            type: 'function' as const,
            function: { name: c.name, arguments: c.arguments },
          })),
        });
        for (const c of reply.toolCalls) {
          const args = parseArgs(c.arguments);
          const out = await runCall(byName.get(c.name), c.name, args, ctx);
          calls.push({
            tool: c.name,
            args: args ?? {},
            ok: out.ok,
            ...(out.ok ? {} : { errorCode: out.error.code }),
          });
          messages.push({
            role: 'tool',
            tool_call_id: c.id,
            content: JSON.stringify(out).slice(0, MAX_TOOL_RESULT),
          });
        }
      }
      return byKeywords(ctx, `the model did not conclude within ${steps} steps`);
    },
  };
}
