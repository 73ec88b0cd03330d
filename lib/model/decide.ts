/**
 * @module lib/model/decide — one structured decision from a model: the model is offered a single
 * function and must call it; its arguments are the decision. Used where a model takes a turn in a
 * protocol (the negotiation's advisor and customer's agent), whose own rules then check the decision.
 */

import { isPlainObject } from '../json/guards.ts';
import type { Result } from '../errors/result.ts';
import { chat, type ModelEndpoint, type ModelErrorCode, type ToolDefinition } from './chat.ts';

/** The decision's arguments, or why there is none: the endpoint failed, or the model did not call the function. */
export async function decide(
  endpoint: ModelEndpoint,
  req: {
    system: string;
    user: string;
    tool: ToolDefinition;
    timeoutMs?: number;
    fetch?: typeof fetch;
  },
): Promise<Result<Record<string, unknown>, { code: ModelErrorCode; message: string }>> {
  const r = await chat(
    endpoint,
    {
      messages: [
        { role: 'system', content: req.system },
        { role: 'user', content: req.user },
      ],
      tools: [req.tool],
      timeoutMs: req.timeoutMs ?? 8_000,
    },
    req.fetch,
  );
  if (!r.ok) return r;
  const call = r.result.toolCalls.find((c) => c.name === req.tool.name);
  if (!call)
    return {
      ok: false,
      error: { code: 'MODEL_BAD_ANSWER', message: `the model did not call ${req.tool.name}` },
    };
  try {
    const args: unknown = JSON.parse(call.arguments || '{}');
    if (isPlainObject(args)) return { ok: true, result: args as Record<string, unknown> };
  } catch {}
  return {
    ok: false,
    error: {
      code: 'MODEL_BAD_ANSWER',
      message: `the arguments of ${req.tool.name} are not a JSON object`,
    },
  };
}
