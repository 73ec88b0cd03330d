/**
 * Preloaded before every test file (bunfig.toml). A file runs in a temporary folder of its own run
 * scope (support/run-scope.ts); after it, anything a test left there, or any process of the suite
 * still running, fails the run and is cleaned up. Bun runs this preload's `afterAll` once at the
 * end of a plain `bun test`, and after every file of a `--parallel` worker, so each close opens the
 * next scope at once: the next file's top-level code (which makes its folders on import) finds
 * one. The last one, empty, is swept by the next run (run-scope.ts). The per-test timeout is not set here: Bun scopes `setDefaultTimeout` to the file that calls
 * it, so each test file sets its own (test/test-files.test.ts checks that they do).
 */
import { afterAll } from 'bun:test';
import { removePackedTarball } from './packed-app.ts';
import { closeRunScope, openRunScope } from './run-scope.ts';

let root = openRunScope();
afterAll(async () => {
  removePackedTarball();
  const left = await closeRunScope(root);
  root = openRunScope();
  if (left.length) throw new Error(`the tests left behind (now removed):\n  ${left.join('\n  ')}`);
});
