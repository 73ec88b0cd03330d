/**
 * Chatting with fleet nodes over the mesh, as a user does: a real hub process and real node
 * processes (`bun run node` with `MESH_AUTO_CONNECT=1`, keyword agents, no model), and a real
 * mesh client. Each node joins `main` under its own name; a direct message to a node gets its
 * agent's answer with `replyTo`, and a broadcast that names a node is answered to everyone.
 */

import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import { rmSync } from 'node:fs';
import { memoryLog } from '../lib/log.ts';
import { createMeshClient, type MeshClient } from '../lib/mesh/client.ts';
import { createHubClient } from '../lib/mesh/http-client.ts';
import { decodeText } from '../lib/mesh/payload.ts';
import type { MeshMessage } from '../lib/mesh/wire.ts';
import { tempDir } from './support/node.ts';
import { freePorts, spawnBun, writeFleetFile, type Proc } from './support/processes.ts';

setDefaultTimeout(20_000); // per file (Bun scopes it so): real servers and processes are slow on a busy machine

const dataDir = tempDir();
const [hubPort, lanPort, crmPort] = freePorts(3);
const hubUrl = `http://127.0.0.1:${hubPort}`;
const env = {
  FLEET_FILE: writeFleetFile(dataDir, hubPort!, [
    { name: 'lan', port: lanPort!, file: 'node/lan/index.ts' },
    { name: 'crm', port: crmPort!, file: 'node/crm/index.ts' },
  ]),
  DATA_DIR: dataDir,
  MESH_AUTO_CONNECT: '1',
};
const procs: Proc[] = [];
let alice: MeshClient;
const got: MeshMessage[] = [];
const waiters: (() => void)[] = [];

beforeAll(async () => {
  const hub = spawnBun(['hub/main.ts'], env);
  procs.push(hub);
  await hub.out.until(/listening|console/i);
  for (const name of ['lan', 'crm']) procs.push(spawnBun(['node/main.ts', '--name', name], env));
  // Both nodes are present once the hub's roster says so (each joins after its boot check).
  const http = createHubClient({ baseUrl: hubUrl });
  alice = createMeshClient({
    hubUrl,
    log: memoryLog(),
    attachmentsDir: dataDir,
    onInbound: (m) => {
      got.push(m.message);
      for (const w of waiters.splice(0)) w();
    },
  });
  expect((await alice.connect('alice', 'main')).state).toBe('connected');
  while (!['lan', 'crm'].every((n) => alice.peers('alice').includes(n)))
    await new Promise<void>((r) => {
      const off = alice.on('change', () => (off(), r()));
    });
  expect((await http.presence('main')).ok).toBe(true);
});
afterAll(async () => {
  await alice?.close();
  for (const p of procs) p.proc.kill('SIGTERM');
  await Promise.all(procs.map((p) => p.proc.exited));
  rmSync(dataDir, { recursive: true, force: true });
});

const answers = async (n: number) => {
  while (got.length < n) await new Promise<void>((r) => waiters.push(r));
  return got.slice(0, n);
};

test("a direct message to a node process gets its agent's answer with replyTo", async () => {
  const sent = await alice.send('alice', {
    target: { type: 'agent', name: 'lan' },
    text: 'lan status',
  });
  expect(sent.ok).toBe(true);
  const [answer] = await answers(1);
  expect([answer!.from.name, answer!.target, answer!.replyTo]).toEqual([
    'lan',
    { type: 'agent', name: 'alice', presenceId: expect.any(String) },
    sent.ok ? sent.result.message.messageRef : '',
  ]);
  expect(decodeText(answer!.payload)).toMatch(/hosts online/);
});

test('a broadcast naming crm is answered by crm alone, to everyone', async () => {
  const sent = await alice.send('alice', {
    target: { type: 'project' },
    text: 'crm, which industries need a follow-up?',
  });
  expect(sent.ok).toBe(true);
  const [, answer] = await answers(2);
  expect([answer!.from.name, answer!.target.type, answer!.replyTo]).toEqual([
    'crm',
    'project',
    sent.ok ? sent.result.message.messageRef : '',
  ]);
  expect(decodeText(answer!.payload)).toMatch(/industries/);
  // lan heard it too and stayed quiet: its next answer is to the next question, not to this one.
  const next = await alice.send('alice', {
    target: { type: 'agent', name: 'lan' },
    text: 'lan dns',
  });
  const [, , third] = await answers(3);
  expect([third!.from.name, third!.replyTo]).toEqual([
    'lan',
    next.ok ? next.result.message.messageRef : '',
  ]);
});
