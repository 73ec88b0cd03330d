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

/**
 * The rooms of lib/ and hub/ by floor, lowest first: a room (a folder, or a loose file of lib/ or
 * hub/) imports only rooms on lower floors, so two rooms can never import each other. A new room
 * or an import that goes up or sideways fails `roomOrderViolations` until it is placed here.
 */
export const ROOM_FLOORS: ReadonlyArray<readonly string[]> = [
  [
    'lib/atomic-file.ts',
    'lib/checked-frame.ts',
    'lib/defined.ts',
    'lib/errors/',
    'lib/event-queue.ts',
    'lib/health.ts',
    'lib/json/',
    'lib/limits.ts',
    'lib/log-limit.ts',
    'lib/port-check.ts',
    'lib/private-folder.ts',
    'lib/proc-stat.ts',
    'lib/project-root.ts',
    'lib/telemetry/',
  ],
  [
    'lib/auth/',
    'lib/body.ts',
    'lib/data-lock.ts',
    'lib/domain/',
    'lib/log.ts',
    'lib/net/',
    'lib/sse/',
  ],
  [
    'lib/catalog/',
    'lib/config/',
    'lib/crash-guard.ts',
    'lib/mcp/',
    'lib/mesh/',
    'lib/metrics/',
    'lib/model/',
  ],
  ['lib/config.ts', 'lib/peer/'],
  ['lib/a2a/', 'lib/fleet/', 'lib/settings-or-exit.ts'],
  ['lib/agents/'],
  ['lib/node/'],
  ['lib/kit/'],
  ['hub/mesh/'],
  ['hub/fleet/'],
  ['hub/workbench/'],
  ['hub/http/', 'hub/mcp/'],
  ['hub/cli/', 'hub/hub-route.ts', 'hub/hub-types.ts', 'hub/metrics.ts'],
  [
    'hub/hub-console.ts',
    'hub/hub-fleet.ts',
    'hub/hub-listen.ts',
    'hub/hub-mcp.ts',
    'hub/hub-mesh.ts',
    'hub/hub-own-node.ts',
    'hub/hub-telemetry.ts',
    'hub/hub-work.ts',
  ],
  ['hub/hub.ts'],
  ['hub/main.ts'],
];

/** The room of a file of lib/ or hub/: its first folder there, or the file itself when it lies loose. */
export function roomOf(file: string): string {
  const parts = file.split('/');
  return parts.length > 2 ? `${parts[0]}/${parts[1]}/` : file;
}

/**
 * The imports between rooms of lib/ and hub/ that do not point to a lower floor (`importer → imported`,
 * each with its rooms), and the rooms no floor names.
 */
export function roomOrderViolations(
  graph: ImportGraph,
  floors: ReadonlyArray<readonly string[]> = ROOM_FLOORS,
): { upward: string[]; unplaced: string[] } {
  const floorOf = new Map<string, number>();
  floors.forEach((rooms, i) => {
    for (const room of rooms) floorOf.set(room, i);
  });
  const upward: string[] = [];
  const unplaced = new Set<string>();
  const inScope = (f: string) => f.startsWith('lib/') || f.startsWith('hub/');
  for (const [file, targets] of graph) {
    if (!inScope(file)) continue;
    const from = roomOf(file);
    if (!floorOf.has(from)) unplaced.add(from);
    for (const target of targets) {
      const to = roomOf(target);
      if (!inScope(target) || to === from || !floorOf.has(from) || !floorOf.has(to)) continue;
      if (floorOf.get(to)! >= floorOf.get(from)!)
        upward.push(`${file} → ${target} (${from} ↛ ${to})`);
    }
  }
  return { upward, unplaced: [...unplaced].sort() };
}
