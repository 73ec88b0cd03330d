/**
 * The dependency direction, checked on every run: no import cycles anywhere in lib/, node/, hub/,
 * test/ or bench/, lib/ imports nothing from hub/ or node/, hub/ nothing from node/, and the rooms
 * (folders) of lib/ and hub/ keep their floors (test/support/imports.ts ROOM_FLOORS), so no two import each other.
 */

import { describe, expect, setDefaultTimeout, test } from 'bun:test';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import {
  cyclesOf,
  layerViolations,
  readImportGraph,
  roomOrderViolations,
  specifiersOf,
  type ImportGraph,
} from './support/imports.ts';

setDefaultTimeout(20_000); // per file (Bun scopes it so): real servers and processes are slow on a busy machine

const ROOT = resolve(import.meta.dir, '..');
const { graph, unresolved } = readImportGraph(ROOT, ['lib', 'node', 'hub', 'test', 'bench']);

describe('the import graph of the tree', () => {
  test('is read from every folder, and every relative import names a file', () => {
    for (const folder of ['lib/', 'node/', 'hub/', 'test/', 'bench/'])
      expect([...graph.keys()].some((f) => f.startsWith(folder))).toBe(true);
    expect(graph.get('lib/a2a/engine/engine.ts')).toContain('lib/a2a/store/task-store.ts');
    expect(unresolved).toEqual([]);
  });

  test('has no cycle', () => {
    expect(cyclesOf(graph)).toEqual([]);
  });

  test('points one way: lib/ below hub/ and node/, hub/ not above node/', () => {
    expect(layerViolations(graph)).toEqual([]);
  });

  test('keeps the rooms of lib/ and hub/ in floors: each imports only rooms below it', () => {
    expect(roomOrderViolations(graph)).toEqual({ upward: [], unplaced: [] });
  });
});

describe('the checks themselves', () => {
  test('read static, type-only, re-export, side-effect and literal dynamic imports, not comments', () => {
    const text = readFileSync(join(ROOT, 'fixtures/import-graph/sample.txt'), 'utf8');
    expect(specifiersOf(text)).toEqual([
      './a.ts',
      '../b.ts',
      './cd.ts',
      './e.ts',
      './f.ts',
      './g.ts',
      './h.ts',
      './i.ts',
    ]);
  });

  test('find a cycle, a self-import and a layer violation', () => {
    const g: ImportGraph = new Map([
      ['lib/x.ts', ['lib/y.ts']],
      ['lib/y.ts', ['lib/z.ts']],
      ['lib/z.ts', ['lib/x.ts', 'hub/h.ts']],
      ['hub/h.ts', ['node/n.ts', 'hub/h.ts']],
      ['node/n.ts', ['lib/x.ts']],
    ]);
    expect(cyclesOf(g)).toEqual([['hub/h.ts', 'lib/x.ts', 'lib/y.ts', 'lib/z.ts', 'node/n.ts']]);
    expect(cyclesOf(new Map([['a.ts', ['a.ts']]]))).toEqual([['a.ts']]);
    expect(layerViolations(g)).toEqual(['lib/z.ts → hub/h.ts', 'hub/h.ts → node/n.ts']);
  });

  test('find two rooms that import each other, a sideways import and a room on no floor', () => {
    const g: ImportGraph = new Map([
      ['lib/a/x.ts', ['lib/b/y.ts', 'lib/a/z.ts']],
      ['lib/b/y.ts', ['lib/a/z.ts', 'lib/c.ts']],
      ['lib/c.ts', ['lib/d/w.ts']],
      ['lib/d/w.ts', []],
    ]);
    const floors = [['lib/a/'], ['lib/b/', 'lib/c.ts']];
    expect(roomOrderViolations(g, floors)).toEqual({
      upward: [
        'lib/a/x.ts → lib/b/y.ts (lib/a/ ↛ lib/b/)',
        'lib/b/y.ts → lib/c.ts (lib/b/ ↛ lib/c.ts)',
      ],
      unplaced: ['lib/d/'],
    });
  });
});
