/**
 * @module lib/catalog/keyword-agent — the agent of a node without a model: a data part
 * `{"skill": …, "args": …}` calls that capability; a text message picks a read-only capability by
 * keyword. Missing or wrong arguments pause the task for input, so the client can continue it.
 * A failed or rejected task carries its code as data in the status message (lib/errors/as-data.ts).
 */

import type { Agent, AgentContext } from '../a2a/agent.ts';
import { failureParts } from '../errors/as-data.ts';
import type { Capability, Catalog } from './catalog.ts';

/** The `{"skill", "args"}` call a data part carries, if it is one. */
export function skillCall(data: unknown): { skill: string; args: unknown } | undefined {
  if (typeof data !== 'object' || data === null || Array.isArray(data)) return undefined;
  const d = data as Record<string, unknown>;
  return typeof d.skill === 'string' ? { skill: d.skill, args: d.args } : undefined;
}

export function catalogAgent(catalog: Catalog): Agent {
  const offer = () =>
    catalog.capabilities
      .filter((c) => c.readOnly)
      .map((c) => `${c.id} (${c.name})`)
      .join(', ');

  async function runCapability(ctx: AgentContext, cap: Capability, args: unknown): Promise<void> {
    const checked = catalog.checkArgs(cap, args);
    if (!checked.ok) {
      ctx.requireInput(
        `${cap.id}: ${checked.message}. Continue this task with a data part {"skill":"${cap.id}","args":{…}}.`,
      );
      return;
    }
    ctx.working(`Calling ${cap.id}`);
    const r = await catalog.invoke(cap.id, checked.args, ctx.signal, { caller: ctx.caller });
    if (!r.ok) {
      ctx.status('failed', failureParts(r.error));
      return;
    }
    const summary = cap.summarize?.(r.result) ?? `${cap.name}: done`;
    ctx.artifact(
      {
        name: cap.id,
        parts: [
          { data: r.result, mediaType: 'application/json' },
          { text: summary, mediaType: 'text/plain' },
        ],
      },
      { lastChunk: true },
    );
    ctx.complete(summary);
  }

  return {
    // Free text only ever picks a read-only capability; a data part naming another needs a principal.
    needsPrincipal(message) {
      const data = message.parts.find((p) => p.data !== undefined)?.data;
      const cap = catalog.find(skillCall(data)?.skill ?? '');
      return cap && !cap.readOnly ? `${cap.id} (it changes state or runs work)` : undefined;
    },
    async handle(ctx) {
      const call = skillCall(ctx.data);
      if (call) {
        const cap = catalog.find(call.skill);
        if (!cap) {
          const message = `Unknown skill ${call.skill}. This node offers: ${catalog.capabilities.map((c) => c.id).join(', ')}.`;
          return ctx.status('rejected', failureParts({ code: 'UNKNOWN_CAPABILITY', message }));
        }
        return runCapability(ctx, cap, call.args);
      }
      if (ctx.data !== undefined && !ctx.text)
        return ctx.requireInput(
          'A data part must look like {"skill": "<capability id>", "args": {…}}.',
        );
      const pick = catalog.pickByText(ctx.text);
      if (!pick)
        return ctx.requireInput(`Which do you want? This node can answer about: ${offer()}.`);
      return runCapability(ctx, pick.cap, pick.args);
    },
  };
}
