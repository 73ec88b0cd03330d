/**
 * Preloaded before every test file (bunfig.toml). Suites start real servers, child processes and
 * a browser, so a test may take longer than Bun's default 5 s on a slow or busy machine. The run
 * gets its own temporary folder (support/run-scope.ts); after the last file, anything a test left
 * there, or any process of the suite still running, fails the run and is cleaned up.
 */
import { afterAll, setDefaultTimeout } from 'bun:test';
import { closeRunScope, openRunScope } from './run-scope.ts';

setDefaultTimeout(20_000);

const root = openRunScope();
afterAll(async () => {
  const left = await closeRunScope(root);
  if (left.length) throw new Error(`the tests left behind (now removed):\n  ${left.join('\n  ')}`);
});
