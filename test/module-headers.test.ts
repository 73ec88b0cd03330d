/**
 * Every source file of lib/, hub/, node/ and console/ opens with a header whose `@module` names
 * its own path (from the repository root, without the extension), so a file moved without its
 * header, or a header copied from another file, fails here.
 */

import { expect, setDefaultTimeout, test } from 'bun:test';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

setDefaultTimeout(20_000); // per file (Bun scopes it so)

const ROOT = join(import.meta.dir, '..');

function sources(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    if (name === 'node_modules') continue;
    const full = join(dir, name);
    if (statSync(full).isDirectory()) out.push(...sources(full));
    else if (/\.(ts|js)$/.test(name)) out.push(relative(ROOT, full));
  }
  return out;
}

/** The `@module` name of a file's opening comment, or why there is none. */
function headerOf(text: string): string {
  const opening = /^(?:#![^\n]*\n)?\s*\/\*\*([\s\S]*?)\*\//.exec(text);
  if (!opening) return '(no opening comment)';
  return /@module (\S+)/.exec(opening[1]!)?.[1] ?? '(no @module in the opening comment)';
}

test('every @module header names its own path', () => {
  const files = ['lib', 'hub', 'node', 'console'].flatMap((d) => sources(join(ROOT, d)));
  expect(files.length).toBeGreaterThan(200);
  const wrong = files
    .map((f) => ({ f, header: headerOf(readFileSync(join(ROOT, f), 'utf8')) }))
    .filter(({ f, header }) => header !== f.replace(/(\.d)?\.(ts|js)$/, ''))
    .map(({ f, header }) => `${f}: ${header}`);
  expect(wrong).toEqual([]);
});

test('the check reads the opening comment only, and says what is missing', () => {
  expect(headerOf('/**\n * @module lib/x — what it is.\n */\nexport {};')).toBe('lib/x');
  expect(headerOf('#!/usr/bin/env bun\n/** @module hub/main — entry. */')).toBe('hub/main');
  expect(headerOf('// @module lib/x\nexport {};')).toBe('(no opening comment)');
  expect(headerOf('/** Something. */\n/** @module lib/x */')).toBe(
    '(no @module in the opening comment)',
  );
});
