// The scanner node (node/scanner) on its fixtures, outside any fleet, its tasks in its task log
// in DATA_DIR (or a temporary folder); the keyword agent answers (no model). Prints "LISTENING <port>".
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { serveNode } from '../../lib/node/serve-node.ts';
import scanner from '../../node/scanner/index.ts';

const running = await serveNode(scanner, {
  dataDir: process.env.DATA_DIR ?? mkdtempSync(join(tmpdir(), 'lume-a2a-bench-')),
  port: Number(process.env.PORT ?? 0),
  grpc: false,
  setup: { fixturesDir: join(import.meta.dir, '../../fixtures') },
});
console.log(`LISTENING ${running.port}`);
