/**
 * @module hub/workbench/ask-planner — what an Ask Agent planner is (a question and the fleet's
 * tools in, the calls to make out) and the deterministic one: it scores each tool's keywords, tags,
 * name, description and examples against the question and fills enum arguments the question names.
 */

import type { CapabilityDescriptor } from '../../lib/catalog/catalog.ts';
import { argsFromText, MAX_TEXT_CHARS, namesAnArgument } from '../../lib/catalog/text-args.ts';

/** A capability of some fleet node, as its descriptor says, with the node's name. */
export type CatalogTool = CapabilityDescriptor & { node: string };

export interface PlannedCall {
  node: string;
  tool: string;
  args: Record<string, unknown>;
  score: number;
}

/** What a planner decided, and which planner actually decided it. */
export interface Plan {
  calls: PlannedCall[];
  by: 'keywords' | 'model';
  /** Why the model did not plan, when it was asked and the keywords planned instead. */
  note?: string;
  /**
   * The question back, when the tool that fits best lacks an argument the question does not give
   * (or gives ambiguously): no call is made with a guessed one.
   */
  needs?: { node: string; tool: string; question: string };
}

/** Plans which tools to call for a question. */
export type Planner = (question: string, tools: CatalogTool[]) => Promise<Plan> | Plan;

const STOP = new Set([
  'the',
  'a',
  'an',
  'is',
  'are',
  'of',
  'in',
  'on',
  'to',
  'and',
  'or',
  'for',
  'me',
  'my',
  'what',
  'which',
  'how',
  'who',
  'do',
  'does',
  'did',
  'i',
  'we',
  'you',
  'it',
  'there',
  'any',
  'with',
  'about',
  'tell',
  'show',
  'give',
  'please',
  'can',
]);

/** Lower-case word stems: a trailing plural `s` is dropped so "sectors" meets "sector". */
function terms(text: string): string[] {
  return text
    .toLowerCase()
    .split(/[^a-z0-9\u4e00-\u9fff]+/)
    .filter((w) => w.length > 1 && !STOP.has(w))
    .map((w) => (w.length > 3 && w.endsWith('s') && !w.endsWith('ss') ? w.slice(0, -1) : w));
}

/** How well a tool fits a question: keyword phrases weigh most, then tags and name, then prose. */
export function scoreTool(question: string, tool: CatalogTool): number {
  const q = question.toLowerCase();
  const qTerms = new Set(terms(question));
  let score = 0;
  for (const k of tool.keywords) if (k && q.includes(k.toLowerCase())) score += 3;
  // An identifier of the tool's own kind (a stock code, a USCC) says as much as a keyword.
  if (namesAnArgument(question, tool.args)) score += 3;
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

/**
 * The default planner: the best-scoring read-only tool of each node, up to three nodes close to
 * the best score, each with the arguments the question gives it (lib/catalog/text-args.ts). When
 * the best tool lacks an argument the question does not give, the plan is its question instead.
 */
export const keywordPlanner: Planner = (question, tools) => {
  if (question.length > MAX_TEXT_CHARS) return { calls: [], by: 'keywords' };
  const read = tools
    .filter((t) => t.readOnly)
    .map((t) => ({ t, score: scoreTool(question, t), args: argsFromText(question, t.args) }))
    .filter((c) => c.score >= 3)
    .sort((a, b) => b.score - a.score);
  const best = read[0];
  if (best && !best.args.ok && !read.some((c) => c.args.ok && c.score >= best.score))
    return {
      calls: [],
      by: 'keywords',
      needs: { node: best.t.node, tool: best.t.id, question: best.args.question },
    };
  const scored = read.flatMap((c) =>
    c.args.ok ? [{ node: c.t.node, tool: c.t.id, args: c.args.args, score: c.score }] : [],
  );
  const top = scored[0]?.score ?? 0;
  const picked: PlannedCall[] = [];
  for (const c of scored) {
    if (c.score < top / 2 || picked.length === 3) break;
    if (!picked.some((p) => p.node === c.node)) picked.push(c);
  }
  return { calls: picked, by: 'keywords' };
};
