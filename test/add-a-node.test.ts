/**
 * Any app joins: the example node of docs/add-a-node.md (under 40 lines) is written as a new file
 * in node/, listed in a fleet file, started with `bun run node`, and shows up in the hub's
 * GET /api/fleet and in its trace, with nothing in lib/ or hub/ touched. And the walk-through,
 * word for word, in a copy of the project: scaffold, its test, the example, the fleet entry, run.
 */

import { Database } from 'bun:sqlite';
import { afterAll, expect, setDefaultTimeout, test } from 'bun:test';
import { cpSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { loadFleet } from '../lib/fleet/config.ts';
import { memoryLog } from '../lib/log.ts';
import { openMeshDatabase } from '../lib/mesh/schema.ts';
import { createSqliteMeshStore } from '../lib/mesh/sqlite-store.ts';
import { ensureKeys, loadPeerIdentity } from '../lib/peer/keys.ts';
import { createHub } from '../hub/hub.ts';
import { localInvoke } from './support/fleet.ts';
import { tempDir, testTokens } from './support/node.ts';

setDefaultTimeout(20_000); // per file (Bun scopes it so): real servers and processes are slow on a busy machine

const root = resolve(import.meta.dir, '..');
const doc = await Bun.file(join(root, 'docs/add-a-node.md')).text();
const example = /```ts\n([\s\S]*?)```/.exec(doc)![1]!;
const name = `host${process.pid}`;
const nodeFile = join(root, 'node', `${name}.ts`);
const dataDir = tempDir('lume-a2a-addnode-');
let proc: Bun.Subprocess<'ignore', 'pipe', 'pipe'> | undefined;

afterAll(() => {
  proc?.kill();
  rmSync(nodeFile, { force: true });
  rmSync(dataDir, { recursive: true, force: true });
});

test('a new node file plus a fleet entry is enough to join', async () => {
  expect(example.trim().split('\n').length).toBeLessThan(40);
  // The example names itself `host`; this copy takes a name no other test uses.
  writeFileSync(nodeFile, example.replaceAll("name: 'host'", `name: '${name}'`));
  const probe = Bun.serve({ port: 0, fetch: () => new Response() });
  const port = probe.port!;
  probe.stop(true);
  const fleetFile = join(dataDir, 'fleet.json');
  writeFileSync(
    fleetFile,
    JSON.stringify({
      hub: { name: 'a2a', port: 0, role: 'hub', file: 'hub/main.ts' },
      nodes: [{ name, port, role: 'Read-only snapshot: uptime and load', file: `node/${name}.ts` }],
    }),
  );
  const fleet = await loadFleet(fleetFile);
  await ensureKeys(dataDir, fleet);

  proc = Bun.spawn(['bun', 'node/main.ts', '--name', name], {
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
  for (const part of ['lib', 'hub', 'node', 'fixtures', 'package.json', 'tsconfig.json'])
    cpSync(join(root, part), join(copy, part), { recursive: true });
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

  // 0. The scaffold and its test.
  const scaffold = blocks.find((b) => b.lang === 'sh' && b.text.includes('new-node'))!;
  for (const line of commands(scaffold.text)) {
    const r = await sh(line, copy);
    expect([line, r.code, r.out]).toEqual([line, 0, expect.any(String)]);
  }
  expect(readFileSync(join(copy, 'node/host.ts'), 'utf8')).toContain("id: 'host.greet'");

  // 1. The example over the scaffold, its test pointed at host.load; 2. the fleet entry.
  writeFileSync(join(copy, 'node/host.ts'), example);
  const hostTest = join(copy, 'test/host.test.ts');
  writeFileSync(
    hostTest,
    readFileSync(hostTest, 'utf8')
      .replaceAll('host.greet', 'host.load')
      .replace("{ who: 'Ada' }", '{}')
      .replace("{ greeting: 'Hello, Ada!' }", "{ source: 'live' }"),
  );
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
