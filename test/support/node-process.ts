/**
 * Test support: a node as a real process, started and awaited until it prints `listening on
 * <url>`, its output drained from then on; stopped with SIGTERM or killed with SIGKILL (a crash).
 * `startNodeProcess` runs the conformance node (`bun node/main.ts --name conformance --port 0`)
 * on a task database or its own data folder, with the test principal's token; `spawnListening`
 * is the start any such process shares (test/support/counter-node.ts too).
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

/**
 * Spawns `cmd` on `dataDir` (its DATA_DIR, with `env` over the test process's environment) and
 * resolves once it prints `listening on <url>`; rejects with its stderr if it exits first.
 */
export async function spawnListening(
  cmd: string[],
  dataDir: string,
  env: Record<string, string>,
  cwd?: string,
): Promise<NodeProcess> {
  const proc = Bun.spawn(cmd, {
    ...(cwd ? { cwd } : {}),
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
    if (done) throw new Error(`${cmd.join(' ')} exited: ${await new Response(proc.stderr).text()}`);
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

/** Starts the conformance node; `env` adds settings (TASKS_DATABASE_URL, limits). */
export function startNodeProcess(
  env: Record<string, string> = {},
  dataDir = tempDir(),
): Promise<NodeProcess> {
  // The helpers call as the test principal, as a client with a token would.
  if (!existsSync(join(dataDir, 'keys', 'tokens.json'))) writeTestToken(dataDir);
  return spawnListening(
    bunCommand(['node/main.ts', '--name', 'conformance', '--port', '0']),
    dataDir,
    env,
    join(import.meta.dir, '../..'),
  );
}
