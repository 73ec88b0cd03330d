/**
 * @module hub/workbench/ask — Ask Agent: one cross-node question; the hub decides which nodes and tools to
 * ask. A deterministic planner scores the fleet catalog against the question (hub/workbench/ask-planner.ts),
 * or a model plans (hub/workbench/ask-model.ts). The hub's own read-only capabilities (customer.reach
 * joins two nodes) are planned alongside the nodes' tools (hub/workbench/ask-catalog.ts); every call
 * to a node goes through fleet.invoke, so each fact links its trace record.
 */

import type { CapabilityDescriptor } from '../../lib/catalog/catalog.ts';
import type { FleetInvoker } from '../../lib/fleet/invoke.ts';
import { loadCatalog, withOwnTools } from './ask-catalog.ts';
import {
  keywordPlanner,
  scoreTool,
  type CatalogTool,
  type PlannedCall,
  type Planner,
} from './ask-planner.ts';

interface AskFact {
  node: string;
  tool: string;
  summary: string;
  result: unknown;
  traceId?: number;
}

export interface AskAnswer {
  question: string;
  /** The planner that actually planned this answer (keywords when a model was asked and failed). */
  plannedBy: 'keywords' | 'model';
  /** Why the model did not plan, when it failed. */
  planNote?: string;
  answered: boolean;
  answer: string;
  /** What the question lacks for the tool that fits it (the answer asks for it). */
  needs?: { node: string; tool: string; question: string };
  facts: AskFact[];
  tried: {
    node: string;
    tool: string;
    score: number;
    outcome: 'ok' | 'empty' | 'failed';
    errorCode?: string;
    traceId?: number;
  }[];
}

/** A readable line for a result that came without a summary. */
function describe(result: unknown): string {
  if (result === null || typeof result !== 'object') return JSON.stringify(result);
  return Object.entries(result)
    .slice(0, 4)
    .map(
      ([k, v]) =>
        `${k}: ${Array.isArray(v) ? `${v.length} items` : typeof v === 'object' && v ? '{…}' : String(v)}`,
    )
    .join(', ');
}

/** The hub's own capabilities as the planner may use them, run in the hub itself. */
interface OwnTools {
  /** The hub's name: planned calls to it are run here rather than sent. */
  name: string;
  tools: () => CapabilityDescriptor[];
  invoke: (
    id: string,
    args: Record<string, unknown>,
  ) => Promise<
    | { ok: true; result: unknown; summary?: string }
    | { ok: false; error: { code: string; message: string } }
  >;
}

interface AskDeps {
  invoker: FleetInvoker;
  own?: OwnTools;
  planner?: Planner;
  /** Where tools come from when the catalog node does not answer. */
  fallbackCatalog?: () => Promise<CatalogTool[]>;
}

/** What each planned call gave: the facts it found, and every call with its outcome. */
function outcomesOf(
  calls: {
    p: PlannedCall;
    r:
      | { ok: true; result: unknown; summary?: string; traceId?: number }
      | { ok: false; error: { code: string }; traceId?: number };
  }[],
): { facts: AskFact[]; tried: AskAnswer['tried'] } {
  const facts: AskFact[] = [];
  const tried: AskAnswer['tried'] = [];
  for (const { p, r } of calls) {
    const trace = r.traceId !== undefined ? { traceId: r.traceId } : {};
    if (!r.ok) {
      tried.push({
        node: p.node,
        tool: p.tool,
        score: p.score,
        outcome: 'failed',
        errorCode: r.error.code,
        ...trace,
      });
      continue;
    }
    const empty =
      r.result === null ||
      r.result === undefined ||
      (typeof r.result === 'object' && Object.keys(r.result).length === 0);
    tried.push({
      node: p.node,
      tool: p.tool,
      score: p.score,
      outcome: empty ? 'empty' : 'ok',
      ...trace,
    });
    if (!empty)
      facts.push({
        node: p.node,
        tool: p.tool,
        summary: r.summary ?? describe(r.result),
        result: r.result,
        ...trace,
      });
  }
  return { facts, tried };
}

/** Answers a question from the fleet. Never throws: failures become part of the answer. */
/** `opts.onBehalfOf`: the owner key the fleet calls are made for (its tenant travels with them). */
export async function ask(
  deps: AskDeps,
  question: string,
  opts: { onBehalfOf?: string } = {},
): Promise<AskAnswer> {
  const loaded = await loadCatalog(deps.invoker, deps.fallbackCatalog);
  if ('error' in loaded)
    return {
      question,
      plannedBy: 'keywords',
      answered: false,
      answer: `I cannot plan: ${loaded.error}.`,
      facts: [],
      tried: [],
    };
  const own = deps.own;
  const catalog = own ? withOwnTools(loaded, { name: own.name, tools: own.tools() }) : loaded;
  const planned = await (deps.planner ?? keywordPlanner)(question, catalog);
  const base = {
    question,
    plannedBy: planned.by,
    ...(planned.note ? { planNote: planned.note } : {}),
  };
  const plan = planned.calls;
  if (!plan.length && planned.needs)
    return {
      ...base,
      answered: false,
      answer: `${planned.needs.node}/${planned.needs.tool}: ${planned.needs.question}`,
      needs: planned.needs,
      facts: [],
      tried: [],
    };
  if (!plan.length) {
    const closest = catalog
      .filter((t) => t.readOnly)
      .map((t) => ({ t, s: scoreTool(question, t) }))
      .sort((a, b) => b.s - a.s)
      .slice(0, 3);
    return {
      ...base,
      answered: false,
      answer: `No tool in the fleet matches this question. Closest: ${closest.map((c) => `${c.t.node}/${c.t.id}`).join(', ') || 'none'}.`,
      facts: [],
      tried: [],
    };
  }
  const run = (
    p: PlannedCall,
  ): Promise<
    | { ok: true; result: unknown; summary?: string; traceId?: number }
    | { ok: false; error: { code: string }; traceId?: number }
  > =>
    own && p.node === own.name
      ? own.invoke(p.tool, p.args)
      : deps.invoker.invoke(p.node, p.tool, p.args, undefined, opts);
  const calls = await Promise.all(plan.map(async (p) => ({ p, r: await run(p) })));
  const { facts, tried } = outcomesOf(calls);
  if (!facts.length)
    return {
      ...base,
      answered: false,
      answer: `Nothing in the fleet could answer. Tried: ${tried.map((t) => `${t.node}/${t.tool} (${t.outcome}${t.errorCode ? ` ${t.errorCode}` : ''})`).join(', ')}.`,
      facts,
      tried,
    };
  return {
    ...base,
    answered: true,
    answer: facts.map((f) => `${f.summary} [${f.node}/${f.tool}]`).join('\n'),
    facts,
    tried,
  };
}
