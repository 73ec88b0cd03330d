/**
 * The kit as an app installs it: `bun pm pack` makes the tarball (declarations built by its
 * prepack), a throw-away app in a temporary folder outside the repository installs it (from Bun's
 * cache, no network), type-checks against the shipped `.d.ts`, defines a node in one file and
 * serves it; the official SDK client talks to it, the package's own client calls it in both wire
 * versions, the node mounts inside the app's own Bun.serve, and the same app joins a fleet whose
 * hub lists it and calls it signed.
 */

import { Database } from 'bun:sqlite';
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import {
  cpSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { Role, TaskState } from '@a2a-js/sdk';
import { ClientFactory } from '@a2a-js/sdk/client';
import { loadFleet } from '../lib/config/fleet-file.ts';
import { memoryLog } from '../lib/log.ts';
import { openMeshDatabase } from '../lib/mesh/schema.ts';
import { createSqliteMeshStore } from '../lib/mesh/sqlite-store.ts';
import { ensureKeys, loadPeerIdentity } from '../lib/peer/keys.ts';
import { createHub } from '../hub/hub.ts';
import { localInvoke } from './support/fleet.ts';
import { tempDir, testTokens } from './support/node.ts';
import { packedTarball, run } from './support/packed-app.ts';

setDefaultTimeout(20_000); // per file (Bun scopes it so): real servers and processes are slow on a busy machine

const ROOT = resolve(import.meta.dir, '..');
const work = tempDir('lume-a2a-pack-');
const appDir = join(work, 'app');
const dataDir = join(work, 'data');
const procs: Bun.Subprocess[] = [];

/** Starts `bun <file>` in the app and waits for its `listening on <url>` line. */
async function startApp(file: string, env: Record<string, string> = {}): Promise<string> {
  const p = Bun.spawn(['bun', file], {
    cwd: appDir,
    env: { ...process.env, DATA_DIR: dataDir, ...env },
    stdin: 'ignore',
    stdout: 'pipe',
    stderr: 'pipe',
  });
  procs.push(p);
  const reader = p.stdout.getReader();
  let out = '';
  for (;;) {
    const m = /listening on (http:\/\/\S+)/.exec(out);
    if (m) return m[1]!;
    const { value, done } = await reader.read();
    if (done) throw new Error(`${file} exited: ${await new Response(p.stderr).text()}`);
    out += new TextDecoder().decode(value);
  }
}

let tarball = '';

beforeAll(async () => {
  expect(relative(ROOT, work).startsWith('..')).toBe(true); // the app lives outside the repository
  tarball = await packedTarball(); // one `bun pm pack` per run, shared with package-join.test.ts

  mkdirSync(appDir);
  for (const f of readdirSync(join(ROOT, 'fixtures/outside-app')))
    cpSync(join(ROOT, 'fixtures/outside-app', f), join(appDir, f));
  writeFileSync(
    join(appDir, 'package.json'),
    JSON.stringify({
      name: 'outside-app',
      private: true,
      type: 'module',
      dependencies: { 'lume-a2a': `file:${tarball}` },
    }),
  );
  const installed = await run(['bun', 'install', '--offline'], appDir);
  if (installed.code !== 0) {
    // Bun's cache lacks something (a machine that installed differently): the package still comes
    // from the tarball; its dependencies are linked from the repository's node_modules.
    mkdirSync(join(appDir, 'node_modules/lume-a2a'), { recursive: true });
    expect(
      (
        await run(
          [
            'tar',
            'xzf',
            tarball,
            '--strip-components=1',
            '-C',
            join(appDir, 'node_modules/lume-a2a'),
          ],
          appDir,
        )
      ).code,
    ).toBe(0);
    for (const dep of readdirSync(join(ROOT, 'node_modules')))
      if (!dep.startsWith('.'))
        symlinkSync(join(ROOT, 'node_modules', dep), join(appDir, 'node_modules', dep));
  }
}, 120_000);

afterAll(async () => {
  for (const p of procs) p.kill();
  // A process still exiting may write into its data folder after the folder is removed.
  await Promise.all(procs.map((p) => p.exited));
  rmSync(work, { recursive: true, force: true });
});

test('the tarball ships the sources, the declarations and the bin, not the repository', async () => {
  const listing = (await run(['tar', 'tzf', tarball], work)).out.split('\n');
  for (const f of [
    'package/lib/kit/index.ts',
    'package/dist/types/lib/kit/index.d.ts',
    'package/dist/types/lib/a2a/client/client.d.ts',
    'package/node/main.ts',
    'package/package.json',
  ])
    expect(listing).toContain(f);
  expect(
    listing.some(
      (f) =>
        f.startsWith('package/test/') ||
        f.startsWith('package/hub/') ||
        f.startsWith('package/fixtures/'),
    ),
  ).toBe(false);
  // The app runs what this checkout holds: every source the tarball ships is the checkout's file
  // as it is now (a reused tarball of older sources would test old code).
  const sources = listing.filter((f) => /^package\/(lib\/.*|node\/main)\.ts$/.test(f));
  expect(sources.length).toBeGreaterThan(200);
  const unpacked = join(work, 'unpacked');
  mkdirSync(unpacked);
  expect((await run(['tar', 'xzf', tarball, '-C', unpacked], work)).code).toBe(0);
  const differ = sources.filter(
    (f) =>
      readFileSync(join(unpacked, f), 'utf8') !==
      readFileSync(join(ROOT, f.slice('package/'.length)), 'utf8'),
  );
  expect(differ).toEqual([]);
});

test("the app's tsc checks it against the shipped declarations", async () => {
  const checked = await run([join(ROOT, 'node_modules/.bin/tsc'), '-p', appDir], appDir);
  expect(checked.out + checked.err).toBe('');
  expect(checked.code).toBe(0);
}, 60_000);

test('the app node joins a running fleet: the official SDK talks to it, the hub lists and calls it', async () => {
  const probe = Bun.serve({ port: 0, fetch: () => new Response() });
  const port = probe.port!;
  probe.stop(true);
  const fleetFile = join(work, 'fleet.json');
  // The fleet names the app's node file where it is, outside the repository.
  writeFileSync(
    fleetFile,
    JSON.stringify({
      hub: { name: 'a2a', port: 0, role: 'hub', file: 'hub/main.ts' },
      nodes: [
        {
          name: 'weather',
          port,
          role: 'Temperature of a few cities',
          file: join(appDir, 'weather.ts'),
        },
      ],
    }),
  );
  const fleet = await loadFleet(fleetFile);
  await ensureKeys(dataDir, fleet);
  const url = await startApp('weather.ts', { FLEET_FILE: fleetFile });
  expect(url).toBe(`http://127.0.0.1:${port}`);

  const sdk = await new ClientFactory().createFromUrl(url);
  expect((await sdk.getAgentCard()).skills.map((s) => s.id)).toEqual(['weather.now']);
  const part = {
    content: { $case: 'data' as const, value: { skill: 'weather.now', args: { city: 'perth' } } },
    filename: '',
    mediaType: 'application/json',
    metadata: undefined,
  };
  const task: any = await sdk.sendMessage({
    message: {
      messageId: crypto.randomUUID(),
      role: Role.ROLE_USER,
      parts: [part],
      contextId: '',
      taskId: '',
      extensions: [],
      referenceTaskIds: [],
      metadata: undefined,
    },
  } as any);
  expect(task.status.state).toBe(TaskState.TASK_STATE_COMPLETED);
  expect(task.artifacts[0].parts[0].content.value).toEqual({ city: 'perth', celsius: 27 });

  const log = memoryLog();
  const meshStore = createSqliteMeshStore({ db: openMeshDatabase(':memory:'), log });
  const hub = createHub({
    fleet,
    dataDir,
    log,
    identity: await loadPeerIdentity(dataDir, 'a2a'),
    traceDb: new Database(':memory:'),
    meshStore,
    fleetTtlMs: 0,
    tokens: testTokens(),
  });
  const server = hub.listen(0);
  try {
    const snap = await (await fetch(`${server.url}/api/fleet`)).json();
    expect(snap.nodes.map((n: any) => [n.name, n.online, n.skills.map((s: any) => s.id)])).toEqual([
      ['weather', true, ['weather.now']],
    ]);
    const r = await localInvoke(server.url, {
      target: 'weather',
      capability: 'weather.now',
      args: { city: 'oslo' },
    });
    expect(r.json).toMatchObject({ ok: true, result: { city: 'oslo', celsius: 4 } });
    const trace = (await (await fetch(`${server.url}/api/trace?to=weather`)).json()).records;
    expect(trace.map((t: any) => [t.to, t.capability, t.outcome])).toEqual([
      ['weather', 'weather.now', 'ok'],
    ]);
  } finally {
    await server.stop();
    await meshStore.close();
  }
}, 30_000);

test("the node mounted in the app's own Bun.serve, called by the package's client in both wire versions", async () => {
  // Its own data folder: the weather app of the test above still runs on the shared one, and a
  // node mounted in an app takes no data lock (two copies of one node on one folder collide).
  const url = await startApp('mounted.ts', { DATA_DIR: join(work, 'data-mounted') });
  expect(await (await fetch(`${url}/hello`)).text()).toBe('hello from the app');
  const card = await (await fetch(`${url}/.well-known/agent-card.json`)).json();
  expect(card.supportedInterfaces[0].url).toBe(`${url}/a2a`);
  const asked = await run(['bun', 'ask.ts', url], appDir);
  expect(asked.err).toBe('');
  const answers = JSON.parse(asked.out);
  for (const version of ['1.0', '0.3']) {
    expect(answers[version].called).toMatchObject({
      ok: true,
      result: { city: 'lima', celsius: 19 },
    });
    expect(answers[version].state).toBe('completed');
    expect(answers[version].got).toBe(true);
    expect(answers[version].events).toEqual([
      'task',
      'status:working',
      'artifact',
      'status:completed',
    ]);
  }
}, 30_000);
