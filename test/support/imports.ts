/**
 * Test support: the import graph of the source tree — every static import and re-export and every
 * dynamic `import()` with a literal specifier, type-only ones included — with its cycles and the
 * imports that go against the layers (lib/ is below hub/ and node/; hub/ is beside node/, not above).
 */

import { readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { Glob } from 'bun';

/** file (relative to the root) → the repository files it imports (relative to the root). */
export type ImportGraph = Map<string, string[]>;

/** Where a module may not import from: [importer folder, forbidden folder]. */
export const LAYER_RULES: ReadonlyArray<readonly [string, string]> = [
  ['lib/', 'hub/'],
  ['lib/', 'node/'],
  ['hub/', 'node/'],
];

const SPECIFIERS = [
  /\bimport\s+(?:type\s+)?[\w*{}\s,$]*?\s*from\s*['"]([^'"]+)['"]/g, // import x from '…', import type { X } from '…'
  /\bexport\s+(?:type\s+)?(?:\*(?:\s+as\s+\w+)?|\{[^}]*\})\s*from\s*['"]([^'"]+)['"]/g, // export … from '…'
  /\bimport\s*['"]([^'"]+)['"]/g, // import '…' (side effects only)
  /\bimport\s*\(\s*(?:['"]([^'"]+)['"]|`([^`$]+)`)\s*\)/g, // import('…') with a literal
];

/** Drops comments so an import written in a comment is not read as one (strings are kept). */
function stripComments(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`\\])\/\/.*$/gm, '$1');
}

/** The module specifiers a source text imports. */
export function specifiersOf(text: string): string[] {
  const code = stripComments(text);
  const out: string[] = [];
  for (const re of SPECIFIERS) for (const m of code.matchAll(re)) out.push((m[1] ?? m[2])!);
  return out;
}

/**
 * Reads every source file under `folders` of `root` and resolves its relative imports. Package
 * imports (`elysia`, `node:fs`) are not part of the graph; a relative import that names no file
 * is returned in `unresolved` so a typo cannot hide an edge.
 */
export function readImportGraph(
  root: string,
  folders: readonly string[],
): { graph: ImportGraph; unresolved: string[] } {
  const graph: ImportGraph = new Map();
  const unresolved: string[] = [];
  for (const folder of folders) {
    for (const file of new Glob(`${folder}/**/*.{ts,tsx,js,mjs}`).scanSync({ cwd: root })) {
      const text = readFileSync(join(root, file), 'utf8');
      const targets: string[] = [];
      for (const spec of specifiersOf(text)) {
        if (!spec.startsWith('.')) continue;
        const target = relative(root, resolve(root, dirname(file), spec));
        if (statSync(join(root, target), { throwIfNoEntry: false })?.isFile()) targets.push(target);
        else unresolved.push(`${file} → ${spec}`);
      }
      graph.set(file, [...new Set(targets)]);
    }
  }
  return { graph, unresolved };
}

/** Every cycle's files, one list per strongly connected component of more than one file (or a self-import). */
export function cyclesOf(graph: ImportGraph): string[][] {
  // Tarjan's algorithm, iterative so a deep tree cannot overflow the stack.
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const cycles: string[][] = [];
  let next = 0;
  for (const start of graph.keys()) {
    if (index.has(start)) continue;
    const work: Array<{ node: string; edge: number }> = [{ node: start, edge: 0 }];
    index.set(start, next);
    low.set(start, next++);
    stack.push(start);
    onStack.add(start);
    while (work.length) {
      const frame = work[work.length - 1]!;
      const edges = graph.get(frame.node) ?? [];
      if (frame.edge < edges.length) {
        const to = edges[frame.edge++]!;
        if (!index.has(to)) {
          index.set(to, next);
          low.set(to, next++);
          stack.push(to);
          onStack.add(to);
          work.push({ node: to, edge: 0 });
        } else if (onStack.has(to))
          low.set(frame.node, Math.min(low.get(frame.node)!, index.get(to)!));
        continue;
      }
      work.pop();
      if (work.length) {
        const parent = work[work.length - 1]!.node;
        low.set(parent, Math.min(low.get(parent)!, low.get(frame.node)!));
      }
      if (low.get(frame.node) === index.get(frame.node)) {
        const component: string[] = [];
        let member: string;
        do {
          member = stack.pop()!;
          onStack.delete(member);
          component.push(member);
        } while (member !== frame.node);
        if (component.length > 1 || edges.includes(frame.node)) cycles.push(component.sort());
      }
    }
  }
  return cycles;
}

/** The imports that break a layer rule, as `importer → imported`. */
export function layerViolations(graph: ImportGraph, rules = LAYER_RULES): string[] {
  const out: string[] = [];
  for (const [file, targets] of graph)
    for (const target of targets)
      for (const [from, to] of rules)
        if (file.startsWith(from) && target.startsWith(to)) out.push(`${file} → ${target}`);
  return out;
}
