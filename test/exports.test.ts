/**
 * @module test/exports — every exported value of lib/, hub/ and node/ is imported by some other file
 * (of lib/, hub/, node/, test/, bench/ or console/); the package's entry points (lib/kit/) are
 * exempt, and what they re-export counts as imported. A value only its own file uses is not exported.
 */

import { describe, expect, setDefaultTimeout, test } from 'bun:test';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { unusedExports } from './support/exports.ts';

setDefaultTimeout(20_000); // per file (Bun scopes it so): reading the tree is slow on a busy machine

const root = resolve(import.meta.dir, '..');
// The fixture's imports are spelled with this so the tree's import graph does not read them as real ones.
const from = (spec: string) => `from ${"'"}${spec}'`;
const OWNERS = ['lib', 'hub', 'node'];
const USERS = ['lib', 'hub', 'node', 'test', 'bench', 'console'];

describe('exports', () => {
  test('every exported value of lib/, hub/ and node/ is imported by another file', () => {
    expect(unusedExports(root, OWNERS, USERS, ['lib/kit/'])).toEqual([]);
  });

  test('read named, renamed, re-exported, namespace and dynamic imports; not types, comments or text', () => {
    const dir = mkdtempSync(join(tmpdir(), 'exports-'));
    const put = (file: string, text: string) => {
      mkdirSync(dirname(join(dir, file)), { recursive: true });
      writeFileSync(join(dir, file), text);
    };
    try {
      put(
        'lib/a.ts',
        [
          'export const named = 1;',
          'export function renamed() {}',
          'export class Spaced {}',
          'export const dynamic = 2;',
          'export const required = 5;',
          'export async function lonely() {}',
          'export const onlyTyped = 3;',
          'export const onlyCommented = 4;',
          'export type Shape = {};',
          'const text = `',
          'export const inText = 1;',
          '`;',
        ].join('\n'),
      );
      put('lib/b.ts', 'export const viaNamespace = 1;\nexport const notReached = 2;\n');
      put('lib/kit/entry.ts', `export { Spaced } ${from('../a.ts')};\nexport const entry = 1;\n`);
      put(
        'hub/use.ts',
        [
          `import { named, renamed as r, type onlyTyped } ${from('../lib/a.ts')};`,
          `import * as b ${from('../lib/b.ts')};`,
          `// import { onlyCommented } ${from('../lib/a.ts')};`,
          'b.viaNamespace;',
        ].join('\n'),
      );
      put(
        'test/t.test.ts',
        `const { dynamic } = await import(${"'"}../lib/a.ts');\nif (lazy) {\n  const { required } = require(${"'"}../lib/a.ts');\n}\n`,
      );
      expect(unusedExports(dir, OWNERS, USERS, ['lib/kit/'])).toEqual([
        'lib/a.ts#lonely',
        'lib/a.ts#onlyCommented',
        'lib/a.ts#onlyTyped',
        'lib/b.ts#notReached',
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
