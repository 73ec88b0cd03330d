/**
 * @module lib/agents/keyword-agent — the agent of a node without a model: a data part
 * `{"skill": …, "args": …}` (or a text that is exactly that JSON) calls that capability; a text
 * message picks a read-only capability by keyword or by the identifiers it carries, with the
 * arguments the text gives it (lib/catalog/text-args.ts). A missing or ambiguous argument pauses
 * the task with a question in words; a text reply continues it. A failed or rejected task carries
 * its code as data in the status message (lib/errors/as-data.ts).
 */

import { isPlainObject } from '../json/guards.ts';
import type { Agent, AgentContext } from '../a2a/agent.ts';
import type { Message } from '../a2a/types.ts';
import { failureParts } from '../errors/as-data.ts';
import type { Capability, Catalog } from '../catalog/catalog.ts';
import { MAX_TEXT_CHARS } from '../catalog/text-args.ts';

/** Longest text read as a JSON skill call. */
const MAX_JSON_TEXT_CHARS = 64 * 1024;
/** The task metadata key that remembers which capability a question was asked for. */
const AWAITING = 'awaitingArgument';

/** The `{"skill", "args"}` call a data part carries, if it is one. */
export function skillCall(data: unknown): { skill: string; args: unknown } | undefined {
  if (!isPlainObject(data)) return undefined;
  const d = data as Record<string, unknown>;
  return typeof d.skill === 'string' ? { skill: d.skill, args: d.args } : undefined;
}

/**
 * The skill call a message makes: its first data part's, or its text's when the whole text is
 * that JSON object (what a client that sends only text can send, e.g. a card's example).
 */
export function callOf(
  message: Pick<Message, 'parts'>,
): { skill: string; args: unknown } | undefined {
  const data = message.parts.find((p) => p.data !== undefined)?.data;
  if (data !== undefined) return skillCall(data);
  const text = message.parts
    .map((p) => p.text)
    .filter((t) => typeof t === 'string')
    .join('\n')
    .trim();
  if (!text.startsWith('{') || !text.endsWith('}') || text.length > MAX_JSON_TEXT_CHARS)
    return undefined;
  try {
    return skillCall(JSON.parse(text));
  } catch {
    return undefined;
  }
}

/**
 * Calls `cap` with `args` once they check: its result becomes the task's artifact. The arguments
 * are checked once, here, so a refusal is a question about what was asked (the capability's own
 * failures fail the task); the capability runs once and its summary is the catalog's guarded one.
 */
async function runWith(
  catalog: Catalog,
  ctx: AgentContext,
  cap: Capability,
  args: unknown,
): Promise<void> {
  const checked = catalog.checkArgs(cap, args);
  if (!checked.ok) {
    ctx.requireInput(
      `${cap.id}: ${checked.error.message}. Continue this task with a data part {"skill":"${cap.id}","args":{…}}.`,
    );
    return;
  }
  ctx.working(`Calling ${cap.id}`);
  const r = await catalog.runChecked(cap, checked.result, ctx.signal, { caller: ctx.caller });
  if (!r.ok) {
    ctx.status('failed', failureParts(r.error));
    return;
  }
  const summary = r.summary ?? `${cap.name}: done`;
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
  // The answer is the artifact; a completed task's status repeats none of it.
  ctx.complete();
}

export function catalogAgent(catalog: Catalog): Agent {
  const offer = () =>
    catalog.capabilities
      .filter((c) => c.readOnly)
      .map((c) => `${c.id} (${c.name})`)
      .join(', ');

  const runCapability = (ctx: AgentContext, cap: Capability, args: unknown) =>
    runWith(catalog, ctx, cap, args);

  /** Asks for one argument of `cap`, remembering the text so the reply can complete it. */
  function ask(ctx: AgentContext, cap: Capability, question: string, text: string): void {
    ctx.setMetadata({ [AWAITING]: { skill: cap.id, text: text.slice(0, MAX_TEXT_CHARS) } });
    ctx.requireInput(`${cap.name} (${cap.id}): ${question}`);
  }

  /** A text reply to a question asked for `cap`: the first text, then the reply, together. */
  function reply(ctx: AgentContext, cap: Capability, first: string): Promise<void> | void {
    ctx.setMetadata({ [AWAITING]: null });
    const together = catalog.readFor(cap, `${first}\n${ctx.text}`);
    if (together.kind === 'call') return runCapability(ctx, cap, together.args);
    const alone = catalog.readFor(cap, ctx.text);
    if (alone.kind === 'call') return runCapability(ctx, cap, alone.args);
    // An argument no text can name by itself (free words): the reply is its value.
    const spec = together.kind === 'ask' ? cap.args[together.arg] : undefined;
    if (together.kind === 'ask' && spec?.type === 'string' && !spec.enum && !spec.pattern) {
      const rest = catalog.readFor(
        { ...cap, args: { ...cap.args, [together.arg]: { ...spec, required: false } } },
        first,
      );
      const args = rest.kind === 'call' ? rest.args : {};
      return runCapability(ctx, cap, { ...args, [together.arg]: ctx.text.trim() });
    }
    return ask(ctx, cap, together.kind === 'ask' ? together.question : 'Reply with it.', first);
  }

  return {
    // Free text only ever picks a read-only capability; a call naming another needs a principal.
    needsPrincipal(message) {
      const cap = catalog.find(callOf(message)?.skill ?? '');
      return cap && !cap.readOnly ? `${cap.id} (it changes state or runs work)` : undefined;
    },
    async handle(ctx) {
      const call = callOf(ctx.message);
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
      const awaiting = ctx.continued ? awaitingOf(ctx.task.metadata) : undefined;
      const asked = awaiting && catalog.find(awaiting.skill);
      if (asked && awaiting && ctx.text) return reply(ctx, asked, awaiting.text);
      const read = catalog.readText(ctx.text);
      switch (read.kind) {
        case 'call':
          return runCapability(ctx, read.cap, read.args);
        case 'ask':
          return ask(ctx, read.cap, read.question, ctx.text);
        case 'which':
          return ctx.requireInput(
            `That fits several: ${read.caps.map((c) => `${c.id} (${c.name})`).join(', ')}. Which do you want?`,
          );
        case 'too-long':
          return ctx.requireInput(
            `That message is ${ctx.text.length} characters; ask in at most ${MAX_TEXT_CHARS}, or send a data part {"skill": "<capability id>", "args": {…}}.`,
          );
        case 'none':
          return ctx.requireInput(`Which do you want? This node can answer about: ${offer()}.`);
      }
    },
  };
}

/** The question a task is waiting on, from its metadata, if it is well-formed. */
function awaitingOf(metadata: unknown): { skill: string; text: string } | undefined {
  const a = (metadata as Record<string, unknown> | undefined)?.[AWAITING] as
    | { skill?: unknown; text?: unknown }
    | undefined;
  return a && typeof a.skill === 'string' && typeof a.text === 'string'
    ? { skill: a.skill, text: a.text }
    : undefined;
}
