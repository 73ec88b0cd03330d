/**
 * The user story of docs/package.md, end to end, from the packed tarball: an app made with
 * `bun init -y` + `bun add <tarball>` in a folder outside the repository writes the node of the
 * doc, its snippets type-check with the app's own tsconfig, and
 * `bunx lume-node --file ./weather.ts --port <p> --join <hub>` with `LUME_TOKEN` (made by
 * `bun run keys token add`) joins a real hub process: the hub lists it and calls it signed
 * (pairwise), the official SDK talks to it, both sides restart, a hub that is down is retried, and
 * the refusals (no or wrong token, a URL that is not the caller's, a name another key holds, two
 * joins at once) leave the fleet file and the ring whole. `bun run fleet remove` ends it.
 */

import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Role, TaskState } from '@a2a-js/sdk';
import { ClientFactory } from '@a2a-js/sdk/client';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { capability, defineNode, serveNode } from '../lib/kit/node.ts';
import { JOIN_ROUTE, JOIN_SCOPE } from '../lib/fleet/join.ts';
import { ensureOwnKey, loadPeerIdentity, publicIdentity } from '../lib/peer/keys.ts';
import { bunCommand } from './support/bundle.ts';
import { tempDir } from './support/node.ts';
import {
  freshApp,
  namedSnippets,
  outsideRepository,
  packedTarball,
  run,
} from './support/packed-app.ts';
import { freePorts, spawnReading, waitFor } from './support/processes.ts';

setDefaultTimeout(20_000); // per file (Bun scopes it so): real servers and processes are slow on a busy machine

const ROOT = resolve(import.meta.dir, '..');
const work = tempDir('lume-a2a-join-');
const appDir = join(work, 'weather');
const hubData = join(work, 'hub-data');
const fleetFile = join(work, 'fleet.json');
const [hubPort, nodePort, otherPort] = freePorts(3) as [number, number, number];
const hubUrl = `http://127.0.0.1:${hubPort}`;
const nodeUrl = `http://127.0.0.1:${nodePort}`;
let token = '';
const procs = new Set<Bun.Subprocess>();
const inProcess: { stop(): Promise<void> }[] = [];

type Spawned = ReturnType<typeof spawnReading>;
function spawn(cmd: string[], cwd: string, env: Record<string, string | undefined>): Spawned {
  const p = spawnReading(cmd, cwd, env);
  procs.add(p.proc);
  return p;
}
async function listening(p: Spawned): Promise<string> {
  const line = await Promise.race([
    p.out.until(/listening on /),
    p.proc.exited.then((code) => {
      throw new Error(`exited with ${code}: ${p.err.lines.join('\n')}`);
    }),
  ]);
  return /listening on (http:\/\/[^\s)]+)/.exec(line)![1]!;
}
async function stop(p: Spawned): Promise<void> {
  p.proc.kill('SIGTERM');
  await p.proc.exited;
  procs.delete(p.proc);
}

/** The hub, as its operator runs it in the checkout (`bun run hub`). */
async function startHub(): Promise<Spawned> {
  const p = spawn(bunCommand(['hub/main.ts']), ROOT, { DATA_DIR: hubData, FLEET_FILE: fleetFile });
  expect(await listening(p)).toBe(hubUrl);
  return p;
}
/** The story's command, in the app's folder. */
function startNode(extra: Record<string, string> = {}, port = nodePort): Spawned {
  return spawn(
    ['bunx', 'lume-node', '--file', './weather.ts', '--port', String(port), '--join', hubUrl],
    appDir,
    { LUME_TOKEN: token, ...extra },
  );
}
const fleetNodes = async () =>
  (
    (await (await fetch(`${hubUrl}/api/fleet`)).json()).nodes as { name: string; online: boolean }[]
  ).map((n) => [n.name, n.online]);
const invokeThroughHub = async (city: string) =>
  (
    await fetch(`${hubUrl}/api/local-invoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ target: 'weather', capability: 'weather.now', args: { city } }),
    })
  ).json();
/** What the hub keeps of its fleet: the fleet file and the ring, byte for byte. */
const hubFiles = () => [
  readFileSync(fleetFile, 'utf8'),
  readFileSync(join(hubData, 'keys/ring.json'), 'utf8'),
];

let hub: Spawned;
let node: Spawned;

beforeAll(async () => {
  expect(outsideRepository(work)).toBe(true);
  const tarball = await packedTarball();
  await freshApp(appDir, tarball);
  for (const [file, text] of namedSnippets(readFileSync(join(ROOT, 'docs/package.md'), 'utf8')))
    writeFileSync(join(appDir, file), text);
  writeFileSync(
    fleetFile,
    JSON.stringify({
      hub: { name: 'a2a', port: hubPort, role: 'hub', file: 'hub/main.ts' },
      nodes: [],
    }),
  );
  // On the hub's machine: `bun run keys token add weather` prints the token last.
  const made = await run(bunCommand(['hub/cli/keys.ts', 'token', 'add', 'weather']), ROOT, {
    DATA_DIR: hubData,
  });
  expect(made.code).toBe(0);
  token = made.out.trim().split('\n').at(-1)!;
  hub = await startHub();
}, 120_000);

afterAll(async () => {
  for (const n of inProcess) await n.stop();
  for (const p of procs) p.kill();
  await Promise.all([...procs].map((p) => p.exited));
  rmSync(work, { recursive: true, force: true });
});

test("the doc's snippets type-check in the fresh bun init app, with its own tsconfig", async () => {
  expect(
    [...namedSnippets(readFileSync(join(ROOT, 'docs/package.md'), 'utf8')).keys()].sort(),
  ).toEqual(['ask.ts', 'joined.ts', 'mounted.ts', 'weather.ts']);
  const checked = await run([join(ROOT, 'node_modules/.bin/tsc'), '-p', appDir], appDir);
  expect(checked.out + checked.err).toBe('');
  expect(checked.code).toBe(0);
}, 60_000);

test('alone, the app node is ready and its peer channel is not configured', async () => {
  const p = spawn(['bun', 'weather.ts'], appDir, {});
  const url = await listening(p);
  const ready = await fetch(`${url}/readyz`);
  expect(ready.status).toBe(200);
  expect(
    (await (await fetch(`${url}/peer/invoke`, { method: 'POST', body: '{}' })).json()).error.code,
  ).toBe('PEER_NOT_CONFIGURED');
  await stop(p);
});

test('bunx lume-node --join: the node pins the hub, joins, and the hub lists it and calls it signed', async () => {
  node = startNode();
  expect(await listening(node)).toBe(nodeUrl);
  const joined = await node.err.until(/joined a2a at /);
  expect(joined).toContain(`joined a2a at ${hubUrl} as weather (added)`);
  expect(await node.out.until(/keys/)).toBe('self-check weather keys OK: peer keys loaded');

  await waitFor(
    'the hub lists weather online',
    async () => JSON.stringify(await fleetNodes()) === JSON.stringify([['weather', true]]),
  );
  expect(await invokeThroughHub('lima')).toMatchObject({
    ok: true,
    result: { city: 'lima', celsius: 19 },
  });
  const trace = (await (await fetch(`${hubUrl}/api/trace?to=weather`)).json()).records;
  expect(trace.map((t: any) => [t.from, t.to, t.capability, t.outcome])).toEqual([
    ['a2a', 'weather', 'weather.now', 'ok'],
  ]);
  // The app's fail() from the installed package reaches the hub's caller as the app returned it.
  expect(await invokeThroughHub('perth')).toEqual({
    ok: false,
    error: { code: 'NO_READING', message: 'no reading for perth yet', field: 'city' },
  });

  // Signed pairwise with the hub's key: the node pinned it.
  const { signer } = await loadPeerIdentity(hubData, 'a2a');
  const body = new TextEncoder().encode(JSON.stringify({ capability: 'weather.now', args: {} }));
  const headers = await signer.sign(
    { to: 'weather', route: '/peer/invoke', scope: 'weather.now' },
    body,
  );
  expect(headers['x-peer-signature']).toContain(' mode=pairwise ');
  const signed = await fetch(`${nodeUrl}/peer/invoke`, { method: 'POST', headers, body });
  expect(await signed.json()).toMatchObject({ ok: true, result: { city: 'oslo', celsius: 4 } });

  // The node's data folder holds its own private key only; the hub's never leaves the hub.
  expect(readdirSync(join(appDir, 'data/keys')).sort()).toEqual([
    'ring.json',
    'weather.ed25519.json',
  ]);
  const ring = JSON.parse(readFileSync(join(appDir, 'data/keys/ring.json'), 'utf8'));
  expect(Object.keys(ring.nodes).sort()).toEqual(['a2a', 'weather']);
  expect(ring.nodes.a2a.keys[0].publicKey).toBe(
    publicIdentity('a2a', (await loadPeerIdentity(hubData, 'a2a')).ring)!.keys[0]!.publicKey,
  );
  expect(existsSync(join(hubData, 'keys/weather.ed25519.json'))).toBe(false);
  const fleet = JSON.parse(readFileSync(fleetFile, 'utf8'));
  expect(fleet.nodes).toEqual([
    {
      name: 'weather',
      port: nodePort,
      role: 'Temperature of a few cities.',
      file: '',
      url: nodeUrl,
      remote: true,
    },
  ]);

  // The official SDK client talks to the node.
  const sdk = await new ClientFactory().createFromUrl(nodeUrl);
  const task: any = await sdk.sendMessage({
    message: {
      messageId: crypto.randomUUID(),
      role: Role.ROLE_USER,
      parts: [
        {
          content: { $case: 'data', value: { skill: 'weather.now', args: { city: 'lima' } } },
          filename: '',
          mediaType: 'application/json',
          metadata: undefined,
        },
      ],
      contextId: '',
      taskId: '',
      extensions: [],
      referenceTaskIds: [],
      metadata: undefined,
    },
  } as any);
  expect(task.status.state).toBe(TaskState.TASK_STATE_COMPLETED);
  expect(task.artifacts[0].parts[0].content.value).toEqual({ city: 'lima', celsius: 19 });
}, 60_000);

test('the joined app answers Ask Agent and an MCP client, as the doc ends', async () => {
  const answer = await (
    await fetch(`${hubUrl}/api/ask`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ question: 'temperature in lima?' }),
    })
  ).json();
  expect(answer.answered).toBe(true);
  expect(answer.tried).toContainEqual(
    expect.objectContaining({ node: 'weather', tool: 'weather.now', outcome: 'ok' }),
  );
  expect(JSON.stringify(answer.facts)).toContain('19');
  // The official MCP client lists the app's capability as a tool and calls it.
  const mcp = new Client({ name: 'package-join', version: '1.0.0' });
  await mcp.connect(
    new StreamableHTTPClientTransport(new URL(`${hubUrl}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${token}` } },
    }),
  );
  try {
    const tools = (await mcp.listTools()).tools.map((t) => t.name);
    expect(tools).toContain('weather_now');
    const called = await mcp.callTool({ name: 'weather_now', arguments: { city: 'lima' } });
    expect(called.isError).toBeFalsy();
    expect(JSON.stringify(called.structuredContent ?? called.content)).toContain('19');
  } finally {
    await mcp.close();
  }
}, 60_000);

test('bun run fleet verify weather: the joined app passes, what does not apply is skipped with its reason', async () => {
  const env = { DATA_DIR: hubData, FLEET_FILE: fleetFile, LUME_TOKEN: undefined };
  const r = await run(bunCommand(['hub/cli/fleet.ts', 'verify', 'weather']), ROOT, env);
  expect(r.err).toBe('');
  expect(r.code).toBe(0);
  const row = r.out.split('\n').find((l) => l.startsWith('weather'))!;
  expect(row).not.toContain('FAIL');
  expect(r.out).toContain('snapshots: skipped: no read-only capability without arguments');
}, 60_000);

test('both sides restart: the hub keeps the node, the node joins again unchanged', async () => {
  const before = hubFiles();
  await stop(hub);
  hub = await startHub();
  await waitFor(
    'the restarted hub lists weather online',
    async () => JSON.stringify(await fleetNodes()) === JSON.stringify([['weather', true]]),
  );
  expect(await invokeThroughHub('oslo')).toMatchObject({ ok: true, result: { city: 'oslo' } });

  await stop(node);
  node = startNode();
  await listening(node);
  expect(await node.err.until(/joined a2a at /)).toContain('as weather (unchanged)');
  expect(hubFiles()).toEqual(before);
  expect(await invokeThroughHub('lima')).toMatchObject({ ok: true, result: { city: 'lima' } });
}, 60_000);

test('a hub that is down: the node serves, retries with backoff and says so, then joins', async () => {
  await stop(hub);
  await stop(node);
  node = startNode();
  await listening(node);
  expect(await node.err.until(/JOIN_HUB_UNREACHABLE/)).toContain(
    'the node serves, retrying in 1 s',
  );
  expect((await fetch(`${nodeUrl}/readyz`)).status).toBe(200);
  hub = await startHub();
  expect(await node.err.until(/joined a2a at /)).toContain('as weather (unchanged)');
}, 60_000);

test("refusals leave the fleet file and the ring whole: no token, a wrong one, a URL not the caller's, a forged proof", async () => {
  const before = hubFiles();
  const impostorData = join(work, 'impostor');
  const impostor = await ensureOwnKey(impostorData, 'weather');
  const { signer } = await loadPeerIdentity(impostorData, 'weather');
  const impostorKey = publicIdentity(
    'weather',
    (await loadPeerIdentity(impostorData, 'weather')).ring,
  )!.keys[0]!;
  expect(impostorKey.kid).toBe(impostor.kid);
  const realKey = (await (await fetch(`${nodeUrl}/peer/identity`)).json()).keys[0];
  const attempt = async (
    doc: Record<string, unknown>,
    auth: string | undefined,
  ): Promise<[number, string]> => {
    const body = new TextEncoder().encode(JSON.stringify(doc));
    const signed = await signer.sign({ to: 'a2a', route: JOIN_ROUTE, scope: JOIN_SCOPE }, body, {
      mode: 'ed25519',
    });
    const res = await fetch(`${hubUrl}${JOIN_ROUTE}`, {
      method: 'POST',
      headers: {
        ...signed,
        'content-type': 'application/json',
        ...(auth ? { authorization: auth } : {}),
      },
      body,
    });
    return [res.status, (await res.json()).error?.code];
  };
  const mine = { name: 'weather', url: nodeUrl, ...impostorKey };
  expect(await attempt(mine, undefined)).toEqual([401, 'UNAUTHENTICATED']);
  expect(await attempt(mine, 'Bearer not-a-token-the-hub-made')).toEqual([401, 'UNAUTHENTICATED']);
  // The real node's URL and name, with the impostor's own key: the name is another key's, refused
  // before the URL is probed (test/join-gate.test.ts has the probe's refusals).
  expect(await attempt(mine, `Bearer ${token}`)).toEqual([409, 'JOIN_NAME_TAKEN']);
  expect(await attempt({ ...mine, name: 'other' }, `Bearer ${token}`)).toEqual([
    401,
    'JOIN_BAD_PROOF',
  ]);
  // The real node's key, signed by the impostor: no proof.
  expect(await attempt({ name: 'weather', url: nodeUrl, ...realKey }, `Bearer ${token}`)).toEqual([
    401,
    'JOIN_BAD_PROOF',
  ]);
  expect(await attempt({ name: '../x', url: nodeUrl }, `Bearer ${token}`)).toEqual([
    400,
    'JOIN_BAD_REQUEST',
  ]);
  expect(hubFiles()).toEqual(before);
});

test('a name another key holds is refused with the fix; two joins at once each get a coded answer', async () => {
  const before = hubFiles();
  // A second copy of the app node, its own data folder and so its own key, under the same name.
  const copy = startNode({ DATA_DIR: './data-copy' }, otherPort);
  await listening(copy);
  expect(await copy.err.until(/join refused/)).toContain(
    "join refused: JOIN_NAME_TAKEN: another key holds that name in this fleet: it is weather's name here; to give it to this key, run `bun run fleet remove weather` on the hub and join again",
  );
  expect(hubFiles()).toEqual(before);
  await stop(copy);

  // Two new nodes and two twins (one name, two keys) join at the same moment.
  const weatherLike = (name: string) =>
    defineNode(() => ({
      name,
      description: `The ${name} node`,
      capabilities: [
        capability({
          id: `${name}.ping`,
          name: 'Ping',
          description: 'Answers',
          tags: ['t'],
          keywords: ['ping'],
          readOnly: true,
          args: {},
          run: () => ({ name }),
        }),
      ],
    }));
  const started = await Promise.all(
    [
      ['north', 'north'],
      ['south', 'south'],
      ['twin', 'twin-a'],
      ['twin', 'twin-b'],
    ].map(([name, dir]) =>
      serveNode(weatherLike(name!), {
        dataDir: join(work, dir!),
        join: { hub: hubUrl, token, retry: { firstMs: 50, maxMs: 100 } },
      }),
    ),
  );
  inProcess.push(...started);
  const answers = await Promise.all(started.map((s) => s.node.join!.done));
  const seen = answers.map((a) => (a.ok ? a.result.status : a.error.code));
  expect(seen.slice(0, 2)).toEqual(['added', 'added']);
  expect(seen.slice(2).sort()).toEqual(['JOIN_NAME_TAKEN', 'added']);
  const fleet = JSON.parse(readFileSync(fleetFile, 'utf8'));
  expect(fleet.nodes.map((n: any) => n.name).sort()).toEqual(['north', 'south', 'twin', 'weather']);
  const ring = JSON.parse(readFileSync(join(hubData, 'keys/ring.json'), 'utf8'));
  expect(Object.keys(ring.nodes).sort()).toEqual(['a2a', 'north', 'south', 'twin', 'weather']);
  const winner = started[2 + seen.slice(2).indexOf('added')]!;
  expect(ring.nodes.twin.keys[0].publicKey).toBe(
    (await (await fetch(`${winner.url}/peer/identity`)).json()).keys[0].publicKey,
  );
});

test("the doc's joined.ts and mounted.ts join from code: the node's key at a new URL is updated", async () => {
  await stop(node);
  const [joinedPort, mountedPort] = freePorts(2) as [number, number];
  const env = { LUME_TOKEN: token, LUME_HUB: hubUrl };
  const joined = spawn(['bun', 'joined.ts'], appDir, { ...env, PORT: String(joinedPort) });
  expect(await listening(joined)).toBe(`http://127.0.0.1:${joinedPort}`);
  expect(await joined.out.until(/^joined /)).toBe('joined a2a (updated)');
  const weatherUrl = () =>
    JSON.parse(readFileSync(fleetFile, 'utf8')).nodes.find((n: any) => n.name === 'weather').url;
  expect(weatherUrl()).toBe(`http://127.0.0.1:${joinedPort}`);
  await stop(joined);

  const mounted = spawn(['bun', 'mounted.ts'], appDir, { ...env, PORT: String(mountedPort) });
  const url = await listening(mounted);
  expect(await (await fetch(`${url}/hello`)).text()).toBe('hello');
  await waitFor(
    'the mounted node joined',
    () => weatherUrl() === `http://127.0.0.1:${mountedPort}`,
  );
  await waitFor('the hub calls the mounted node', async () => (await invokeThroughHub('lima')).ok);
  await stop(mounted);
}, 60_000);

test('bun run fleet remove <name> on the hub: the running hub stops calling it; the other key may then join', async () => {
  const fleetCli = (args: string[]) =>
    run(bunCommand(['hub/cli/fleet.ts', ...args]), ROOT, {
      DATA_DIR: hubData,
      FLEET_FILE: fleetFile,
    });
  const unknown = await fleetCli(['remove', 'nobody']);
  expect([unknown.code, unknown.err.split(':')[0]]).toEqual([1, 'FLEET_REMOVE_UNKNOWN']);
  const removed = await fleetCli(['remove', 'weather']);
  expect(removed.err).toBe('');
  expect(removed.out).toBe(`removed weather from ${fleetFile} and its key from the ring\n`);
  await waitFor(
    'the hub drops weather',
    async () => !(await fleetNodes()).some(([n]) => n === 'weather'),
  );
  expect(await invokeThroughHub('oslo')).toMatchObject({
    ok: false,
    error: { code: 'UNKNOWN_TARGET' },
  });
  expect(
    JSON.parse(readFileSync(join(hubData, 'keys/ring.json'), 'utf8')).nodes.weather,
  ).toBeUndefined();

  const copy = startNode({ DATA_DIR: './data-copy' }, otherPort);
  await listening(copy);
  expect(await copy.err.until(/joined a2a at /)).toContain('as weather (added)');
  await waitFor('the hub lists the copy', async () =>
    (await fleetNodes()).some(([n, online]) => n === 'weather' && online),
  );
  expect(await invokeThroughHub('lima')).toMatchObject({ ok: true, result: { city: 'lima' } });
  await stop(copy);
}, 60_000);
