/**
 * The presences the hub holds for console visitors (hub/mesh/console-presence.ts) against a real
 * hub on port 0 and a real mesh client watching the roster: one per principal and project under
 * the principal's name (the next free `name-2` when taken), a bound past which a new principal gets
 * CONSOLE_MESH_FULL and nothing joins, and an idle presence is released.
 */

import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import { rmSync } from 'node:fs';
import { memoryLog } from '../lib/log.ts';
import { createMeshClient, type MeshClient } from '../lib/mesh/client.ts';
import { createConsolePresences } from '../hub/mesh/console-presence.ts';
import { startFleet, type RunningFleet } from './support/fleet.ts';
import { TEST_AUTH, tempDir } from './support/node.ts';

setDefaultTimeout(20_000); // per file (Bun scopes it so): real servers and processes are slow on a busy machine

let f: RunningFleet;
let watcher: MeshClient;
const files = tempDir();

beforeAll(async () => {
  f = await startFleet([]);
  await fetch(`${f.hubUrl}/api/projects.create`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'main' }),
  });
  watcher = createMeshClient({ hubUrl: f.hubUrl, log: memoryLog(), attachmentsDir: files });
  expect((await watcher.connect('alice', 'main')).state).toBe('connected');
});
afterAll(async () => {
  await watcher?.close();
  await f?.stop();
  rmSync(files, { recursive: true, force: true });
});

test('one presence per principal, a taken name gets the next, past the bound CONSOLE_MESH_FULL', async () => {
  const presences = createConsolePresences({
    hubUrl: () => f.hubUrl,
    log: memoryLog(),
    limits: { presences: 1 },
  });
  // `alice` is present already (the watcher): the console's alice is alice-2.
  const sent = await presences.send({ kind: 'session', name: 'alice' }, 'main', { text: 'one' });
  expect(sent.ok && sent.result.name).toBe('alice-2');
  const again = await presences.send({ kind: 'session', name: 'alice' }, 'main', { text: 'two' });
  expect(again.ok && again.result.name).toBe('alice-2');
  expect(await presences.nameOf({ kind: 'token', name: 'alice' }, 'main')).toBe('alice-2');
  const full = await presences.send({ kind: 'token', name: 'bob' }, 'main', { text: 'three' });
  expect(full.ok ? 'sent' : full.error.code).toBe('CONSOLE_MESH_FULL');
  expect(presences.size).toBe(1);
  const roster = await (await fetch(`${f.hubUrl}/v1/presence?project=main`)).json();
  expect(roster.peers.map((p: { name: string }) => p.name).sort()).toEqual(['alice', 'alice-2']);
  await presences.close();
});

test('POST /api/mesh/send to a project that does not exist is 404 A2A_UNKNOWN_PROJECT, and nothing is held', async () => {
  const res = await fetch(`${f.hubUrl}/api/mesh/send`, {
    method: 'POST',
    headers: { Origin: f.hubUrl, 'content-type': 'application/json', ...TEST_AUTH },
    body: JSON.stringify({ project: 'nope', text: 'hello?' }),
  });
  expect([res.status, ((await res.json()) as any).error]).toEqual([
    404,
    { code: 'A2A_UNKNOWN_PROJECT', message: 'project nope does not exist' },
  ]);
  const me = await fetch(`${f.hubUrl}/api/mesh/me?project=nope`, { headers: TEST_AUTH });
  expect(((await me.json()) as any).present).toBe(false);
});

test('an idle presence is released (it leaves the mesh)', async () => {
  let released!: () => void;
  const left = new Promise<void>((resolve) => (released = resolve));
  const presences = createConsolePresences({
    hubUrl: () => f.hubUrl,
    log: memoryLog(),
    limits: { idleMs: 1 },
    onRelease: (r) => r.principal === 'user:carol' && released(),
  });
  const sent = await presences.send({ kind: 'session', name: 'carol' }, 'main', { text: 'hi' });
  expect(sent.ok).toBe(true);
  await left;
  expect(presences.size).toBe(0);
  expect(await presences.nameOf({ kind: 'session', name: 'carol' }, 'main')).toBeUndefined();
  await presences.close();
});
