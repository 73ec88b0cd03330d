/**
 * Any app joins: the example node of docs/add-a-node.md (`index.ts` under 40 lines, `queries.ts`
 * beside it) is written as a new folder in node/, listed in a fleet file, started with
 * `bun run node`, and shows up in the hub's GET /api/fleet and in its trace, with nothing in lib/
 * or hub/ touched. And the walk-through, word for word, in a copy of the project (without any
 * `host` node its reader may have added already): scaffold, its test, the example files, the
 * fleet entry, run.
 */

import { Database } from 'bun:sqlite';
import { afterAll, expect, setDefaultTimeout, test } from 'bun:test';
import { cpSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { loadFleet } from '../lib/config/fleet-file.ts';
import { memoryLog } from '../lib/log.ts';
import { openMeshDatabase } from '../lib/mesh/schema.ts';
import { createSqliteMeshStore } from '../lib/mesh/sqlite-store.ts';
import { ensureKeys, loadPeerIdentity } from '../lib/peer/keys.ts';
import { createHub } from '../hub/hub.ts';
import { bunCommand } from './support/bundle.ts';
import { localInvoke } from './support/fleet.ts';
import { tempDir, testTokens } from './support/node.ts';

setDefaultTimeout(20_000); // per file (Bun scopes it so): real servers and processes are slow on a busy machine

const root = resolve(import.meta.dir, '..');
const doc = await Bun.file(join(root, 'docs/add-a-node.md')).text();
/** The doc's files: each ```ts block whose first line names its path. */
const files = new Map(
  [...doc.matchAll(/```ts\n\/\/ (\S+)\n([\s\S]*?)```/g)].map((m) => [m[1]!, m[2]!] as const),
);
const example = files.get('node/host/index.ts')!;
const name = `host${process.pid}`;
const nodeDir = join(root, 'node', name);
const dataDir = tempDir('lume-a2a-addnode-');
let proc: Bun.Subprocess<'ignore', 'pipe', 'pipe'> | undefined;

afterAll(async () => {
  proc?.kill();
  // A node still exiting may write into its data folder after the folder is removed.
  await proc?.exited;
  rmSync(nodeDir, { recursive: true, force: true });
  rmSync(dataDir, { recursive: true, force: true });
});

test('a new node file plus a fleet entry is enough to join', async () => {
  expect([...files.keys()]).toEqual([
    'node/host/index.ts',
    'node/host/queries.ts',
    'test/host.test.ts',
  ]);
  expect(example.trim().split('\n').length).toBeLessThan(40);
  // The example names itself `host`; this copy takes a name no other test uses.
  mkdirSync(nodeDir);
  writeFileSync(join(nodeDir, 'index.ts'), example.replaceAll("name: 'host'", `name: '${name}'`));
  writeFileSync(join(nodeDir, 'queries.ts'), files.get('node/host/queries.ts')!);
  const probe = Bun.serve({ port: 0, fetch: () => new Response() });
  const port = probe.port!;
  probe.stop(true);
  const fleetFile = join(dataDir, 'fleet.json');
  writeFileSync(
    fleetFile,
    JSON.stringify({
      hub: { name: 'a2a', port: 0, role: 'hub', file: 'hub/main.ts' },
      nodes: [
        { name, port, role: 'Read-only snapshot: uptime and load', file: `node/${name}/index.ts` },
      ],
    }),
  );
  const fleet = await loadFleet(fleetFile);
  await ensureKeys(dataDir, fleet);

  proc = Bun.spawn(bunCommand(['node/main.ts', '--name', name]), {
    cwd: root,
    env: { ...process.env, FLEET_FILE: fleetFile, DATA_DIR: dataDir },
    stdin: 'ignore',
    stdout: 'pipe',
    stderr: 'pipe',
  });
  const reader = proc.stdout.getReader();
  let out = '';
  while (!out.includes('listening on')) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`node exited: ${await new Response(proc.stderr).text()}`);
    out += new TextDecoder().decode(value);
  }

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
    expect(
      snap.nodes.map((n: any) => [n.name, n.kind, n.online, n.skills.map((s: any) => s.id)]),
    ).toEqual([[name, 'a2a', true, ['host.load']]]);
    const r = await localInvoke(server.url, { target: name, capability: 'host.load' });
    expect(r.json.ok).toBe(true);
    expect(r.json.result.cpus).toBeGreaterThan(0);
    const trace = (await (await fetch(`${server.url}/api/trace?to=${name}`)).json()).records;
    expect(trace.map((t: any) => [t.to, t.capability, t.outcome])).toEqual([
      [name, 'host.load', 'ok'],
    ]);
  } finally {
    await server.stop();
    await meshStore.close();
  }
}, 20_000);

/** A shell command of the doc, run as written in `cwd` (bun test's own output goes to stderr). */
async function sh(
  command: string,
  cwd: string,
  env: Record<string, string> = {},
): Promise<{ code: number; out: string }> {
  const p = Bun.spawn(['sh', '-c', command], {
    cwd,
    env: { ...process.env, ...env },
    stdin: 'ignore',
    stdout: 'pipe',
    stderr: 'pipe',
  });
  const [out, err, code] = await Promise.all([
    new Response(p.stdout).text(),
    new Response(p.stderr).text(),
    p.exited,
  ]);
  return { code, out: out + err };
}

test('the walk-through of docs/add-a-node.md works word for word', async () => {
  const copy = join(dataDir, 'project');
  // The reader may have followed the doc in the checkout already: the copy starts without `host`.
  for (const part of ['lib', 'hub', 'node', 'fixtures', 'package.json', 'tsconfig.json'])
    cpSync(join(root, part), join(copy, part), {
      recursive: true,
      filter: (src) => !/[/\\]node[/\\]host(\d*)([/\\.]|$)/.test(src.slice(root.length)),
    });
  const copiedFleet = join(copy, 'fixtures/fleet.json');
  const withoutHost = JSON.parse(readFileSync(copiedFleet, 'utf8'));
  withoutHost.nodes = withoutHost.nodes.filter((n: { name: string }) => n.name !== 'host');
  writeFileSync(copiedFleet, JSON.stringify(withoutHost, null, 2));
  symlinkSync(join(root, 'node_modules'), join(copy, 'node_modules'));
  const blocks = [...doc.matchAll(/```(\w+)\n([\s\S]*?)```/g)].map((m) => ({
    lang: m[1]!,
    text: m[2]!,
  }));
  const commands = (text: string) =>
    text
      .split('\n')
      .map((l) => l.replace(/\s+#.*$/, '').trim())
      .filter(Boolean);

  // 0. The scaffold and its test, which follows the suite's rules.
  const scaffold = blocks.find((b) => b.lang === 'sh' && b.text.includes('new-node'))!;
  for (const line of commands(scaffold.text)) {
    const r = await sh(line, copy);
    expect([line, r.code, r.out]).toEqual([line, 0, expect.any(String)]);
  }
  expect(readFileSync(join(copy, 'node/host/index.ts'), 'utf8')).toContain("id: 'host.greet'");
  expect(readFileSync(join(copy, 'node/host/queries.ts'), 'utf8')).toContain('export function');
  expect(readFileSync(join(copy, 'test/host.test.ts'), 'utf8')).toMatch(
    /^setDefaultTimeout\(\d[\d_]*\);/m,
  );

  // 1. The example's three files over the scaffold's; 2. the fleet entry.
  for (const [path, text] of files) writeFileSync(join(copy, path), text);
  expect((await sh('bun test test/host.test.ts', copy)).code).toBe(0);
  const entry = JSON.parse(
    blocks.find((b) => b.lang === 'json' && b.text.includes('"host"'))!.text,
  );
  const fleetPath = join(copy, 'fixtures/fleet.json');
  const fleetDoc = JSON.parse(readFileSync(fleetPath, 'utf8'));
  fleetDoc.nodes.push(entry);
  writeFileSync(fleetPath, JSON.stringify(fleetDoc, null, 2));

  // 3. Run it: the node alone (on a free port instead of 4108), then the two curl lines against it.
  const run = blocks.find((b) => b.lang === 'sh' && b.text.includes('bun run node --name host'))!;
  const [start, , ...curls] = commands(run.text.replace(/\\\n\s*/g, ''));
  expect(start).toBe('bun run node --name host');
  const node = Bun.spawn(['sh', '-c', `exec ${start}`], {
    cwd: copy,
    env: { ...process.env, PORT: '0', DATA_DIR: join(dataDir, 'walk') },
    stdin: 'ignore',
    stdout: 'pipe',
    stderr: 'pipe',
  });
  try {
    const reader = node.stdout.getReader();
    let out = '';
    while (!/listening on (http:\S+)/.test(out)) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`node exited: ${await new Response(node.stderr).text()}`);
      out += new TextDecoder().decode(value);
    }
    const address = /listening on http:\/\/(\S+)/.exec(out)![1]!;
    const [card, answer] = await Promise.all(
      curls.map(async (c) => (await sh(c.replaceAll('localhost:4108', address), copy)).out),
    );
    expect(JSON.parse(card!).skills.map((s: any) => s.id)).toEqual(['host.load']);
    const task = JSON.parse(answer!).result.task;
    expect(task.status.state).toBe('TASK_STATE_COMPLETED');
    expect(task.artifacts[0].parts[0].data.cpus).toBeGreaterThan(0);
  } finally {
    node.kill();
    await node.exited;
  }
}, 60_000);
