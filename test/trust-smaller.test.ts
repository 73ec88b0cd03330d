/**
 * The smaller findings of the second trust review, each against a real process or server:
 * A2A_OPEN=1 with HOST=0.0.0.0 printed only "unexpected error; still serving" and exited 0; a
 * config file's bad value went unchecked while its variable was set; a 30 MB config file was
 * read; an invalid mesh.project left the hub "ready"; a model's answer was read with no size
 * limit (50 MB: node RSS 61 → 238 MiB); a dangling symlink as the data-folder lock blocked start
 * until removed by hand.
 */

import { afterAll, expect, setDefaultTimeout, test } from 'bun:test';
import { mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { chat, MAX_ANSWER_BYTES } from '../lib/model/chat.ts';
import { bunCommand } from './support/bundle.ts';
import { tempDir } from './support/node.ts';
import { ROOT } from './support/processes.ts';
import { startProcess } from './support/process.ts';

setDefaultTimeout(20_000); // per file (Bun scopes it so): real servers and processes are slow on a busy machine

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** A data folder with a fleet file whose members listen on port 0. */
function folder(): { dataDir: string; fleetFile: string } {
  const dataDir = tempDir('lume-a2a-small-');
  dirs.push(dataDir);
  const fleetFile = join(dataDir, 'fleet.json');
  writeFileSync(
    fleetFile,
    JSON.stringify({
      hub: { name: 'a2a', port: 0, role: 'hub', file: 'hub/main.ts' },
      nodes: [{ name: 'scanner', port: 0, role: 'sectors', file: 'node/scanner/index.ts' }],
    }),
  );
  return { dataDir, fleetFile };
}

/** Runs `bun <entry> …args` to its end: exit code and stderr. */
async function runToExit(args: string[], env: Record<string, string>) {
  const { dataDir, fleetFile } = folder();
  const p = Bun.spawn(bunCommand(args), {
    cwd: ROOT,
    env: { ...process.env, DATA_DIR: dataDir, FLEET_FILE: fleetFile, PORT: '0', ...env },
    stdin: 'ignore',
    stdout: 'ignore',
    stderr: 'pipe',
  });
  const [code, err] = await Promise.all([p.exited, new Response(p.stderr).text()]);
  return { code, err };
}

test('A2A_OPEN=1 with HOST=0.0.0.0 is refused at start with the reason and a non-zero exit', async () => {
  const r = await runToExit(['node/main.ts', '--name', 'scanner'], {
    A2A_OPEN: '1',
    HOST: '0.0.0.0',
  });
  expect(r.code).toBe(2);
  expect(r.err).toContain('A2A_OPEN=1 lets anonymous callers act');
  expect(r.err).not.toContain('still serving');
});

test('a config file’s bad value is refused even while its variable is set', async () => {
  const { dataDir } = folder();
  const config = join(dataDir, 'lume.config.json');
  writeFileSync(config, JSON.stringify({ hub: { port: 'not-a-port' } }));
  const r = await runToExit(['hub/main.ts'], { LUME_CONFIG: config, PORT: '0' });
  expect(r.code).toBe(2);
  expect(r.err).toContain('hub.port');
});

test('a config file larger than 1 MiB is refused before it is read', async () => {
  const { dataDir } = folder();
  const config = join(dataDir, 'lume.config.json');
  writeFileSync(config, `{"logLevel":"info","x":"${'x'.repeat(30 * 1024 * 1024)}"}`);
  const r = await runToExit(['hub/main.ts'], { LUME_CONFIG: config });
  expect(r.code).toBe(2);
  expect(r.err).toContain('larger than 1048576 bytes');
});

test('an invalid mesh.project leaves the hub not ready, saying why', async () => {
  const hub = await startProcess('hub/main.ts', [], { MESH_PROJECT: 'Not A Project!' });
  try {
    const ready = await fetch(`${hub.url}/readyz`);
    expect(ready.status).toBe(503);
    expect(JSON.stringify(await ready.json())).toContain('mesh.project');
  } finally {
    await hub.stop();
  }
});

test('a dangling symlink as the data-folder lock does not block the start', async () => {
  const { dataDir, fleetFile } = folder();
  mkdirSync(join(dataDir, 'scanner'), { recursive: true });
  symlinkSync(join(dataDir, 'nowhere', 'gone.lock'), join(dataDir, 'scanner', 'process.lock'));
  const node = await startProcess(
    'node/main.ts',
    ['--name', 'scanner'],
    { PORT: '0' },
    {
      dataDir,
      fleetFile,
    },
  );
  try {
    expect((await fetch(`${node.url}/healthz`)).status).toBe(200);
  } finally {
    await node.stop();
  }
});

test('a model answer larger than the limit is a coded refusal, not read whole', async () => {
  // Resolved when the server sees the reader let the answer go (the stream is cancelled).
  let letGo!: () => void;
  const released = new Promise<void>((r) => (letGo = r));
  const model = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch: () =>
      new Response(
        new ReadableStream({
          pull(c) {
            // An endless answer: a client that read it whole would never return.
            c.enqueue(new Uint8Array(65536).fill(32));
          },
          cancel: () => letGo(),
        }),
        { headers: { 'content-type': 'application/json' } },
      ),
  });
  try {
    const r = await chat(
      { baseUrl: `http://127.0.0.1:${model.port}`, model: 'm' },
      { messages: [{ role: 'user', content: 'hi' }] },
    );
    expect(r.ok ? 'read' : r.error.code).toBe('MODEL_BAD_ANSWER');
    expect(r.ok ? '' : r.error.message).toContain(String(MAX_ANSWER_BYTES));
    // The connection is given up, not left open with the server still writing into it.
    await released;
  } finally {
    model.stop(true);
  }
});
