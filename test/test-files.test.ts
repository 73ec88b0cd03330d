/**
 * The test files themselves: each sets its own generous per-test timeout, since Bun applies
 * `setDefaultTimeout` only to the file that calls it (a preload's call reaches the first file
 * alone), and a suite that starts servers would otherwise fail at 5 s on a busy machine.
 */

import { expect, setDefaultTimeout, test } from 'bun:test';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

setDefaultTimeout(20_000); // per file (Bun scopes it so): real servers and processes are slow on a busy machine

test('every test file sets its default timeout at top level', () => {
  const files = readdirSync(import.meta.dir).filter((f) => f.endsWith('.test.ts'));
  expect(files.length).toBeGreaterThan(1);
  const missing = files.filter(
    (f) => !/^setDefaultTimeout\(\d[\d_]*\);/m.test(readFileSync(join(import.meta.dir, f), 'utf8')),
  );
  expect(missing).toEqual([]);
});
