/**
 * @module hub/workbench/entity-names — how entity alignment compares company names: words without
 * legal-form suffixes or city prefixes, so "Hangzhou Yunqi Data Technology Co., Ltd." meets "Yunqi".
 */

/** Legal-form words that do not tell companies apart. */
export const LEGAL = new Set([
  'co',
  'ltd',
  'corp',
  'inc',
  'limited',
  'company',
  'corporation',
  'group',
  'plc',
]);

/** The lower-case words of a name ("&" read as "and"). */
export const tokens = (s: string) =>
  s
    .toLowerCase()
    .replace(/&/g, ' and ')
    .split(/[^a-z0-9]+/)
    .filter(Boolean);

/** A company's name without its city prefix and legal suffix: "Hangzhou Yunqi Data Technology Co., Ltd." → "yunqi data technology". */
export function coreName(name: string, city = ''): string {
  const t = tokens(name);
  const c = tokens(city);
  if (c.length && c.every((w, i) => t[i] === w)) t.splice(0, c.length);
  while (t.length > 1 && LEGAL.has(t[t.length - 1]!)) t.pop();
  return t.join(' ');
}

/** Every word of the query (legal-form words aside) is a word of the name. */
export const nameMatches = (queryWords: string[], name: string) => {
  const words = new Set(tokens(name));
  return queryWords.every((w) => words.has(w));
};
