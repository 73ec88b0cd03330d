/**
 * @module test/support/counter-node — a real node process whose agent counts slowly: `count`
 * makes a task that works, reports COUNT artifact chunks one every EVERY_MS, then completes, so a
 * stream of it lasts long enough to be cut, or its process killed, mid-way. Run as a script it
 * serves (DATA_DIR, TASKS_DATABASE_URL, COUNT, EVERY_MS from the environment) and prints
 * "listening on <url>"; `startCounterNode` spawns it and waits for that line.
 */

import type { Agent } from '../../lib/a2a/agent.ts';
import { TokenBook } from '../../lib/auth/tokens.ts';
import { createNode } from '../../lib/node/create-node.ts';
import { silentLog } from '../../lib/log.ts';
import { agentNode, tempDir, TEST_TOKEN } from './node.ts';
import { type NodeProcess, spawnListening } from './node-process.ts';

/** Spawns a counter node on `dataDir` (and the task database TASKS_DATABASE_URL in `env`, when given). */
export function startCounterNode(
  env: Record<string, string>,
  dataDir = tempDir(),
): Promise<NodeProcess> {
  // The test principal's token goes along: the process accepts the tests' calls.
  return spawnListening(['bun', import.meta.path], dataDir, { COUNTER_TOKEN: TEST_TOKEN, ...env });
}

if (import.meta.main) {
  const count = Number(process.env.COUNT ?? 200);
  const every = Number(process.env.EVERY_MS ?? 10);
  const counter: Agent = {
    async handle(ctx) {
      ctx.working();
      for (let i = 0; i < count; i++) {
        await new Promise((r) => setTimeout(r, every));
        ctx.artifact(
          { artifactId: `count-${Math.floor(i / 100)}`, parts: [{ text: `${i} ` }] },
          { append: i % 100 > 0, lastChunk: i % 100 === 99 },
        );
      }
      ctx.complete();
    },
    // A restart keeps nothing running: the task is failed, its log says so.
  };
  const databaseUrl = process.env.TASKS_DATABASE_URL;
  const node = createNode(agentNode('counter', counter), {
    dataDir: process.env.DATA_DIR!,
    port: 0,
    log: silentLog,
    access: { tokens: TokenBook.of({ tester: process.env.COUNTER_TOKEN! }) },
    ...(databaseUrl ? { tasksDatabaseUrl: databaseUrl } : {}),
  });
  const running = await node.start();
  console.log(`listening on ${running.url}`);
  process.on('SIGTERM', () => void running.stop().then(() => process.exit(0)));
}
