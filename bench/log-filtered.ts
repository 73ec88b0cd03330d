/**
 * @module bench/log-filtered — what a log line below the level costs its caller: 200,000 `debug`
 * lines with four fields (the hub's per-call `peer call`) into `consoleLog` at level `info`,
 * three rounds; prints µs per line. Nothing is written (every line is filtered).
 *
 * Usage: bun bench/log-filtered.ts [--tree <dir>] (another source tree's lib/log.ts, side by side)
 */

import { join, resolve } from 'node:path';

const at = process.argv.indexOf('--tree');
const tree = at > 0 ? resolve(process.argv[at + 1]!) : resolve(import.meta.dir, '..');
const { consoleLog } = (await import(join(tree, 'lib/log.ts'))) as typeof import('../lib/log.ts');

const log = consoleLog('bench', 'info');
const fields = { from: 'a2a', capability: 'scanner.status', ok: true, ms: 1 };
const LINES = 200_000;
for (let round = 1; round <= 3; round++) {
  const t0 = performance.now();
  for (let i = 0; i < LINES; i++) log('debug', 'peer call', fields);
  const us = ((performance.now() - t0) * 1000) / LINES;
  console.log(`round ${round}: ${us.toFixed(3)} µs per filtered line (${tree})`);
}
