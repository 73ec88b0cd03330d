/**
 * @module test/support/counter-node — a real node process whose agent counts slowly: `count`
 * makes a task that works, reports COUNT artifact chunks one every EVERY_MS, then completes, so a
 * stream of it lasts long enough to be cut, or its process killed, mid-way. Run as a script it
 * serves (DATA_DIR, TASKS_DATABASE_URL, COUNT, EVERY_MS from the environment) and prints
 * "listening on <url>"; `startCounterNode` spawns it and waits for that line.
 */

import { rmSync } from 'node:fs';
import type { Agent } from '../../lib/a2a/agent.ts';
import { TokenBook } from '../../lib/auth/tokens.ts';
import { createNode } from '../../lib/node/create-node.ts';
import { silentLog } from '../../lib/log.ts';
import { agentNode, tempDir, TEST_TOKEN } from './node.ts';

export interface CounterNode {
  url: string;
  dataDir: string;
  /** SIGKILL: the process ends mid-work, as in a crash; the data folder stays. */
  kill(): Promise<void>;
  /** SIGTERM, then the data folder is removed unless `keep`. */
  stop(keep?: boolean): Promise<void>;
}

/** Spawns a counter node on `dataDir` (and the task database `databaseUrl`, when given). */
export async function startCounterNode(
  env: Record<string, string>,
  dataDir = tempDir(),
): Promise<CounterNode> {
  const proc = Bun.spawn(['bun', import.meta.path], {
    // The test principal's token goes along: the process accepts the tests' calls.
    env: { ...process.env, DATA_DIR: dataDir, COUNTER_TOKEN: TEST_TOKEN, ...env },
    stdin: 'ignore',
    stdout: 'pipe',
    stderr: 'pipe',
  });
  const reader = proc.stdout.getReader();
  let out = '';
  let match: RegExpExecArray | null = null;
  while (!(match = /listening on (http:\/\/\S+)/.exec(out))) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`counter node exited: ${await new Response(proc.stderr).text()}`);
    out += new TextDecoder().decode(value);
  }
  reader.releaseLock();
  void proc.stdout.pipeTo(new WritableStream()).catch(() => {});
  void proc.stderr.pipeTo(new WritableStream()).catch(() => {});
  return {
    url: match[1]!,
    dataDir,
    async kill() {
      proc.kill('SIGKILL');
      await proc.exited;
    },
    async stop(keep = false) {
      proc.kill('SIGTERM');
      await proc.exited;
      if (!keep) rmSync(dataDir, { recursive: true, force: true });
    },
  };
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
