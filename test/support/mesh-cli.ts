/**
 * @module test/support/mesh-cli — `bun run mesh <args>` as a user runs it, against a real hub on
 * port 0 with one project, in a data folder of its own, the connection remembered
 * (`MESH_PERSIST_CONNECTIONS=1`): `meshCliHub` starts the hub before a file's tests and stops it
 * (and removes the folder) after; `run` spawns the CLI with a terminal to type into.
 */

import { afterAll, beforeAll } from 'bun:test';
import { rmSync } from 'node:fs';
import { bunCommand } from './bundle.ts';
import { startHub, type TestHub } from './mesh.ts';
import { tempDir } from './node.ts';
import { lineReader, ROOT } from './processes.ts';

export interface MeshCliHub {
  /** Set before the first test. */
  hub: TestHub;
  dataDir: string;
  /** `bun run mesh <args> --hub <the hub>`, stdin held open, its output read line by line. */
  run(args: string[]): {
    proc: Bun.Subprocess<'pipe', 'pipe', 'pipe'>;
    out: ReturnType<typeof lineReader>;
    err: ReturnType<typeof lineReader>;
  };
}

/** A hub with project `project`, started before the calling file's tests and stopped after. */
export function meshCliHub(project = 'demo'): MeshCliHub {
  const ctx: MeshCliHub = {
    hub: undefined as unknown as TestHub,
    dataDir: '',
    run(args) {
      const proc = Bun.spawn(bunCommand(['hub/cli/mesh.ts', ...args, '--hub', ctx.hub.url]), {
        cwd: ROOT,
        env: {
          ...process.env,
          DATA_DIR: ctx.dataDir,
          MESH_PERSIST_CONNECTIONS: '1',
          LOG_LEVEL: 'warn',
        },
        stdin: 'pipe',
        stdout: 'pipe',
        stderr: 'pipe',
      });
      return { proc, out: lineReader(proc.stdout), err: lineReader(proc.stderr) };
    },
  };
  beforeAll(async () => {
    ctx.hub = startHub();
    await ctx.hub.store.createProject({ name: project });
    ctx.dataDir = tempDir();
  });
  afterAll(async () => {
    await ctx.hub?.stop();
    if (ctx.dataDir) rmSync(ctx.dataDir, { recursive: true, force: true });
  });
  return ctx;
}
