/**
 * What a mesh message says of its sender, through a real hub process: a client that shows the hub
 * a token in its hello is `from.principal` `user:<token name>` on every delivered copy, a client
 * that shows nothing carries no principal, and a message the console's quick panel sends for a
 * token holder (through the presence the hub holds for it) carries that holder's principal. A
 * client cannot set it, but may claim without it (`hello.anonymous`, as a node's own presence
 * does). (A node's mesh inbox runs the turn as that principal:
 * test/caller-policy.test.ts.)
 */

import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import { rmSync } from 'node:fs';
import { memoryLog } from '../lib/log.ts';
import { createMeshClient, type MeshClient } from '../lib/mesh/client.ts';
import type { MeshMessage } from '../lib/mesh/wire.ts';
import { TEST_AUTH, TEST_TOKEN } from './support/node.ts';
import { startProcess, type ServingProcess } from './support/process.ts';

setDefaultTimeout(30_000); // per file (Bun scopes it so): real processes are slow on a busy machine

let hub: ServingProcess;
const clients: MeshClient[] = [];
let got: MeshMessage[] = [];
let wake = () => {};
beforeAll(async () => {
  hub = await startProcess('hub/main.ts');
  const r = await fetch(`${hub.url}/api/projects.create`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...TEST_AUTH },
    body: JSON.stringify({ name: 'who' }),
  });
  expect(r.status).toBe(200);
  const reader = client(TEST_TOKEN, (m) => {
    got.push(m);
    wake();
  });
  expect((await reader.connect('reader', 'who', 'reader')).state).toBe('connected');
});
afterAll(async () => {
  for (const c of clients) c.close();
  await hub?.stop();
  if (hub) rmSync(hub.dataDir, { recursive: true, force: true });
});

function client(
  token: string | undefined,
  onMessage?: (m: MeshMessage) => void,
  anonymous = false,
): MeshClient {
  const c = createMeshClient({
    hubUrl: hub.url,
    log: memoryLog(),
    ...(token ? { token } : {}),
    ...(anonymous ? { anonymous } : {}),
    ...(onMessage ? { onInbound: (m) => onMessage(m.message) } : {}),
  });
  clients.push(c);
  return c;
}

/** The reader's copy of the next message sent by `from`. */
async function delivered(from: string): Promise<MeshMessage> {
  for (;;) {
    const m = got.find((x) => x.from.name === from);
    if (m) {
      got = got.filter((x) => x !== m);
      return m;
    }
    await new Promise<void>((r) => (wake = r));
  }
}

test('a sender with a token in its hello is its user; one with none carries no principal', async () => {
  const holder = client(TEST_TOKEN);
  expect((await holder.connect('holder', 'who', 'holder')).state).toBe('connected');
  const sent = await holder.send('holder', {
    target: { type: 'agent', name: 'reader' },
    text: 'hi',
  });
  expect(sent.ok && sent.result.message.from.principal).toBe('user:tester');
  expect((await delivered('holder')).from.principal).toBe('user:tester');

  const nobody = client(undefined);
  expect((await nobody.connect('nobody', 'who', 'nobody')).state).toBe('connected');
  await nobody.send('nobody', { target: { type: 'agent', name: 'reader' }, text: 'hi' });
  expect((await delivered('nobody')).from).not.toHaveProperty('principal');
  // The history says the same, so a replay or another hub's delivery carries it too.
  const h = (await (
    await fetch(`${hub.url}/v1/history?project=who`, { headers: TEST_AUTH })
  ).json()) as { messages: MeshMessage[] };
  expect(h.messages.map((m) => [m.from.name, m.from.principal ?? null])).toEqual([
    ['holder', 'user:tester'],
    ['nobody', null],
  ]);
});

test("an agent's presence claims with its token but anonymous: its words carry no principal", async () => {
  // As a node's mesh presence does (lib/node/mesh-presence.ts): another node must not run what its
  // model says as this token, or whoever made the model say it would borrow the token.
  const agent = client(TEST_TOKEN, undefined, true);
  expect((await agent.connect('agent', 'who', 'agent')).state).toBe('connected');
  await agent.send('agent', { target: { type: 'agent', name: 'reader' }, text: 'an answer' });
  expect((await delivered('agent')).from).not.toHaveProperty('principal');
});

test("the console panel's send for a token holder carries the holder's principal", async () => {
  const r = await fetch(`${hub.url}/api/mesh/send`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin: hub.url, ...TEST_AUTH },
    body: JSON.stringify({ project: 'who', to: 'reader', text: 'from the console' }),
  });
  expect(r.status).toBe(200);
  const m = await delivered('tester');
  expect(m.from.principal).toBe('user:tester');
});
