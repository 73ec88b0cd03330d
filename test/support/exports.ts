/**
 * @module test/support/exports — the exported values of the source tree that no other file imports:
 * every `export function|const|let|class|enum` and `export { … }` of lib/, hub/ and node/, against
 * the named imports, re-exports, namespace imports (`ns.name`) and destructured dynamic imports
 * (`const { a } = await import('…')`, or a lazy `require('…')` of the same shape) of every other file. Types are left out (they cost nothing at
 * run time and a signature often names them).
 */

import { readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { Glob } from 'bun';

const DECLARED =
  /^export\s+(?:declare\s+)?(?:default\s+)?(?:async\s+)?(?:function\*?|const|let|var|class|abstract\s+class|enum)\s+([A-Za-z_$][\w$]*)/gm;
/** `export { a, b as c }` with no `from`: local names exported (the exported name is what counts). */
const LOCAL_LIST = /^export\s+\{([^}]*)\}\s*;?\s*$/gm;
/** `import { a, type B } from '…'`, `export { a } from '…'`, `import d, { a } from '…'`. */
const NAMED_FROM =
  /\b(import|export)\s+(?:type\s+)?(?:[\w$]+\s*,\s*)?\{([^}]*)\}\s*from\s*['"]([^'"]+)['"]/g;
const NAMESPACE = /\bimport\s+\*\s+as\s+([\w$]+)\s+from\s*['"]([^'"]+)['"]/g;
const STAR = /\bexport\s+\*\s+from\s*['"]([^'"]+)['"]/g;
/**
 * `const { a, b: c } = await import('./x.ts')` or `… import(join(tree, 'lib/x.ts'))` (a path from
 * the root), or `const { a } = require('./x.ts')` (a module loaded lazily in synchronous code).
 */
const DYNAMIC =
  /\{([^{}]*)\}\s*=\s*\(?\s*(?:await\s+import|require)\(\s*(?:join\(\s*[\w$]+\s*,\s*)?['"]([^'"]+)['"]/g;

function stripComments(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`\\])\/\/.*$/gm, '$1');
}

/** Drops template literals: a file that writes source (hub/cli/new-node.ts) holds `export`s that are text. */
function stripTemplates(code: string): string {
  return code.replace(/`(?:\\[\s\S]|[^`\\])*`/g, '``');
}

/** The names a `{ … }` list brings in (`a as b` → a; `type X` is dropped: types are not counted). */
function namesOf(list: string, side: 'source' | 'exported'): string[] {
  return list
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s && !s.startsWith('type '))
    .map((s) => {
      const [from, to] = s.split(/\s+as\s+|\s*:\s*/);
      return (side === 'source' ? from : (to ?? from))!.trim();
    });
}

/** Every source file's exported value names, by file (relative to the root). */
export function exportsOf(root: string, folders: readonly string[]): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  for (const folder of folders)
    for (const file of new Glob(`${folder}/**/*.ts`).scanSync({ cwd: root })) {
      const code = stripTemplates(stripComments(readFileSync(join(root, file), 'utf8')));
      const names = new Set<string>();
      for (const m of code.matchAll(DECLARED)) names.add(m[1]!);
      for (const m of code.matchAll(LOCAL_LIST))
        for (const n of namesOf(m[1]!, 'exported')) names.add(n);
      for (const m of code.matchAll(NAMED_FROM))
        if (m[1] === 'export' && !m[0].startsWith('export type'))
          for (const n of namesOf(m[2]!, 'exported')) names.add(n);
      out.set(file, names);
    }
  return out;
}

/**
 * `file#name` of every exported value no other file of `users` imports. Files under an `exempt`
 * folder are the package's entry points: their own exports are its public surface.
 */
export function unusedExports(
  root: string,
  owners: readonly string[],
  users: readonly string[],
  exempt: readonly string[],
): string[] {
  const exported = exportsOf(root, owners);
  const used = new Set<string>();
  const resolveFrom = (file: string, spec: string): string | undefined =>
    spec.startsWith('.')
      ? relative(root, resolve(root, dirname(file), spec))
      : /^(lib|hub|node)\//.test(spec)
        ? spec
        : undefined;
  for (const folder of users)
    for (const file of new Glob(`${folder}/**/*.{ts,tsx,js,mjs}`).scanSync({ cwd: root })) {
      const code = stripComments(readFileSync(join(root, file), 'utf8'));
      const mark = (spec: string, names: Iterable<string>) => {
        const target = resolveFrom(file, spec);
        if (target && target !== file) for (const n of names) used.add(`${target}#${n}`);
      };
      for (const m of code.matchAll(NAMED_FROM))
        if (!m[0].includes(' type {')) mark(m[3]!, namesOf(m[2]!, 'source'));
      for (const m of code.matchAll(DYNAMIC)) mark(m[2]!, namesOf(m[1]!, 'source'));
      for (const m of code.matchAll(STAR))
        mark(m[1]!, exported.get(resolveFrom(file, m[1]!)!) ?? []);
      for (const m of code.matchAll(NAMESPACE)) {
        const target = resolveFrom(file, m[2]!);
        const all = exported.get(target ?? '') ?? new Set();
        // A namespace handed on whole (not only `ns.name`) uses every export.
        const whole = new RegExp(`\\b${m[1]}\\b(?!\\s*\\.)`, 'g');
        const uses = [...code.matchAll(whole)].length > 1;
        const names = uses
          ? all
          : [...code.matchAll(new RegExp(`\\b${m[1]}\\.([\\w$]+)`, 'g'))].map((x) => x[1]!);
        mark(m[2]!, names);
      }
    }
  const out: string[] = [];
  for (const [file, names] of exported) {
    if (exempt.some((e) => file.startsWith(e))) continue;
    for (const n of names)
      if (n !== 'default' && !used.has(`${file}#${n}`)) out.push(`${file}#${n}`);
  }
  return out.sort();
}
