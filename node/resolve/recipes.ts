/**
 * @module node/resolve/recipes — the executor's allow-list: recipes read from a JSON file (argv arrays
 * with a fixed set of placeholders, limits, fixed environment), checked at load, and the keyword
 * pick of a recipe from a prompt. Nothing here runs a process.
 */

import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';

/** How a recipe may receive the prompt: never as an argument. */
type PromptVia = 'none' | 'stdin' | 'env';

export interface Recipe {
  name: string;
  description: string;
  keywords: string[];
  /** `process`: argv run as a child; `model`: the prompt goes to the configured model endpoint. */
  kind: 'process' | 'model';
  /** Placeholders already filled in; empty for `model`. */
  argv: string[];
  cwd: string;
  env: Record<string, string>;
  prompt: PromptVia;
  timeoutMs: number;
  maxOutputBytes: number;
}

/** Values the recipe file may name as `{…}` in argv and cwd; nothing from a request ever is. */
interface RecipePlaces {
  /** The Bun executable. */
  bun: string;
  /** The checkout. */
  root: string;
  /** DATA_DIR. */
  data: string;
  /** The fleet file. */
  fleet: string;
}

/** The environment variable a recipe declaring `"prompt": "env"` reads. */
export const PROMPT_ENV = 'JOB_PROMPT';
export const RECIPE_NAME = /^[a-z][a-z0-9-]{0,39}$/;
const LIMITS = Object.freeze({
  timeoutMs: 60_000,
  maxTimeoutMs: 600_000,
  maxOutputBytes: 64 * 1024,
  maxMaxOutputBytes: 1024 * 1024,
});
const ENV_NAME = /^[A-Z][A-Z0-9_]{0,63}$/;
const PLACEHOLDER = /\{([a-z]+)\}/g;

/**
 * Reads and checks a recipe file; `{recipes}` is the file's own folder.
 * @throws Error when the file is missing or a recipe is malformed (a bug in the fixture).
 */
export function loadRecipes(file: string, places: RecipePlaces): Recipe[] {
  const doc = JSON.parse(readFileSync(file, 'utf8')) as { recipes?: unknown };
  if (!Array.isArray(doc.recipes)) throw new Error(`${file}: "recipes" must be an array`);
  const values: Record<string, string> = { ...places, recipes: dirname(resolve(file)) };
  const fill = (text: string, where: string) =>
    text.replace(PLACEHOLDER, (_, key: string) => {
      if (!(key in values)) throw new Error(`${where}: unknown placeholder {${key}}`);
      return values[key]!;
    });
  const seen = new Set<string>();
  return doc.recipes.map((raw, i): Recipe => {
    const r = raw as Record<string, unknown>;
    const where = `${file}: recipe ${i}`;
    if (typeof r.name !== 'string' || !RECIPE_NAME.test(r.name) || r.name === 'model')
      throw new Error(`${where}: bad name`);
    if (seen.has(r.name)) throw new Error(`${where}: duplicate name ${r.name}`);
    seen.add(r.name);
    if (
      !Array.isArray(r.argv) ||
      !r.argv.length ||
      !r.argv.every((a) => typeof a === 'string' && a.length)
    )
      throw new Error(`${where}: argv must be non-empty strings`);
    const env = (r.env ?? {}) as Record<string, unknown>;
    if (
      typeof env !== 'object' ||
      Object.entries(env).some(
        ([k, v]) => !ENV_NAME.test(k) || k === PROMPT_ENV || typeof v !== 'string',
      )
    )
      throw new Error(`${where}: bad env`);
    const prompt = (r.prompt ?? 'none') as PromptVia;
    if (!['none', 'stdin', 'env'].includes(prompt))
      throw new Error(`${where}: prompt must be none, stdin or env`);
    return {
      name: r.name,
      description: typeof r.description === 'string' ? r.description : r.name,
      keywords: Array.isArray(r.keywords)
        ? r.keywords.filter((k): k is string => typeof k === 'string' && k.length > 0)
        : [],
      kind: 'process',
      argv: (r.argv as string[]).map((a) => fill(a, where)),
      cwd: fill(typeof r.cwd === 'string' ? r.cwd : '{root}', where),
      env: env as Record<string, string>,
      prompt,
      timeoutMs: bounded(r.timeoutMs, LIMITS.timeoutMs, LIMITS.maxTimeoutMs, `${where}: timeoutMs`),
      maxOutputBytes: bounded(
        r.maxOutputBytes,
        LIMITS.maxOutputBytes,
        LIMITS.maxMaxOutputBytes,
        `${where}: maxOutputBytes`,
      ),
    };
  });
}

function bounded(v: unknown, fallback: number, max: number, where: string): number {
  if (v === undefined) return fallback;
  if (!Number.isInteger(v) || (v as number) < 1 || (v as number) > max)
    throw new Error(`${where} must be an integer from 1 to ${max}`);
  return v as number;
}

/** The `model` recipe, present only when a model endpoint is configured. */
export function modelRecipe(): Recipe {
  return {
    name: 'model',
    kind: 'model',
    argv: [],
    cwd: '',
    env: {},
    prompt: 'none',
    description: 'Sends the prompt to the configured OpenAI-compatible model and keeps its answer',
    keywords: ['model', 'llm', 'ask the model', 'explain', 'write'],
    timeoutMs: LIMITS.timeoutMs,
    maxOutputBytes: LIMITS.maxOutputBytes,
  };
}

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * The recipe whose keywords the prompt names most often (whole words, case-insensitive; the
 * first recipe wins a tie); the `model` recipe, when there is one, takes prompts nothing matches.
 */
export function pickRecipe(prompt: string, recipes: readonly Recipe[]): Recipe | undefined {
  const text = prompt.toLowerCase();
  let best: Recipe | undefined;
  let bestScore = 0;
  for (const r of recipes) {
    const score = [r.name, ...r.keywords].filter((k) =>
      new RegExp(`(^|[^a-z0-9])${escapeRegExp(k.toLowerCase())}($|[^a-z0-9])`).test(text),
    ).length;
    if (score > bestScore) [best, bestScore] = [r, score];
  }
  return best ?? recipes.find((r) => r.kind === 'model');
}
