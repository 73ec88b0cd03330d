/**
 * A node outside the repository: `bun run node --file` starts any node file; a fleet file names
 * node files beside itself; `bun run fleet add` registers a node that runs elsewhere (its own data
 * folder and keys) after checking its card and published key, writing DATA_DIR/fleet.json and the
 * ring and never fixtures/, and the hub then lists it and calls it signed.
 */

import { Database } from 'bun:sqlite';
import { afterAll, expect, setDefaultTimeout, test } from 'bun:test';
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { loadFleet } from '../lib/config/fleet-file.ts';
import { memoryLog } from '../lib/log.ts';
import { openMeshDatabase } from '../lib/mesh/schema.ts';
import { createSqliteMeshStore } from '../lib/mesh/sqlite-store.ts';
import { ensureKeys, loadPeerIdentity, publicIdentity, trustRemoteKey } from '../lib/peer/keys.ts';
import { createHub } from '../hub/hub.ts';
import { bunCommand } from './support/bundle.ts';
import { localInvoke } from './support/fleet.ts';
import { tempDir, testTokens } from './support/node.ts';
import { startProcess } from './support/process.ts';
import { lineReader } from './support/processes.ts';
import { createPeerClient } from '../lib/peer/client.ts';

setDefaultTimeout(20_000); // per file (Bun scopes it so): real servers and processes are slow on a busy machine

const ROOT = resolve(import.meta.dir, '..');
/** A node's key pair file under DATA_DIR/keys/ (docs/peer.md). */
const privateKeyFile = (node: string) => `${node}.ed25519.json`;
const FIXTURE_FLEET = join(ROOT, 'fixtures/fleet.json');
const work = tempDir('lume-a2a-outside-');
const procs: Bun.Subprocess[] = [];
afterAll(async () => {
  for (const p of procs) p.kill();
  // A process still exiting may write into its data folder after the folder is removed.
  await Promise.all(procs.map((p) => p.exited));
  rmSync(work, { recursive: true, force: true });
});

// A node file in a folder of its own, importing the kit by path (as an app imports the package).
writeFileSync(
  join(work, 'echo.ts'),
  `
import { capability, defineNode } from ${JSON.stringify(join(ROOT, 'lib/kit/node.ts'))};
export default defineNode(() => ({
  name: 'echo',
  description: 'Says back what it is given.',
  capabilities: [capability({ id: 'echo.say', name: 'Say', description: 'Echoes a word', tags: ['echo'], keywords: ['echo'], readOnly: true,
    args: { word: { type: 'string', description: 'A word', required: true } }, run: ({ word }) => ({ word }) })],
}));
`,
);

async function start(args: string[], env: Record<string, string>): Promise<string> {
  const p = Bun.spawn(bunCommand(['node/main.ts', ...args]), {
    cwd: ROOT,
    env: { ...process.env, ...env },
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
    if (done) throw new Error(`node exited: ${await new Response(p.stderr).text()}`);
    out += new TextDecoder().decode(value);
  }
}

async function fleetCli(
  args: string[],
  env: Record<string, string | undefined>,
): Promise<{ code: number; out: string; err: string }> {
  const p = Bun.spawn(bunCommand(['hub/cli/fleet.ts', ...args]), {
    cwd: ROOT,
    env: { ...process.env, FLEET_FILE: undefined, ...env },
    stdin: 'ignore',
    stdout: 'pipe',
    stderr: 'pipe',
  });
  const [out, err, code] = await Promise.all([
    new Response(p.stdout).text(),
    new Response(p.stderr).text(),
    p.exited,
  ]);
  return { code, out, err };
}

const freePort = () => {
  const probe = Bun.serve({ port: 0, fetch: () => new Response() });
  const port = probe.port!;
  probe.stop(true);
  return port;
};

test('bun run node --file starts any node file; alone, its peer channel is off', async () => {
  const url = await start(['--file', join(work, 'echo.ts'), '--port', '0'], {
    DATA_DIR: join(work, 'alone'),
  });
  expect(
    (await (await fetch(`${url}/.well-known/agent-card.json`)).json()).skills.map((s: any) => s.id),
  ).toEqual(['echo.say']);
  const peer = await fetch(`${url}/peer/invoke`, { method: 'POST', body: '{}' });
  expect((await peer.json()).error.code).toBe('PEER_NOT_CONFIGURED');
  expect((await fetch(`${url}/peer/identity`)).status).toBe(404);
});

test('a --file node named by a fleet file makes only its own key; a port given wins, in one line', async () => {
  const dataDir = join(work, 'own-key');
  const fleetFile = join(work, 'own-key-fleet.json');
  const port = freePort();
  writeFileSync(
    fleetFile,
    JSON.stringify({
      hub: { name: 'a2a', port: 4100, role: 'hub', file: 'hub/main.ts' },
      nodes: [
        { name: 'echo', port, role: 'echo', file: './echo.ts' },
        { name: 'other', port: 1, role: 'other', file: './other.ts' },
      ],
    }),
  );
  const p = Bun.spawn(
    bunCommand(['node/main.ts', '--file', join(work, 'echo.ts'), '--port', '0']),
    {
      cwd: ROOT,
      env: { ...process.env, FLEET_FILE: fleetFile, DATA_DIR: dataDir },
      stdin: 'ignore',
      stdout: 'pipe',
      stderr: 'pipe',
    },
  );
  procs.push(p);
  const err = lineReader(p.stderr);
  const line = await err.until(/wins over/);
  expect(line).toEndWith(`port 0 given: it wins over the fleet file's ${port}`);
  const url = /listening on (\S+)/.exec(await lineReader(p.stdout).until(/listening on /))![1]!;
  expect(url).not.toBe(`http://127.0.0.1:${port}`);
  expect(readdirSync(join(dataDir, 'keys')).sort()).toEqual(['echo.ed25519.json', 'ring.json']);
  expect((await fetch(`${url}/readyz`)).status).toBe(200);
});

test('fleet add registers a node that runs elsewhere; the hub lists it and calls it signed', async () => {
  const hubData = join(work, 'hub-data');
  const nodeData = join(work, 'node-data');
  const fixturesBefore = readFileSync(FIXTURE_FLEET, 'utf8');
  await ensureKeys(hubData, await loadFleet(FIXTURE_FLEET));

  // The node's side: its own fleet file names its file beside it, and the hub as a remote member
  // whose key the node's operator put into the node's ring.
  const port = freePort();
  const nodeFleet = join(work, 'fleet.json');
  writeFileSync(
    nodeFleet,
    JSON.stringify({
      hub: { name: 'a2a', port: 4100, role: 'hub', file: '', remote: true },
      nodes: [{ name: 'echo', port, role: 'echo', file: './echo.ts' }],
    }),
  );
  const hubKey = publicIdentity('a2a', (await loadPeerIdentity(hubData, 'a2a')).ring)!.keys[0]!;
  await trustRemoteKey(nodeData, 'a2a', hubKey);
  const url = await start(['--name', 'echo'], { FLEET_FILE: nodeFleet, DATA_DIR: nodeData });
  expect(url).toBe(`http://127.0.0.1:${port}`);
  expect(existsSync(join(nodeData, 'keys', privateKeyFile('a2a')))).toBe(false);
  const published = await (await fetch(`${url}/peer/identity`)).json();
  expect(published).toMatchObject({ node: 'echo', mode: 'ed25519' });
  expect(JSON.stringify(published)).not.toContain(
    JSON.parse(readFileSync(join(nodeData, 'keys', privateKeyFile('echo')), 'utf8')).privateKey,
  );

  // Refusals change nothing.
  const env = { DATA_DIR: hubData };
  for (const [args, code] of [
    [['add', 'echo', '--url', url, '--kid', 'ed25519:0000000000000000'], 'FLEET_ADD_KEY_MISMATCH'],
    [['add', 'other', '--url', url], 'FLEET_ADD_CARD_MISMATCH'],
    [['add', 'crm', '--url', url], 'FLEET_ADD_NAME_TAKEN'],
    [['add', 'echo', '--url', `${url}/a2a`], 'FLEET_ADD_BAD_URL'],
    [['add', 'Echo!', '--url', url], 'FLEET_ADD_BAD_NAME'],
  ] as const) {
    const r = await fleetCli([...args], env);
    expect([r.code, r.err.split(':')[0]]).toEqual([1, code]);
  }
  expect(existsSync(join(hubData, 'fleet.json'))).toBe(false);

  const added = await fleetCli(['add', 'echo', '--url', url, '--kid', published.keys[0].kid], env);
  expect(added.err).toBe('');
  expect(added.code).toBe(0);
  expect(readFileSync(FIXTURE_FLEET, 'utf8')).toBe(fixturesBefore);
  const fleet = await loadFleet(join(hubData, 'fleet.json'));
  const fixtureNames = (await loadFleet(FIXTURE_FLEET)).nodes.map((n) => n.name);
  expect(fleet.nodes.map((n) => n.name)).toEqual([...fixtureNames, 'echo']);
  expect(fleet.nodes.at(-1)).toMatchObject({ name: 'echo', url, remote: true });
  // The hub side holds the node's public key only.
  expect(existsSync(join(hubData, 'keys', privateKeyFile('echo')))).toBe(false);
  await ensureKeys(hubData, fleet);
  expect(existsSync(join(hubData, 'keys', privateKeyFile('echo')))).toBe(false);

  const log = memoryLog();
  const meshStore = createSqliteMeshStore({ db: openMeshDatabase(':memory:'), log });
  const only = { ...fleet, nodes: fleet.nodes.filter((n) => n.name === 'echo') };
  const hub = createHub({
    fleet: only,
    dataDir: hubData,
    log,
    identity: await loadPeerIdentity(hubData, 'a2a'),
    traceDb: new Database(':memory:'),
    meshStore,
    fleetTtlMs: 0,
    tokens: testTokens(),
  });
  const server = hub.listen(0);
  try {
    const snap = await (await fetch(`${server.url}/api/fleet`)).json();
    expect(snap.nodes.map((n: any) => [n.name, n.online])).toEqual([['echo', true]]);
    const r = await localInvoke(server.url, {
      target: 'echo',
      capability: 'echo.say',
      args: { word: 'hello' },
    });
    expect(r.json).toMatchObject({ ok: true, result: { word: 'hello' } });
  } finally {
    await server.stop();
    await meshStore.close();
  }
}, 30_000);

test('the hub publishes its key at /peer/identity; a node run elsewhere trusts it with `fleet add <hub> --url`, then accepts its signed calls', async () => {
  const hub = await startProcess('hub/main.ts');
  try {
    // What the hub publishes: its name, mode and public keys, the same as its ring holds, no secret.
    const res = await fetch(`${hub.url}/peer/identity`);
    expect(res.status).toBe(200);
    const published = await res.json();
    const hubIdentity = await loadPeerIdentity(hub.dataDir, 'a2a');
    expect(published).toEqual(publicIdentity('a2a', hubIdentity.ring));
    expect(published.mode).toBe('ed25519');
    expect(JSON.stringify(published)).not.toContain(
      JSON.parse(readFileSync(join(hub.dataDir, 'keys', privateKeyFile('a2a')), 'utf8')).privateKey,
    );

    // The hub's own machine cannot mark its hub remote: it holds the hub's key pair.
    const own = await fleetCli(['add', 'a2a', '--url', hub.url], {
      FLEET_FILE: join(hub.dataDir, 'fleet.json'),
      DATA_DIR: hub.dataDir,
    });
    expect([own.code, own.err.split(':')[0]]).toEqual([1, 'FLEET_ADD_NAME_TAKEN']);

    // The node's machine: a fleet file naming the hub (not yet remote) and the node beside it.
    const nodeData = join(work, 'trusts-hub');
    const nodeFleet = join(work, 'trusts-hub-fleet.json');
    const port = freePort();
    writeFileSync(
      nodeFleet,
      JSON.stringify({
        hub: { name: 'a2a', port: 4100, role: 'hub', file: 'hub/main.ts' },
        nodes: [{ name: 'echo', port, role: 'echo', file: './echo.ts' }],
      }),
    );
    const added = await fleetCli(['add', 'a2a', '--url', hub.url, '--kid', published.keys[0].kid], {
      FLEET_FILE: nodeFleet,
      DATA_DIR: nodeData,
    });
    expect(added.err).toBe('');
    expect(added.code).toBe(0);
    expect(added.out).toContain(`added a2a at ${hub.url}`);
    const fleet = await loadFleet(nodeFleet);
    expect(fleet.hub).toMatchObject({ name: 'a2a', url: hub.url, remote: true, role: 'hub' });
    expect(fleet.nodes.map((n) => n.name)).toEqual(['echo']);
    expect(existsSync(join(nodeData, 'keys', privateKeyFile('a2a')))).toBe(false);

    // The node starts with that fleet and accepts calls signed with the hub's key, and no other.
    const url = await start(['--name', 'echo'], { FLEET_FILE: nodeFleet, DATA_DIR: nodeData });
    const route = { hub: fleet.hub, nodes: [{ ...fleet.nodes[0]!, url }] };
    const signed = await createPeerClient({ signer: hubIdentity.signer, fleet: route }).peerFetch(
      'echo',
      'echo.say',
      { word: 'hi' },
    );
    expect(signed).toMatchObject({ ok: true, result: { word: 'hi' } });
    const impostorData = join(work, 'impostor');
    await ensureKeys(impostorData, {
      hub: { ...fleet.hub, remote: false } as typeof fleet.hub,
      nodes: [],
    });
    const impostor = await createPeerClient({
      signer: (await loadPeerIdentity(impostorData, 'a2a')).signer,
      fleet: route,
    }).peerFetch('echo', 'echo.say', { word: 'hi' });
    expect(impostor.ok).toBe(false);
    expect(impostor.ok === false && [impostor.error.kind, impostor.error.code]).toEqual([
      'refused',
      'PEER_BAD_SIGNATURE',
    ]);
  } finally {
    await hub.stop();
  }
}, 30_000);
