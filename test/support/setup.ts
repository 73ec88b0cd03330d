/**
 * Preloaded before every test file (bunfig.toml): suites start real servers, child processes and
 * a browser, so a test may take longer than Bun's default 5 s on a slow or busy machine.
 */
import { setDefaultTimeout } from 'bun:test';

setDefaultTimeout(20_000);
