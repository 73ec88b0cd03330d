/**
 * @module hub/workbench/ask — Ask Agent: one cross-node question; the hub decides which nodes and tools to
 * ask. A deterministic planner scores the fleet catalog's keywords, tags, names, descriptions and
 * examples against the question (or a model plans, see hub/workbench/ask-model.ts). The hub's own
 * read-only capabilities (customer.reach joins two nodes) are planned alongside the nodes' tools;
 * every call to a node goes through fleet.invoke, so each fact links its trace record.
 */

import type { CapabilityDescriptor } from '../../lib/catalog/catalog.ts';
import type { FleetInvoker } from '../../lib/fleet/invoke.ts';
import { isCatalogAnswer, isObject, isWireDescriptor, readFrom, type WireDescriptor } from './fleet-answers.ts';

/** A capability of some fleet node, as its descriptor says, with the node's name. */
export type CatalogTool = CapabilityDescriptor & { node: string };

export interface PlannedCall {
  node: string;
  tool: string;
  args: Record<string, unknown>;
  score: number;
}

interface AskFact {
  node: string;
  tool: string;
  summary: string;
  result: unknown;
  traceId?: number;
}

/** What a planner decided, and which planner actually decided it. */
export interface Plan {
  calls: PlannedCall[];
  by: 'keywords' | 'model';
  /** Why the model did not plan, when it was asked and the keywords planned instead. */
  note?: string;
}

export interface AskAnswer {
  question: string;
  /** The planner that actually planned this answer (keywords when a model was asked and failed). */
  plannedBy: 'keywords' | 'model';
  /** Why the model did not plan, when it failed. */
  planNote?: string;
  answered: boolean;
  answer: string;
  facts: AskFact[];
  tried: { node: string; tool: string; score: number; outcome: 'ok' | 'empty' | 'failed'; errorCode?: string; traceId?: number }[];
}

/** Plans which tools to call for a question. */
export type Planner = (question: string, tools: CatalogTool[]) => Promise<Plan> | Plan;

const STOP = new Set(['the', 'a', 'an', 'is', 'are', 'of', 'in', 'on', 'to', 'and', 'or', 'for', 'me', 'my', 'what', 'which', 'how', 'who', 'do', 'does', 'did', 'i', 'we', 'you', 'it', 'there', 'any', 'with', 'about', 'tell', 'show', 'give', 'please', 'can']);

/** Lower-case word stems: a trailing plural `s` is dropped so "sectors" meets "sector". */
function terms(text: string): string[] {
  return text.toLowerCase().split(/[^a-z0-9\u4e00-\u9fff]+/).filter((w) => w.length > 1 && !STOP.has(w)).map((w) => (w.length > 3 && w.endsWith('s') && !w.endsWith('ss') ? w.slice(0, -1) : w));
}

/** How well a tool fits a question: keyword phrases weigh most, then tags and name, then prose. */
function scoreTool(question: string, tool: CatalogTool): number {
  const q = question.toLowerCase();
  const qTerms = new Set(terms(question));
  let score = 0;
  for (const k of tool.keywords) if (k && q.includes(k.toLowerCase())) score += 3;
  const hits = (words: string[], weight: number) => {
    let n = 0;
    for (const w of new Set(words)) if (qTerms.has(w)) n += weight;
    return n;
  };
  score += hits(tool.tags.flatMap(terms), 2);
  score += hits(terms(tool.name), 2);
  score += Math.min(4, hits([...terms(tool.description), ...tool.examples.flatMap(terms)], 1));
  return score;
}

/** Fills enum arguments whose value the question names; undefined when a required one stays empty. */
function argsFor(question: string, tool: CatalogTool): Record<string, unknown> | undefined {
  const q = question.toLowerCase();
  const args: Record<string, unknown> = {};
  for (const [name, spec] of Object.entries(tool.args)) {
    const hit = spec.enum?.find((v) => q.includes(v.toLowerCase()));
    if (hit) args[name] = hit;
    else if (spec.required) return undefined;
  }
  return args;
}

/** The default planner: the best-scoring read-only tool of each node, up to three nodes close to the best score. */
export const keywordPlanner: Planner = (question, tools) => {
  const scored = tools.flatMap((t) => {
    if (!t.readOnly) return [];
    const args = argsFor(question, t);
    return args ? [{ node: t.node, tool: t.id, args, score: scoreTool(question, t) }] : [];
  }).filter((c) => c.score >= 3).sort((a, b) => b.score - a.score);
  const top = scored[0]?.score ?? 0;
  const picked: PlannedCall[] = [];
  for (const c of scored) {
    if (c.score < top / 2 || picked.length === 3) break;
    if (!picked.some((p) => p.node === c.node)) picked.push(c);
  }
  return { calls: picked, by: 'keywords' };
};

/** A readable line for a result that came without a summary. */
function describe(result: unknown): string {
  if (result === null || typeof result !== 'object') return JSON.stringify(result);
  return Object.entries(result).slice(0, 4)
    .map(([k, v]) => `${k}: ${Array.isArray(v) ? `${v.length} items` : typeof v === 'object' && v ? '{…}' : String(v)}`).join(', ');
}

/**
 * The fleet's tools: from the catalog node (`resolve.catalog`, a traced call), or, when it does
 * not answer, from `fallback` (the nodes' own public /capabilities).
 */
export async function loadCatalog(invoker: FleetInvoker, fallback?: () => Promise<CatalogTool[]>): Promise<CatalogTool[] | { error: string }> {
  const r = await readFrom(invoker, 'resolve', 'resolve.catalog', isCatalogAnswer);
  if (!r.ok) {
    const tools = fallback ? await fallback().catch(() => []) : [];
    return tools.length ? tools : { error: `the fleet catalog (resolve.catalog) is unavailable: ${r.error.code}` };
  }
  return r.result.nodes.flatMap((n) => n.capabilities.filter(isWireDescriptor).map((c) => toolOf(n.node, c)));
}

/** A descriptor from the wire as the planner reads it; a malformed descriptor was left out before. */
const toolOf = (node: string, c: WireDescriptor): CatalogTool => ({ ...c, tags: c.tags ?? [], examples: c.examples ?? [], keywords: c.keywords ?? [], node });

/** The hub's own capabilities as the planner may use them, run in the hub itself. */
interface OwnTools {
  /** The hub's name: planned calls to it are run here rather than sent. */
  name: string;
  tools: () => CapabilityDescriptor[];
  invoke: (id: string, args: Record<string, unknown>) => Promise<{ ok: true; result: unknown; summary?: string } | { ok: false; error: { code: string; message: string } }>;
}

/**
 * The tools a question is planned over: the nodes', then the hub's own read-only ones that no node
 * already offers under the same id (the hub's sector.movement only relays scanner's).
 */
export function withOwnTools(nodes: CatalogTool[], own: { name: string; tools: CapabilityDescriptor[] }): CatalogTool[] {
  const ids = new Set(nodes.map((t) => t.id));
  return [...nodes, ...own.tools.filter((t) => t.readOnly && !ids.has(t.id)).map((t) => ({ ...t, node: own.name }))];
}

/** Answers a question from the fleet. Never throws: failures become part of the answer. */
interface AskDeps {
  invoker: FleetInvoker;
  own?: OwnTools;
  planner?: Planner;
  /** Where tools come from when the catalog node does not answer. */
  fallbackCatalog?: () => Promise<CatalogTool[]>;
}

export async function ask(deps: AskDeps, question: string): Promise<AskAnswer> {
  const loaded = await loadCatalog(deps.invoker, deps.fallbackCatalog);
  if ('error' in loaded) return { question, plannedBy: 'keywords', answered: false, answer: `I cannot plan: ${loaded.error}.`, facts: [], tried: [] };
  const own = deps.own;
  const catalog = own ? withOwnTools(loaded, { name: own.name, tools: own.tools() }) : loaded;
  const planned = await (deps.planner ?? keywordPlanner)(question, catalog);
  const base = { question, plannedBy: planned.by, ...(planned.note ? { planNote: planned.note } : {}) };
  const plan = planned.calls;
  if (!plan.length) {
    const closest = catalog.filter((t) => t.readOnly).map((t) => ({ t, s: scoreTool(question, t) })).sort((a, b) => b.s - a.s).slice(0, 3);
    return { ...base, answered: false, answer: `No tool in the fleet matches this question. Closest: ${closest.map((c) => `${c.t.node}/${c.t.id}`).join(', ') || 'none'}.`, facts: [], tried: [] };
  }
  const run = (p: PlannedCall): Promise<{ ok: true; result: unknown; summary?: string; traceId?: number } | { ok: false; error: { code: string }; traceId?: number }> =>
    own && p.node === own.name ? own.invoke(p.tool, p.args) : deps.invoker.invoke(p.node, p.tool, p.args);
  const calls = await Promise.all(plan.map(async (p) => ({ p, r: await run(p) })));
  const facts: AskFact[] = [];
  const tried: AskAnswer['tried'] = [];
  for (const { p, r } of calls) {
    const trace = r.traceId !== undefined ? { traceId: r.traceId } : {};
    if (!r.ok) {
      tried.push({ node: p.node, tool: p.tool, score: p.score, outcome: 'failed', errorCode: r.error.code, ...trace });
      continue;
    }
    const empty = r.result === null || r.result === undefined || (typeof r.result === 'object' && Object.keys(r.result).length === 0);
    tried.push({ node: p.node, tool: p.tool, score: p.score, outcome: empty ? 'empty' : 'ok', ...trace });
    if (!empty) facts.push({ node: p.node, tool: p.tool, summary: r.summary ?? describe(r.result), result: r.result, ...trace });
  }
  if (!facts.length)
    return { ...base, answered: false, answer: `Nothing in the fleet could answer. Tried: ${tried.map((t) => `${t.node}/${t.tool} (${t.outcome}${t.errorCode ? ` ${t.errorCode}` : ''})`).join(', ')}.`, facts, tried };
  return { ...base, answered: true, answer: facts.map((f) => `${f.summary} [${f.node}/${f.tool}]`).join('\n'), facts, tried };
}

/** Reads every online node's public /capabilities (the same declarations its card is made from). */
export function capabilitiesFromNodes(nodes: () => Promise<{ name: string; url: string; online: boolean }[]>, f: typeof fetch = fetch): () => Promise<CatalogTool[]> {
  return async () => {
    const list = (await nodes()).filter((n) => n.online);
    const per = await Promise.all(list.map(async (n) => {
      try {
        const res = await f(`${n.url}/capabilities`, { signal: AbortSignal.timeout(2000) });
        const body: unknown = await res.json();
        const listed = isObject(body) && Array.isArray(body.capabilities) ? body.capabilities : [];
        return listed.filter(isWireDescriptor).map((c) => toolOf(n.name, c));
      } catch {
        return [];
      }
    }));
    return per.flat();
  };
}
