/**
 * One process per data folder, with real processes: a second hub, or a second copy of a node,
 * started on another port over the same data folder stops at once with one line naming the folder
 * and the first one's pid (exit 75, no stack trace) while the first keeps serving; a lock left by
 * a process that is gone (kill -9, or a pid that no longer runs) is taken over. A data folder an
 * older version left open to other users (0755) is the owner's only (0700) once a node starts.
 */

import { afterAll, expect, setDefaultTimeout, test } from 'bun:test';
import {
  chmodSync,
  existsSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { EXIT_DATA_LOCKED, LOCK_FILE } from '../lib/data-lock.ts';
import { bunCommand } from './support/bundle.ts';
import { startProcess, type ServingProcess } from './support/process.ts';

setDefaultTimeout(20_000); // per file (Bun scopes it so): real servers and processes are slow on a busy machine

const ROOT = resolve(import.meta.dir, '..');
const started: ServingProcess[] = [];
afterAll(async () => {
  for (const p of started) if (p.alive()) await p.stop();
});

/** `bun <entry> …args` over the same data folder and fleet file as `first`, run to its exit. */
async function second(first: ServingProcess, entry: string, args: string[] = []) {
  const proc = Bun.spawn(bunCommand([entry, ...args]), {
    cwd: ROOT,
    env: {
      ...process.env,
      FLEET_FILE: join(first.dataDir, 'fleet.json'),
      DATA_DIR: first.dataDir,
      PORT: '0',
    },
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

const lockPid = (folder: string) =>
  Number(readFileSync(join(folder, LOCK_FILE), 'utf8').split('\n')[0]);

test('a second hub on the same data folder, on another port, stops with one line naming the folder and the first pid', async () => {
  const first = await startProcess('hub/main.ts');
  started.push(first);
  const folder = join(first.dataDir, 'hub');
  expect(lockPid(folder)).toBe(first.proc.pid);
  const { code, out, err } = await second(first, 'hub/main.ts');
  expect(code).toBe(EXIT_DATA_LOCKED);
  expect(out).toBe('');
  expect(err).toBe(
    `hub: the data folder ${folder} is in use by process ${first.proc.pid} (another copy of hub); stop it, or give this one its own DATA_DIR.\n`,
  );
  // The first hub noticed nothing.
  expect(first.alive()).toBe(true);
  expect((await fetch(`${first.url}/healthz`)).status).toBe(200);
  expect(lockPid(folder)).toBe(first.proc.pid);
  // A clean stop removes the lock.
  await first.stop();
});

test('a second copy of a node on another port is refused; after kill -9 of the first, a new copy takes the stale lock over', async () => {
  const first = await startProcess('node/main.ts', ['--name', 'scanner']);
  started.push(first);
  const folder = join(first.dataDir, 'scanner');
  const { code, err } = await second(first, 'node/main.ts', ['--name', 'scanner', '--port', '0']);
  expect(code).toBe(EXIT_DATA_LOCKED);
  expect(err.trimEnd().split('\n')).toEqual([
    `scanner: the data folder ${folder} is in use by process ${first.proc.pid} (another copy of scanner); stop it, or give this one its own DATA_DIR.`,
  ]);
  expect((await fetch(`${first.url}/healthz`)).status).toBe(200);
  // Another node of the same fleet shares the data folder's root but not the node's folder.
  const crm = await startProcess(
    'node/main.ts',
    ['--name', 'crm'],
    {},
    { dataDir: first.dataDir, fleetFile: join(first.dataDir, 'fleet.json') },
  );
  started.push(crm);
  expect((await fetch(`${crm.url}/healthz`)).status).toBe(200);

  // kill -9 leaves the lock file behind, naming a process that is gone.
  first.proc.kill('SIGKILL');
  await first.proc.exited;
  expect(lockPid(folder)).toBe(first.proc.pid);
  const again = await startProcess(
    'node/main.ts',
    ['--name', 'scanner'],
    { PORT: '0' },
    { dataDir: first.dataDir, fleetFile: join(first.dataDir, 'fleet.json') },
  );
  started.push(again);
  expect(lockPid(folder)).toBe(again.proc.pid);
  expect((await fetch(`${again.url}/healthz`)).status).toBe(200);
  await again.stop();
  expect(existsSync(join(folder, LOCK_FILE))).toBe(false);
  await crm.stop();
  rmSync(first.dataDir, { recursive: true, force: true });
});

test('a lock naming a pid that no longer runs, or holding garbage, is taken over at start', async () => {
  const gone = Bun.spawn(['true']);
  await gone.exited;
  const first = await startProcess('hub/main.ts');
  started.push(first);
  const folder = join(first.dataDir, 'hub');
  await first.proc.kill('SIGKILL');
  await first.proc.exited;
  for (const stale of [`${gone.pid}\n`, 'not a pid\n', '']) {
    writeFileSync(join(folder, LOCK_FILE), stale);
    const hub = await startProcess(
      'hub/main.ts',
      [],
      { PORT: '0' },
      { dataDir: first.dataDir, fleetFile: join(first.dataDir, 'fleet.json') },
    );
    started.push(hub);
    expect(lockPid(folder)).toBe(hub.proc.pid);
    hub.proc.kill('SIGTERM');
    await hub.proc.exited;
  }
  rmSync(first.dataDir, { recursive: true, force: true });
});

test('a node started alone makes a data folder left open to other users its owner’s only', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'lume-a2a-open-'));
  try {
    const fleetFile = join(dataDir, 'fleet.json');
    writeFileSync(
      fleetFile,
      JSON.stringify({
        hub: { name: 'a2a', port: 0, role: 'hub', file: 'hub/main.ts' },
        nodes: [{ name: 'scanner', port: 0, role: 'sectors', file: 'node/scanner/index.ts' }],
      }),
    );
    chmodSync(dataDir, 0o755);
    const node = await startProcess(
      'node/main.ts',
      ['--name', 'scanner'],
      {},
      { dataDir, fleetFile },
    );
    started.push(node);
    expect(statSync(dataDir).mode & 0o777).toBe(0o700);
    await node.stop();
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});
