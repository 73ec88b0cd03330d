/**
 * @module lib/catalog/text-args — a capability's arguments read out of a text message by the
 * capability's own specs: enum values and their synonyms, identifiers by their declared pattern
 * (a six-digit stock code, an 18-character USCC, a customer id), names found in the node's data
 * and, for a number, the one number the text holds. Nothing is guessed: an argument the text names
 * twice, or a token that fits two arguments, is a question back, as is a required one it lacks.
 */

import type { ArgSpec } from './arg-spec.ts';

/** Longest text searched for arguments; a longer one is answered with a request to shorten it. */
export const MAX_TEXT_CHARS = 4096;
/** Most matches of one pattern read from a text (more are as ambiguous as two). */
const MAX_MATCHES = 16;
/**
 * Longest word (a run without whitespace) a declared pattern is looked for in. A pattern's scan
 * may go back and forth over a word (resolve's dotted ids do, on `-a-a-a…`), so bounding the
 * word bounds the work per character: the text's whole scan is linear in its length.
 */
export const MAX_WORD_CHARS = 64;
/** Longest pattern a capability may declare (checked when its catalog is made). */
export const MAX_PATTERN_CHARS = 200;

export type TextArgs =
  | { ok: true; args: Record<string, unknown> }
  | { ok: false; kind: 'missing' | 'ambiguous'; arg: string; question: string };

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
/** A token on its own: not inside a longer word, number or identifier. */
const bounded = (source: string, flags: string) =>
  new RegExp(`(?<![\\p{L}\\p{N}_])(?:${source})(?![\\p{L}\\p{N}_])`, `${flags}u`);

/** A phrase the text contains as whole words, case-insensitive; `-` and a space are one. */
function mentions(text: string, phrase: string): boolean {
  const words = phrase
    .trim()
    .split(/[\s-]+/)
    .filter(Boolean)
    .map(escapeRegExp);
  return words.length > 0 && bounded(words.join('[\\s-]+'), 'i').test(text);
}

/**
 * The words a declared pattern is looked for in: the text's runs without whitespace, each at
 * most MAX_WORD_CHARS long (a longer run, a URL or a blob, holds no identifier). Every character
 * is in one word at most, so the scan of all of them is linear in the text's length.
 */
export function patternWords(text: string): string[] {
  return text.split(/\s+/).filter((w) => w.length > 0 && w.length <= MAX_WORD_CHARS);
}

/**
 * Why a declared pattern cannot be used to read texts, or undefined: too long, not a valid
 * expression, or matching across whitespace (it is looked for inside one word).
 */
export function patternProblem(pattern: string): string | undefined {
  if (pattern.length > MAX_PATTERN_CHARS)
    return `a pattern may be at most ${MAX_PATTERN_CHARS} characters`;
  try {
    new RegExp(pattern, 'u');
  } catch (e) {
    return `the pattern is not a regular expression: ${(e as Error).message}`;
  }
  if (/\\s|\s/.test(pattern)) return 'a pattern is looked for inside one word: no whitespace';
  return undefined;
}

/** Every distinct match of a declared pattern in the text's words (at most MAX_MATCHES + 1). */
function patternMatches(text: string, pattern: string): string[] {
  const found = new Set<string>();
  const re = bounded(pattern, 'gi');
  for (const word of patternWords(text)) {
    for (const m of word.matchAll(re)) {
      found.add(m[0]);
      if (found.size > MAX_MATCHES) return [...found];
    }
  }
  return [...found];
}

/** The values the text names for one argument, each once. */
function candidates(text: string, spec: ArgSpec): string[] {
  const found = new Set<string>();
  for (const v of spec.enum ?? [])
    if (mentions(text, v) || spec.synonyms?.[v]?.some((s) => mentions(text, s))) found.add(v);
  if (spec.pattern) for (const m of patternMatches(text, spec.pattern)) found.add(m);
  for (const name of knownNames(spec)) if (name && mentions(text, name)) found.add(name);
  // A name inside a longer one the text also names ("Acme" in "Acme Robotics") is that one.
  return [...found].filter(
    (v) => ![...found].some((w) => w !== v && w.toLowerCase().includes(v.toLowerCase())),
  );
}

/** The names the node's data gives an argument; a reader that fails gives none. */
function knownNames(spec: ArgSpec): readonly string[] {
  try {
    return spec.known?.() ?? [];
  } catch {
    return [];
  }
}

const numbers = (text: string) => [
  ...new Set([...text.matchAll(bounded('-?\\d+(?:\\.\\d+)?', 'g'))].map((m) => m[0])),
];

function describe(name: string, spec: ArgSpec): string {
  const choices = spec.enum?.length ? ` (one of ${spec.enum.join(', ')})` : '';
  return `the ${name}: ${spec.description}${choices}`;
}

/**
 * Reads the arguments `specs` declare out of `text`. Arguments without an enum, a pattern, known
 * names or a number type are never read from text (they could be anything); a required one of
 * those is asked for.
 */
export function argsFromText(text: string, specs: Readonly<Record<string, ArgSpec>>): TextArgs {
  const args: Record<string, unknown> = {};
  const claimed = new Map<string, string>();
  // Identifiers and names first, so a number already taken as a stock code is not also a count.
  const ordered = Object.entries(specs).sort(
    ([, a], [, b]) => Number(a.type !== 'string') - Number(b.type !== 'string'),
  );
  for (const [name, spec] of ordered) {
    let found: string[];
    if (spec.type === 'string') found = candidates(text, spec);
    else if ((spec.type === 'number' || spec.type === 'integer') && !spec.enum)
      found = numbers(text).filter((n) => !claimed.has(n));
    else found = [];
    if (found.length > 1)
      return {
        ok: false,
        kind: 'ambiguous',
        arg: name,
        question: `Which ${name} do you mean: ${found.slice(0, 8).join(', ')}${found.length > 8 ? ', …' : ''}? Reply with one.`,
      };
    const value = found[0];
    if (value === undefined) {
      if (spec.required)
        return {
          ok: false,
          kind: 'missing',
          arg: name,
          question: `I need ${describe(name, spec)}. Reply with it.`,
        };
      continue;
    }
    const other = claimed.get(value);
    if (other)
      return {
        ok: false,
        kind: 'ambiguous',
        arg: name,
        question: `Is ${value} the ${other} or the ${name}? Reply with the ${name} alone, or send a data part.`,
      };
    claimed.set(value, name);
    args[name] = spec.type === 'string' ? value : Number(value);
  }
  return { ok: true, args };
}

/** Whether a text names at least one argument value these specs can read (a pattern or enum hit). */
export function namesAnArgument(text: string, specs: Readonly<Record<string, ArgSpec>>): boolean {
  return Object.values(specs).some(
    (spec) => spec.type === 'string' && !!spec.pattern && candidates(text, spec).length > 0,
  );
}
