/**
 * Any app joins: the example node of docs/add-a-node.md (under 40 lines) is written as a new file
 * in node/, listed in a fleet file, started with `bun run node`, and shows up in the hub's
 * GET /api/fleet and in its trace, with nothing in lib/ or hub/ touched.
 */

import { Database } from 'bun:sqlite';
import { afterAll, expect, test } from 'bun:test';
import { rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { loadFleet } from '../lib/fleet/invoke.ts';
import { memoryLog } from '../lib/log.ts';
import { openMeshDatabase } from '../lib/mesh/schema.ts';
import { createSqliteMeshStore } from '../lib/mesh/sqlite-store.ts';
import { ensureKeys, loadPeerIdentity } from '../lib/peer/keys.ts';
import { createHub } from '../hub/hub.ts';
import { localInvoke } from './support/fleet.ts';
import { tempDir } from './support/node.ts';

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
  writeFileSync(fleetFile, JSON.stringify({
    hub: { name: 'a2a', port: 0, role: 'hub', file: 'hub/main.ts' },
    nodes: [{ name, port, role: 'Read-only snapshot: uptime and load', file: `node/${name}.ts` }],
  }));
  const fleet = await loadFleet(fleetFile);
  await ensureKeys(dataDir, fleet);

  proc = Bun.spawn(['bun', 'node/main.ts', '--name', name], { cwd: root, env: { ...process.env, FLEET_FILE: fleetFile, DATA_DIR: dataDir }, stdin: 'ignore', stdout: 'pipe', stderr: 'pipe' });
  const reader = proc.stdout.getReader();
  let out = '';
  while (!out.includes('listening on')) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`node exited: ${await new Response(proc.stderr).text()}`);
    out += new TextDecoder().decode(value);
  }

  const log = memoryLog();
  const meshStore = createSqliteMeshStore({ db: openMeshDatabase(':memory:'), log });
  const hub = createHub({ fleet, dataDir, log, identity: await loadPeerIdentity(dataDir, 'a2a'), traceDb: new Database(':memory:'), meshStore, fleetTtlMs: 0 });
  const server = hub.listen(0);
  try {
    const snap = await (await fetch(`${server.url}/api/fleet`)).json();
    expect(snap.nodes.map((n: any) => [n.name, n.kind, n.online, n.skills.map((s: any) => s.id)])).toEqual([[name, 'a2a', true, ['host.load']]]);
    const r = await localInvoke(server.url, { target: name, capability: 'host.load' });
    expect(r.json.ok).toBe(true);
    expect(r.json.result.cpus).toBeGreaterThan(0);
    const trace = (await (await fetch(`${server.url}/api/trace?to=${name}`)).json()).records;
    expect(trace.map((t: any) => [t.to, t.capability, t.outcome])).toEqual([[name, 'host.load', 'ok']]);
  } finally {
    await server.stop();
    meshStore.close();
  }
}, 20_000);
