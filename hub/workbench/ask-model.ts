/**
 * @module hub/ask-model — a planner that lets a model choose the tools, through an
 * OpenAI-compatible `/chat/completions` endpoint with tool calling. The key is sent only in the
 * Authorization header and never logged. On any failure the keyword planner decides instead.
 */

import type { Log } from '../../lib/log.ts';
import { keywordPlanner, type CatalogTool, type PlannedCall, type Planner } from './ask.ts';

export interface ModelConfig {
  baseUrl: string;
  model: string;
  apiKey?: string;
  timeoutMs?: number;
}

const SYSTEM = 'You route a question to the tools of a fleet of small apps. Call every tool whose answer helps, at most three, with arguments only from the question. Do not answer yourself.';

/** Function names the API accepts: letters, digits, `_` and `-`, at most 64. */
const fnName = (t: CatalogTool, i: number) => `t${i}_${`${t.node}_${t.id}`.replace(/[^a-zA-Z0-9_-]/g, '_')}`.slice(0, 64);

export function modelPlanner(cfg: ModelConfig, deps: { log: Log; fetch?: typeof fetch }): Planner {
  const f = deps.fetch ?? fetch;
  return async (question, tools) => {
    const usable = tools.filter((t) => t.readOnly);
    const names = new Map(usable.map((t, i) => [fnName(t, i), t]));
    try {
      const res = await f(`${cfg.baseUrl.replace(/\/+$/, '')}/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(cfg.apiKey ? { authorization: `Bearer ${cfg.apiKey}` } : {}) },
        signal: AbortSignal.timeout(cfg.timeoutMs ?? 20_000),
        body: JSON.stringify({
          model: cfg.model,
          messages: [{ role: 'system', content: SYSTEM }, { role: 'user', content: question }],
          tool_choice: 'auto',
          tools: [...names].map(([name, t]) => ({
            type: 'function',
            function: {
              name,
              description: `${t.node}: ${t.description}`.slice(0, 1024),
              parameters: {
                type: 'object',
                properties: Object.fromEntries(Object.entries(t.args).map(([k, a]) => [k, { type: 'string', ...(a.enum ? { enum: a.enum } : {}) }])),
                required: Object.entries(t.args).filter(([, a]) => a.required).map(([k]) => k),
              },
            },
          })),
        }),
      });
      if (!res.ok) throw new Error(`model endpoint answered HTTP ${res.status}`);
      const body = (await res.json()) as { choices?: { message?: { tool_calls?: { function?: { name?: string; arguments?: string } }[] } }[] };
      const calls = body.choices?.[0]?.message?.tool_calls ?? [];
      const plan: PlannedCall[] = [];
      for (const c of calls.slice(0, 3)) {
        const tool = names.get(c.function?.name ?? '');
        if (!tool) continue;
        let args: unknown = {};
        try {
          args = JSON.parse(c.function?.arguments || '{}');
        } catch {}
        plan.push({ node: tool.node, tool: tool.id, args: args && typeof args === 'object' && !Array.isArray(args) ? (args as Record<string, unknown>) : {}, score: 0 });
      }
      return plan;
    } catch (e) {
      deps.log('warn', 'model planner failed; planning by keywords', { error: (e as Error)?.message ?? 'unknown' });
      return keywordPlanner(question, tools);
    }
  };
}
