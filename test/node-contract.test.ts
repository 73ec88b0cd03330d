/**
 * The node contract: `capability()` derives argument types from the specs and hands `summarize`
 * what `run` returned (the `@ts-expect-error` lines fail `tsc` if a wrong use type-checks);
 * `run` sees only checked arguments; `defineNode` marks a factory that `loadNode` accepts, and
 * every node file of the fleet accepts the standard setup.
 */

import { expect, setDefaultTimeout, test } from 'bun:test';
import { rmSync } from 'node:fs';
import { Catalog } from '../lib/catalog/catalog.ts';
import { capability, type ArgsOf } from '../lib/catalog/capability.ts';
import { defineNode, type NodeFactory } from '../lib/node/define-node.ts';
import { importNode, loadNode } from '../lib/node/load-node.ts';
import cicdkit from '../node/cicdkit/index.ts';
import conformance from '../node/conformance.ts';
import crm from '../node/crm/index.ts';
import lan from '../node/lan/index.ts';
import resolve from '../node/resolve/index.ts';
import scanner from '../node/scanner/index.ts';
import talentlens from '../node/talentlens/index.ts';
import tsmHub from '../node/tsm-hub/index.ts';
import { FLEET_FILE, SETUP } from './support/fleet-nodes.ts';
import { FIXTURES, tempDir } from './support/node.ts';

setDefaultTimeout(20_000); // per file (Bun scopes it so): real servers and processes are slow on a busy machine

const specs = {
  code: { type: 'string', description: 'Stock code', required: true },
  unit: { type: 'string', description: 'Unit', enum: ['KiB', 'MiB'] },
  limit: { type: 'integer', description: 'At most' },
  live: { type: 'boolean', description: 'Read the machine', required: true },
} as const;

test('argument types follow the specs: required, optional, enum literals, numbers, booleans', () => {
  const args: ArgsOf<typeof specs> = { code: '600519', live: false };
  const unit: 'KiB' | 'MiB' | undefined = args.unit;
  const limit: number | undefined = args.limit;
  // @ts-expect-error a string argument is not a number
  const wrong: number = args.code;
  // @ts-expect-error an optional argument may be absent
  const present: string = args.unit;
  // @ts-expect-error a required argument cannot be left out
  const missing: ArgsOf<typeof specs> = { code: '600519' };
  // @ts-expect-error a value outside the enum is not an argument value
  const outside: ArgsOf<typeof specs> = { code: '1', live: true, unit: 'GiB' };
  expect([unit, limit, wrong, present, missing, outside].length).toBe(6);
});

test('run and summarize are typed by the declaration; a wrong use does not compile', async () => {
  const quote = capability({
    id: 'test.quote',
    name: 'Quote',
    description: 'A typed capability',
    tags: ['test'],
    keywords: ['quote'],
    readOnly: true,
    args: { code: specs.code, unit: specs.unit },
    run: async (args) => {
      // @ts-expect-error run's arguments are only those declared
      const unknown = args.nope;
      // @ts-expect-error code is a string
      const doubled: number = args.code * 2;
      return {
        code: args.code,
        unit: args.unit ?? 'KiB',
        size: 4,
        extra: [unknown, doubled].length,
      };
    },
    // summarize gets run's awaited result, not a promise and not unknown.
    summarize: (r) => `${r.code} ${r.size} ${r.unit}`,
  });
  capability({
    id: 'test.wrong',
    name: 'Wrong',
    description: 'Reads a field run does not return',
    tags: ['test'],
    keywords: [],
    readOnly: true,
    args: {},
    run: () => ({ total: 1 }),
    // @ts-expect-error summarize sees exactly what run returns
    summarize: (r) => r.count,
  });
  const catalog = new Catalog([quote]);
  expect(await catalog.invoke('test.quote', { code: '600519', unit: 'MiB' })).toEqual({
    ok: true,
    result: { code: '600519', unit: 'MiB', size: 4, extra: 2 },
    summary: '600519 4 MiB',
  });
});

test('run sees only checked arguments: an optional one sent as null arrives absent', async () => {
  let seen: unknown;
  const catalog = new Catalog([
    capability({
      id: 'test.seen',
      name: 'Seen',
      description: 'Echoes its arguments',
      tags: ['test'],
      keywords: [],
      readOnly: true,
      args: { code: specs.code, unit: specs.unit },
      run: (args) => (seen = args),
    }),
  ]);
  expect((await catalog.invoke('test.seen', { code: 'a', unit: null })).ok).toBe(true);
  expect(seen).toEqual({ code: 'a' });
  expect(Object.keys(seen as object)).toEqual(['code']);
  // The checker still refuses what it refused before; run never sees it.
  expect(await catalog.invoke('test.seen', { code: 1 })).toMatchObject({
    ok: false,
    error: { code: 'BAD_ARGS' },
  });
  expect(await catalog.invoke('test.seen', { code: 'a', unit: 'GiB' })).toMatchObject({
    ok: false,
    error: { code: 'BAD_ARGS', message: 'argument unit must be one of KiB, MiB' },
  });
});

test('names every object inherits (constructor, toString, __proto__) are unknown arguments, as any other', async () => {
  let ran = 0;
  const catalog = new Catalog([
    capability({
      id: 'test.own',
      name: 'Own',
      description: 'Counts its runs',
      tags: ['test'],
      keywords: [],
      readOnly: true,
      args: { code: specs.code },
      run: () => ++ran,
    }),
  ]);
  const answers = [];
  for (const name of ['constructor', 'toString', '__proto__', 'hasOwnProperty'])
    answers.push(await catalog.invoke('test.own', JSON.parse(`{"code":"a","${name}":"x"}`)));
  expect(answers.map((a) => (a.ok ? 'ran' : [a.error.code, a.error.message]))).toEqual([
    ['BAD_ARGS', 'unknown argument constructor'],
    ['BAD_ARGS', 'unknown argument toString'],
    ['BAD_ARGS', 'unknown argument __proto__'],
    ['BAD_ARGS', 'unknown argument hasOwnProperty'],
  ]);
  expect(ran).toBe(0);
});

test('every node file of the fleet accepts the standard setup', () => {
  // Type-level: each factory is assignable to the loader's one signature.
  const factories: NodeFactory[] = [
    crm,
    scanner,
    tsmHub,
    cicdkit,
    lan,
    talentlens,
    resolve,
    conformance,
  ];
  expect(factories.map((f) => f(SETUP).name)).toEqual([
    'crm',
    'scanner',
    'tsm-hub',
    'cicdkit',
    'lan',
    'talentlens',
    'resolve',
    'conformance',
  ]);
  // @ts-expect-error a node that reads its fixtures needs them
  expect(() => scanner({})).toThrow();
});

test('defineNode builds the catalog; options are required only when the node reads some', () => {
  const bare = defineNode(() => ({
    name: 'bare',
    description: 'No options',
    capabilities: [
      capability({
        id: 'bare.ping',
        name: 'Ping',
        description: 'p',
        tags: ['t'],
        keywords: [],
        readOnly: true,
        args: {},
        run: () => 'pong',
      }),
    ],
  }));
  const def = bare();
  expect([def.name, def.catalog.skills().map((s) => s.id), def.agentBacked]).toEqual([
    'bare',
    ['bare.ping'],
    undefined,
  ]);
  const broken = defineNode(() => ({
    name: 'broken',
    description: 'No capabilities',
    capabilities: [],
  }));
  expect(() => broken()).toThrow('catalog: a node needs at least one capability');
});

test('loadNode loads a node file by path with the setup; a module that is not a node is refused', async () => {
  const dataDir = tempDir('lume-a2a-contract-');
  try {
    const def = await loadNode('node/scanner/index.ts', {
      fixturesDir: FIXTURES,
      fleetFile: FLEET_FILE,
      dataDir,
    });
    expect([def.name, def.catalog.find('stock.quote')?.name]).toEqual(['scanner', 'Stock quote']);
    expect((await importNode('node/talentlens/index.ts'))(SETUP).name).toBe('talentlens');
    await expect(importNode('node/scanner/queries.ts')).rejects.toThrow(
      'node/scanner/queries.ts is not a node file: its default export must be defineNode(...)',
    );
    await expect(importNode('node/nowhere.ts')).rejects.toThrow();
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});
