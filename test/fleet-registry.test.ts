/**
 * The fleet registry (lib/fleet/registry.ts): one reading of the fleet per process that follows
 * the fleet file and the ring, says what changed (joined, left, moved, changed, rekeyed), keeps
 * the last good view when the file is edited into something invalid (and says why), applies
 * readings one at a time, and is never changed by a caller. A hub made with it shows the file's
 * problem in `/api/fleet` and keeps serving the last good fleet.
 */

import { afterAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Database } from 'bun:sqlite';
import type { Fleet } from '../lib/config/fleet-file.ts';
import { FleetRegistry, fleetChanges, type FleetChange } from '../lib/fleet/registry.ts';
import type { PeerRing } from '../lib/peer/signature.ts';
import { createHub } from '../hub/hub.ts';
import { silentLog } from '../lib/log.ts';
import { openMeshDatabase } from '../lib/mesh/schema.ts';
import { createSqliteMeshStore } from '../lib/mesh/sqlite-store.ts';
import { ensureKeys, loadPeerIdentity } from '../lib/peer/keys.ts';
import { tempDir } from './support/node.ts';

setDefaultTimeout(20_000); // per file (Bun scopes it so): real servers and processes are slow on a busy machine

const dir = tempDir('lume-a2a-registry-');
const file = join(dir, 'fleet.json');
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const member = (name: string, port: number, extra: Record<string, unknown> = {}) => ({
  name,
  port,
  role: `${name} role`,
  file: '',
  url: `http://127.0.0.1:${port}`,
  ...extra,
});
const doc = (nodes: ReturnType<typeof member>[]) => ({
  hub: member('a2a', 4100, { file: 'hub/main.ts' }),
  nodes,
});
const write = (d: unknown) => writeFileSync(file, typeof d === 'string' ? d : JSON.stringify(d));
const asFleet = (d: ReturnType<typeof doc>): Fleet => ({
  hub: { ...d.hub, default: true },
  nodes: d.nodes.map((n) => ({ ...n, default: true })),
});

describe('fleetChanges', () => {
  test('names who joined, left, moved, changed and changed keys', () => {
    const before = asFleet(doc([member('crm', 4101), member('lan', 4105), member('old', 4109)]));
    const after = asFleet(
      doc([member('crm', 4111), member('lan', 4105, { role: 'new role' }), member('new', 4110)]),
    );
    const ring = (key: string): PeerRing =>
      new Map([['lan', { ed25519: [key] }]]) as unknown as PeerRing;
    expect(fleetChanges(before, after, { before: ring('k1'), after: ring('k2') })).toEqual([
      { kind: 'moved', name: 'crm' },
      { kind: 'changed', name: 'lan' },
      { kind: 'rekeyed', name: 'lan' },
      { kind: 'joined', name: 'new' },
      { kind: 'left', name: 'old' },
    ]);
    expect(fleetChanges(before, before)).toEqual([]);
    const relayed = asFleet(doc([member('crm', 4101, { relay: true })]));
    expect(fleetChanges(asFleet(doc([member('crm', 4101)])), relayed)).toEqual([
      { kind: 'changed', name: 'crm' },
    ]);
  });
});

describe('FleetRegistry', () => {
  test('follows the file: a change is applied once, told to listeners, and counted', async () => {
    write(doc([member('crm', 4101)]));
    const reg = new FleetRegistry(asFleet(doc([member('crm', 4101)])), { file, pollMs: 0 });
    const heard: FleetChange[][] = [];
    const off = reg.subscribe((c) => heard.push([...c]));
    const live = reg.live;
    expect(await reg.refresh()).toEqual([]); // same stamp: nothing read
    write(doc([member('crm', 4101), member('weather', 4210)]));
    expect(await reg.refresh(true)).toEqual([{ kind: 'joined', name: 'weather' }]);
    expect(live.nodes.map((n) => n.name)).toEqual(['crm', 'weather']);
    expect(reg.member('weather')?.url).toBe('http://127.0.0.1:4210');
    expect(reg.version).toBe(2);
    off();
    write(doc([member('weather', 4210)]));
    expect(await reg.refresh(true)).toEqual([{ kind: 'left', name: 'crm' }]);
    expect(heard).toEqual([[{ kind: 'joined', name: 'weather' }]]);
    expect(live.nodes.map((n) => n.name)).toEqual(['weather']);
  });

  test('a file edited into invalid JSON keeps the last good view and says why; a fix clears it', async () => {
    write(doc([member('crm', 4101)]));
    const reg = new FleetRegistry(asFleet(doc([member('crm', 4101)])), { file, pollMs: 0 });
    write('{"hub": {"name": "a2a", ');
    expect(await reg.refresh(true)).toEqual([]);
    expect(reg.problem).toContain('JSON');
    expect(reg.live.nodes.map((n) => n.name)).toEqual(['crm']);
    write({ hub: { name: 'a2a' }, nodes: 'crm' });
    await reg.refresh(true);
    expect(reg.problem).toBe('fleet: nodes must be an array');
    write(doc([member('crm', 4101), member('lan', 4105)]));
    expect(await reg.refresh(true)).toEqual([{ kind: 'joined', name: 'lan' }]);
    expect(reg.problem).toBeUndefined();
  });

  test('a reading is frozen: no caller changes the fleet behind the registry', () => {
    const reg = new FleetRegistry(asFleet(doc([member('crm', 4101)])));
    expect(() => (reg.live.nodes as unknown[]).push(member('x', 1))).toThrow();
    expect(() => {
      (reg.live.hub as { url: string }).url = 'http://elsewhere';
    }).toThrow();
    expect(reg.live.hub.url).toBe('http://127.0.0.1:4100');
  });

  test('readings run one at a time: a replace racing a refresh of the same name ends whole', async () => {
    write(doc([]));
    const reg = new FleetRegistry(asFleet(doc([])), { file, pollMs: 0 });
    write(doc([member('weather', 4210)]));
    const joined = asFleet(doc([member('weather', 4210)]));
    const removed = asFleet(doc([]));
    const results = await Promise.all([
      reg.replace(joined),
      reg.refresh(true),
      reg.replace(removed),
      ...Array.from({ length: 20 }, (_, i) =>
        reg.replace(asFleet(doc([member(`app${i}`, 5000 + i)]))),
      ),
    ]);
    expect(results[0]).toEqual([{ kind: 'joined', name: 'weather' }]);
    expect(results[1]).toEqual([]); // the file says what the join said
    expect(results[2]).toEqual([{ kind: 'left', name: 'weather' }]);
    expect(reg.live.nodes.map((n) => n.name)).toEqual(['app19']);
  });

  test('the ring is reloaded with the file, and a key change is told as rekeyed', async () => {
    write(doc([member('lan', 4105)]));
    let ring: PeerRing = new Map([['lan', { ed25519: ['key-1'] }]]) as unknown as PeerRing;
    let reloads = 0;
    const reg = new FleetRegistry(asFleet(doc([member('lan', 4105)])), {
      file,
      pollMs: 0,
      ring: {
        current: () => ring,
        reload: async () => {
          reloads++;
          ring = new Map([['lan', { ed25519: ['key-2'] }]]) as unknown as PeerRing;
        },
      },
    });
    expect(await reg.refresh(true)).toEqual([{ kind: 'rekeyed', name: 'lan' }]);
    expect(reloads).toBe(1);
  });
});

describe('a hub following a fleet file it cannot read', () => {
  const hubDir = tempDir('lume-a2a-registry-hub-');
  const hubFile = join(hubDir, 'fleet.json');
  const fleetDoc = doc([member('crm', 4101)]);
  writeFileSync(hubFile, JSON.stringify(fleetDoc));
  const meshStore = createSqliteMeshStore({ db: openMeshDatabase(':memory:'), log: silentLog });
  afterAll(async () => {
    await meshStore.close();
    rmSync(hubDir, { recursive: true, force: true });
  });

  test('/api/fleet keeps the last good members and names the problem', async () => {
    await ensureKeys(hubDir, asFleet(fleetDoc));
    const hub = createHub({
      fleet: asFleet(fleetDoc),
      dataDir: hubDir,
      log: silentLog,
      identity: await loadPeerIdentity(hubDir, 'a2a'),
      joins: { from: hubFile, to: hubFile, reload: async () => {}, syncMs: 0 },
      traceDb: new Database(':memory:'),
      meshStore,
      grpc: false,
      fleetTtlMs: 0,
    });
    const server = hub.listen(0);
    try {
      writeFileSync(hubFile, '{ not json');
      await hub.registry.refresh(true);
      const snap = await (await fetch(`${server.url}/api/fleet`)).json();
      expect(snap.nodes.map((n: { name: string }) => n.name)).toEqual(['crm']);
      expect(snap.fleetFileProblem).toContain('JSON');
    } finally {
      await server.stop();
    }
  });
});
