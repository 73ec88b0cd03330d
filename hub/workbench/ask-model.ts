/**
 * @module hub/workbench/ask-model — a planner that lets a model choose the tools, through an
 * OpenAI-compatible endpoint with tool calling (lib/model/chat.ts). On any failure the keyword
 * planner decides instead, and the plan says so: the answer reports the planner that answered.
 */

import { isPlainObject } from '../../lib/json/guards.ts';
import type { Log } from '../../lib/log.ts';
import { chat, type ModelEndpoint } from '../../lib/model/chat.ts';
import type { ModelHealth } from '../../lib/model/health.ts';
import {
  keywordPlanner,
  type CatalogTool,
  type Plan,
  type PlannedCall,
  type Planner,
} from './ask-planner.ts';

export interface ModelConfig extends ModelEndpoint {
  timeoutMs?: number;
  /** How often the model is pinged for the card's agent-backed state (default 30 000 ms). */
  pingMs?: number;
}

const SYSTEM =
  'You route a question to the tools of a fleet of small apps. Call every tool whose answer helps, at most three, with arguments only from the question. Do not answer yourself.';

/** Function names the API accepts: letters, digits, `_` and `-`, at most 64. */
const fnName = (t: CatalogTool, i: number) =>
  `t${i}_${`${t.node}_${t.id}`.replace(/[^a-zA-Z0-9_-]/g, '_')}`.slice(0, 64);

export function modelPlanner(
  cfg: ModelConfig,
  deps: { log: Log; health?: ModelHealth; fetch?: typeof fetch },
): Planner {
  return async (question, tools): Promise<Plan> => {
    const usable = tools.filter((t) => t.readOnly);
    const names = new Map(usable.map((t, i) => [fnName(t, i), t]));
    const r = await chat(
      cfg,
      {
        messages: [
          { role: 'system', content: SYSTEM },
          { role: 'user', content: question },
        ],
        timeoutMs: cfg.timeoutMs ?? 20_000,
        tools: [...names].map(([name, t]) => ({
          name,
          description: `${t.node}: ${t.description}`.slice(0, 1024),
          parameters: {
            type: 'object',
            properties: Object.fromEntries(
              Object.entries(t.args).map(([k, a]) => [
                k,
                { type: 'string', ...(a.enum ? { enum: a.enum } : {}) },
              ]),
            ),
            required: Object.entries(t.args)
              .filter(([, a]) => a.required)
              .map(([k]) => k),
          },
        })),
      },
      deps.fetch,
    );
    deps.health?.report(r.ok);
    if (!r.ok) {
      deps.log('warn', 'model planner failed; planning by keywords', { code: r.error.code });
      const plan = await keywordPlanner(question, tools);
      return {
        ...plan,
        note: `the model did not plan (${r.error.code}: ${r.error.message}); keywords did`,
      };
    }
    const calls: PlannedCall[] = [];
    for (const c of r.result.toolCalls.slice(0, 3)) {
      const tool = names.get(c.name);
      if (!tool) continue;
      let args: unknown = {};
      try {
        args = JSON.parse(c.arguments || '{}');
      } catch {}
      calls.push({
        node: tool.node,
        tool: tool.id,
        args: isPlainObject(args) ? (args as Record<string, unknown>) : {},
        score: 0,
      });
    }
    return { calls, by: 'model' };
  };
}
