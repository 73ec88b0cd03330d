/**
 * Preloaded before every test file (bunfig.toml). The run gets its own temporary folder
 * (support/run-scope.ts); after the last file, anything a test left there, or any process of the
 * suite still running, fails the run and is cleaned up. The per-test timeout is not set here:
 * Bun scopes `setDefaultTimeout` to the file that calls it, so each test file sets its own
 * (test/test-files.test.ts checks that they do).
 */
import { afterAll } from 'bun:test';
import { removePackedTarball } from './packed-app.ts';
import { closeRunScope, openRunScope } from './run-scope.ts';

const root = openRunScope();
afterAll(async () => {
  // The package's tarball is shared by the files that install it (one `bun pm pack` per run).
  removePackedTarball();
  const left = await closeRunScope(root);
  if (left.length) throw new Error(`the tests left behind (now removed):\n  ${left.join('\n  ')}`);
});
