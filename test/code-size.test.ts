/**
 * The size rule of lib/, hub/, node/ and the browser console's modules (console/, plain
 * JavaScript the same parser reads): no file over 500 lines, and no function (declaration,
 * expression, arrow, method, accessor, constructor) over 100 lines unless the line just above it
 * is a comment `// long: <why>`. Functions are found with the TypeScript parser, not patterns,
 * so a brace in a string or a template does not move a boundary. A function's length counts
 * the functions nested in it, as a reader of it has to read them too.
 *
 * The factories still over the limit when the rule came in (the console's pages when it reached
 * console/) are listed below with their length then: none of them may grow, none may join the list, and one split below the limit must leave
 * it (the test says so), so the list only shrinks.
 */

import { expect, setDefaultTimeout, test } from 'bun:test';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';

setDefaultTimeout(20_000); // per file (Bun scopes it so)

const ROOT = join(import.meta.dir, '..');
const MAX_FILE_LINES = 500;
const MAX_FUNCTION_LINES = 100;

function sources(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    if (name === 'node_modules') continue;
    const full = join(dir, name);
    if (statSync(full).isDirectory()) out.push(...sources(full));
    else if (/\.(ts|js)$/.test(name) && !name.endsWith('.d.ts')) out.push(relative(ROOT, full));
  }
  return out;
}

/** The file's line count as `wc -l` gives it. */
function lineCount(text: string): number {
  return text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
}

function nameOf(node: ts.FunctionLikeDeclaration): string {
  if (node.name && ts.isIdentifier(node.name)) return node.name.text;
  if (node.name) return node.name.getText();
  if (ts.isConstructorDeclaration(node)) return 'constructor';
  const parent = node.parent;
  if (parent && ts.isVariableDeclaration(parent) && ts.isIdentifier(parent.name)) {
    return parent.name.text;
  }
  if (parent && ts.isPropertyAssignment(parent)) return parent.name.getText();
  return '(anonymous)';
}

/** Every function over the limit in one file's text, with no `// long:` comment above it. */
export function longFunctions(file: string, text: string): string[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const lines = text.split('\n');
  const out: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body) {
      const fn = node as ts.FunctionLikeDeclaration;
      const start = source.getLineAndCharacterOfPosition(fn.getStart(source)).line;
      const end = source.getLineAndCharacterOfPosition(fn.getEnd()).line;
      const length = end - start + 1;
      const above = (lines[start - 1] ?? '').trim();
      if (length > MAX_FUNCTION_LINES && !/^\/\/ long: \S/.test(above)) {
        out.push(`${file}:${start + 1} ${nameOf(fn)} (${length} lines)`);
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return out;
}

/** `<file> <function>` → its length when the rule came in; each is still to be split. */
const STILL_TO_SPLIT = new Map<string, number>([]);

const FILES = ['lib', 'hub', 'node', 'console'].flatMap((d) => sources(join(ROOT, d)));

test(`no file of lib/, hub/, node/, console/ is over ${MAX_FILE_LINES} lines`, () => {
  expect(FILES.length).toBeGreaterThan(200);
  const over = FILES.map((f) => ({ f, n: lineCount(readFileSync(join(ROOT, f), 'utf8')) }))
    .filter(({ n }) => n > MAX_FILE_LINES)
    .map(({ f, n }) => `${f} (${n} lines)`);
  expect(over).toEqual([]);
});

test(`no function of lib/, hub/, node/, console/ is over ${MAX_FUNCTION_LINES} lines without a reason`, () => {
  const over = FILES.flatMap((f) => longFunctions(f, readFileSync(join(ROOT, f), 'utf8')));
  const problems: string[] = [];
  const seen = new Set<string>();
  for (const entry of over) {
    const [, file, name, lines] = /^(\S+):\d+ (.+) \((\d+) lines\)$/.exec(entry)!;
    const key = `${file} ${name}`;
    const allowed = STILL_TO_SPLIT.get(key);
    seen.add(key);
    if (allowed === undefined)
      problems.push(`${entry}: split it, or say why above it (// long: …)`);
    else if (Number(lines) > allowed) problems.push(`${entry}: grew past its ${allowed} lines`);
  }
  for (const key of STILL_TO_SPLIT.keys())
    if (!seen.has(key)) problems.push(`${key}: no longer over the limit; take it off the list`);
  expect(problems).toEqual([]);
});

test('the checker finds every kind of function and honours the reason comment', () => {
  const body = Array.from({ length: MAX_FUNCTION_LINES }, (_, i) => `  const v${i} = ${i};`);
  const block = `{\n${body.join('\n')}\n}`;
  const text = [
    `function declared() ${block}`,
    `const arrow = () => ${block};`,
    `const expressed = function () ${block};`,
    `class C {\n  method() ${block}\n}`,
    `// long: a table reads best whole`,
    `function excused() ${block}`,
    `function short() {\n  return '}}}';\n}`,
  ].join('\n');
  const found = longFunctions('x.ts', text).map((s) => s.replace(/^x\.ts:\d+ /, ''));
  expect(found).toEqual([
    `declared (${MAX_FUNCTION_LINES + 2} lines)`,
    `arrow (${MAX_FUNCTION_LINES + 2} lines)`,
    `expressed (${MAX_FUNCTION_LINES + 2} lines)`,
    `method (${MAX_FUNCTION_LINES + 2} lines)`,
  ]);
  // Exactly at the limit is fine: drop two body lines to make the function 100 lines long.
  const atLimit = `function f() ${block}`.replace(/\n {2}const v[01] = [01];/g, '');
  expect(longFunctions('y.ts', atLimit)).toEqual([]);
});
