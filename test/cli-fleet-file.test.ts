/**
 * Every command reads the fleet the way the hub does: FLEET_FILE, else the `DATA_DIR/fleet.json`
 * that `bun run fleet add` writes, else the project's fixtures. Run as real processes (`bun run
 * mesh`, `bun run keys`) with no FLEET_FILE, against a real hub on port 0 named only in the data
 * folder's fleet file.
 */

import { afterAll, expect, setDefaultTimeout, test } from 'bun:test';
import { rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { bunCommand } from './support/bundle.ts';
import { startHub } from './support/mesh.ts';
import { tempDir } from './support/node.ts';

setDefaultTimeout(20_000); // per file (Bun scopes it so): real servers and processes are slow on a busy machine

const ROOT = resolve(import.meta.dir, '..');
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** Runs `bun <ROOT>/<script> …args` from an empty folder (no config file) with only DATA_DIR set. */
async function run(
  script: string,
  args: string[],
  dataDir: string,
): Promise<{ code: number; out: string; err: string }> {
  const env: Record<string, string | undefined> = { ...process.env, DATA_DIR: dataDir };
  for (const k of ['FLEET_FILE', 'MESH_HUB_URL', 'LUME_CONFIG', 'MESH_TOKEN']) delete env[k];
  const proc = Bun.spawn(bunCommand([join(ROOT, script), ...args]), {
    cwd: dataDir,
    env,
    stdin: 'ignore',
    stdout: 'pipe',
    stderr: 'pipe',
  });
  const [out, err, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  return { code, out, err };
}

function dataFolder(): string {
  const d = tempDir('lume-a2a-cli-fleet-');
  dirs.push(d);
  return d;
}

test('`bun run mesh` finds the hub in DATA_DIR/fleet.json, as the hub itself would', async () => {
  const hub = startHub();
  try {
    const dataDir = dataFolder();
    writeFileSync(
      join(dataDir, 'fleet.json'),
      JSON.stringify({
        hub: { name: 'a2a', port: hub.port, role: 'hub', file: 'hub/main.ts' },
        nodes: [
          {
            name: 'far',
            port: 1,
            role: 'elsewhere',
            file: 'node/far.ts',
            url: 'http://127.0.0.1:1',
            remote: true,
          },
        ],
      }),
    );
    const { code, out, err } = await run('hub/cli/mesh.ts', ['hub'], dataDir);
    expect(err).toBe('');
    expect(code).toBe(0);
    expect(out).toStartWith(`hub ${hub.url} protocol 3 pid ${process.pid} `);
  } finally {
    await hub.stop();
  }
});

test('a malformed DATA_DIR/fleet.json stops every command with the same one line, exit 2', async () => {
  const dataDir = dataFolder();
  writeFileSync(join(dataDir, 'fleet.json'), JSON.stringify({ hub: { name: 'a2a' }, nodes: [] }));
  for (const [script, args, command] of [
    ['hub/cli/mesh.ts', ['peers'], 'mesh'],
    ['hub/cli/keys.ts', ['list'], 'keys'],
  ] as const) {
    const { code, out, err } = await run(script, [...args], dataDir);
    expect({ code, out, err }).toEqual({
      code: 2,
      out: '',
      err: `${command}: fleet: hub.port must be a port number\n`,
    });
  }
});
