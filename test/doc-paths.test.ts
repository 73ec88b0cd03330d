/**
 * The docs name the repository's files as they are: every path of a source, test, bench,
 * fixture or console file that README.md or a page of docs/ mentions exists, so a move or a split
 * that forgets its docs fails here (a split once left docs/limits.md naming a gRPC codec file that
 * had become two).
 */

import { expect, setDefaultTimeout, test } from 'bun:test';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

setDefaultTimeout(20_000); // per file (Bun scopes it so): real servers and processes are slow on a busy machine

const ROOT = resolve(import.meta.dir, '..');

/** Paths a doc names that are not in the repository on purpose, each with why. */
const NOT_IN_THE_REPOSITORY: Record<string, string> = {
  'node/host/index.ts': 'docs/add-a-node.md: what `bun run new-node host` writes',
  'node/host/queries.ts': 'docs/add-a-node.md: what `bun run new-node host` writes',
  'test/host.test.ts': 'docs/add-a-node.md: what `bun run new-node host` writes',
};

const PATH =
  /(?<![\w./-])(?:lib|hub|node|test|bench|console|fixtures|\.ci)\/[\w./-]*?\.(?:json|html|css|ts|js|md|sh|proto)(?![\w.])/g;

function docs(): string[] {
  return [
    'README.md',
    ...readdirSync(join(ROOT, 'docs'))
      .filter((f) => f.endsWith('.md'))
      .map((f) => `docs/${f}`),
  ];
}

test('every repository file the docs name exists', () => {
  const missing: string[] = [];
  let named = 0;
  for (const doc of docs()) {
    for (const [path] of readFileSync(join(ROOT, doc), 'utf8').matchAll(PATH)) {
      named++;
      if (!existsSync(join(ROOT, path)) && !(path in NOT_IN_THE_REPOSITORY))
        missing.push(`${doc}: ${path}`);
    }
  }
  expect(missing).toEqual([]);
  expect(named).toBeGreaterThan(100); // the pattern still finds the docs' paths
});

test('each path kept out of the check is still named by a doc, and still absent', () => {
  const text = docs()
    .map((d) => readFileSync(join(ROOT, d), 'utf8'))
    .join('\n');
  for (const path of Object.keys(NOT_IN_THE_REPOSITORY)) {
    expect(text.includes(path)).toBe(true);
    expect(existsSync(join(ROOT, path))).toBe(false);
  }
});
