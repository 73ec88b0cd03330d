/**
 * Test support: one real process of the conformance node (`bun node/main.ts --name conformance
 * --port 0`), on a task database or its own data folder, with the test principal's token, started
 * and awaited until it listens; stopped with SIGTERM or killed with SIGKILL (a crash).
 */

import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { bunCommand } from './bundle.ts';
import { tempDir, writeTestToken } from './node.ts';

export interface NodeProcess {
  url: string;
  /** Its gRPC port, when it serves gRPC (`GRPC_PORT`). */
  grpcPort?: number;
  dataDir: string;
  /** SIGTERM, then the data folder is removed unless `keep`. */
  stop(keep?: boolean): Promise<void>;
  /** SIGKILL: the process ends mid-work, as in a crash; the data folder stays. */
  kill(): Promise<void>;
}

/** Starts the conformance node; `env` adds settings (TASKS_DATABASE_URL, limits). */
export async function startNodeProcess(
  env: Record<string, string> = {},
  dataDir = tempDir(),
): Promise<NodeProcess> {
  if (!existsSync(join(dataDir, 'keys', 'tokens.json'))) writeTestToken(dataDir);
  const proc = Bun.spawn(bunCommand(['node/main.ts', '--name', 'conformance', '--port', '0']), {
    cwd: join(import.meta.dir, '../..'),
    env: { ...process.env, DATA_DIR: dataDir, ...env },
    stdin: 'ignore',
    stdout: 'pipe',
    stderr: 'pipe',
  });
  const reader = proc.stdout.getReader();
  let out = '';
  let match: RegExpExecArray | null = null;
  while (!(match = /listening on (http:\/\/\S+)[^\n]*\n/.exec(out))) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`node exited: ${await new Response(proc.stderr).text()}`);
    out += new TextDecoder().decode(value);
  }
  reader.releaseLock();
  // Drained from here on, so a chatty process never blocks on a full pipe.
  void proc.stdout.pipeTo(new WritableStream()).catch(() => {});
  void proc.stderr.pipeTo(new WritableStream()).catch(() => {});
  const grpcPort = /gRPC on port (\d+)/.exec(out)?.[1];
  return {
    url: match[1]!,
    ...(grpcPort ? { grpcPort: Number(grpcPort) } : {}),
    dataDir,
    async stop(keep = false) {
      proc.kill('SIGTERM');
      await proc.exited;
      if (!keep) rmSync(dataDir, { recursive: true, force: true });
    },
    async kill() {
      proc.kill('SIGKILL');
      await proc.exited;
    },
  };
}
