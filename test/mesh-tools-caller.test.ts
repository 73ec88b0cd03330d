/**
 * A model's mesh tools act for the caller whose message the model answers (docs/security.md): an
 * anonymous A2A caller of a model-backed node, whose model (a real OpenAI-compatible server on
 * port 0) tries to read a protected project and post in the node's name, gets neither; a caller
 * with a token reads it; an issuer's user whose token carries a2a.read alone is offered no send
 * (and its model's send is UNKNOWN_TOOL), one with a2a.write sends; and `a2a_message` attaches files from the node's data folder only, or
 * inline base64, within the mesh's budget.
 */

import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import { mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join as joinPath } from 'node:path';
import { memoryLog } from '../lib/log.ts';
import { createMeshClient, type MeshClient } from '../lib/mesh/client.ts';
import { createHubClient } from '../lib/mesh/http-client.ts';
import { decodeAttachmentBytes, decodeText } from '../lib/mesh/payload.ts';
import { modelBackedNode } from '../lib/node/model-node.ts';
import { anonymousReader, presenceActor } from '../lib/agents/mesh-actors.ts';
import { meshTools, meshToolsFor } from '../lib/agents/mesh-tools.ts';
import { createOidcVerifier } from '../lib/auth/oidc/verifier.ts';
import { realNodeDefs } from './support/fleet.ts';
import { startHandIssuer, type HandIssuer } from './support/hand-issuer.ts';
import { startHub, type TestHub } from './support/mesh.ts';
import { startModelServer, type ChatBody, type ModelServer } from './support/model-server.ts';
import {
  msgV1,
  rpc,
  startNode,
  TEST_AUTH,
  tempDir,
  testTokens,
  type TestNode,
} from './support/node.ts';

setDefaultTimeout(20_000); // per file (Bun scopes it so): real servers and processes are slow on a busy machine

const MESH_TOKEN = 'mesh-secret-for-this-test';
const SECRET = 'CONFIDENTIAL: the deploy key rotates tonight';
let hub: TestHub;
let lan: MeshClient;
let alice: MeshClient;
let model: ModelServer;
let node: TestNode;
let issuer: HandIssuer;
const AUD = 'urn:lume:lan';
const toolResults = (b: ChatBody) =>
  b.messages.filter((m) => m.role === 'tool').map((m) => JSON.parse(m.content!));

beforeAll(async () => {
  // A hub that requires a principal (its mesh token), with a secret in its project's history.
  hub = startHub({ token: MESH_TOKEN });
  await hub.store.createProject({ name: 'main' });
  alice = createMeshClient({ hubUrl: hub.url, token: MESH_TOKEN, log: memoryLog() });
  lan = createMeshClient({ hubUrl: hub.url, token: MESH_TOKEN, log: memoryLog() });
  expect((await alice.connect('alice', 'main')).state).toBe('connected');
  expect((await lan.connect('lan', 'main')).state).toBe('connected');
  expect((await alice.send('alice', { target: { type: 'project' }, text: SECRET })).ok).toBe(true);
  // The model tries everything: read the history, then post in lan's name, then answer with what it saw.
  model = startModelServer((b) => {
    const done = toolResults(b);
    if (done.length === 0) return { calls: [{ name: 'a2a_history', args: { limit: 10 } }] };
    if (done.length === 1)
      return {
        calls: [
          { name: 'a2a_message', args: { target: { type: 'project' }, text: 'posted by lan' } },
        ],
      };
    return { text: `I saw: ${JSON.stringify(done)}` };
  });
  const def = (await realNodeDefs(['lan'], { dataDir: undefined }))[0]!;
  const dataDir = tempDir();
  const { definition } = modelBackedNode(def, {
    endpoint: { baseUrl: model.baseUrl, model: 'tiny' },
    agent: 'model',
    pingMs: 60_000,
    log: memoryLog(),
    maxSteps: 4,
    toolsFor: (caller) =>
      meshToolsFor(caller, {
        self: 'lan',
        presence: presenceActor(lan, 'lan'),
        anonymous: anonymousReader(createHubClient({ baseUrl: hub.url }), () => 'main'),
        dataDir: joinPath(dataDir, 'lan'),
      }),
  });
  issuer = await startHandIssuer(AUD);
  node = await startNode(definition, {
    dataDir,
    access: {
      tokens: testTokens(),
      oidc: createOidcVerifier([{ issuer: issuer.issuer, audience: AUD }]),
    },
  });
});

afterAll(async () => {
  await node?.dispose();
  await lan?.close();
  await alice?.close();
  await hub?.stop();
  model?.stop();
  await issuer?.stop();
});

/** Sends one text to the node as `auth` and returns the completed task's answer and the model's tool list. */
async function ask(auth: Record<string, string>) {
  const before = model.requests.length;
  const r = await rpc(node.url, 'SendMessage', { message: msgV1('what is new?') }, '1.0', 1, auth);
  const t = r.result.task;
  expect(t.status.state).toBe('TASK_STATE_COMPLETED');
  const offered = model.requests
    .slice(before)
    .filter((q) => q.body.tools?.length)[0]!
    .body.tools!.map((x) => x.function.name)
    .filter((n) => n.startsWith('a2a_'));
  // The answer is the artifact's text (a completed task's status repeats none of it).
  const text = t.artifacts[0].parts.find((p: { text?: string }) => p.text !== undefined).text;
  return { answer: text as string, offered };
}

test("an anonymous caller reads no protected project and posts nothing through the node's model", async () => {
  const { answer, offered } = await ask({});
  // Read-only tools, reading as nobody: the hub refuses; the send tool is not there at all.
  expect(offered).toEqual(['a2a_peers', 'a2a_history']);
  expect(answer).not.toContain('deploy key');
  expect(answer).toContain('A2A_UNAUTHORIZED');
  expect(answer).toContain('UNKNOWN_TOOL');
  const h = await alice.history('alice', { limit: 10 });
  expect(h.ok && h.result.map((m) => decodeText(m.payload))).toEqual([SECRET]);
});

test('a caller with a token reads the project and posts through the node, as the model asked', async () => {
  // A wrong token is refused outright, never taken for anonymous.
  const wrong = await rpc(node.url, 'SendMessage', { message: msgV1('what is new?') }, '1.0', 2, {
    Authorization: 'Bearer lume_not-a-token',
  });
  expect(wrong.error?.code).toBe(-32000);
  const { answer, offered } = await ask(TEST_AUTH);
  expect(offered).toEqual(['a2a_peers', 'a2a_message', 'a2a_history']);
  expect(answer).toContain('deploy key');
  const h = await alice.history('alice', { limit: 10 });
  expect(h.ok && h.result.map((m) => `${m.from.name}: ${decodeText(m.payload)}`)).toEqual([
    `alice: ${SECRET}`,
    'lan: posted by lan',
  ]);
});

test("an issuer's reader (a2a.read) gets no send through the model; a writer (a2a.write) sends", async () => {
  const reader = await issuer.sign({ sub: 'reader', scope: 'a2a.read' });
  const r = await ask({ Authorization: `Bearer ${reader}` });
  expect(r.offered).toEqual(['a2a_peers', 'a2a_history']);
  expect(r.answer).toContain('UNKNOWN_TOOL');
  const posted = async () => {
    const h = await alice.history('alice', { limit: 20 });
    return h.ok ? h.result.map((m) => decodeText(m.payload)) : [];
  };
  const before = await posted();
  expect(before.filter((t) => t === 'posted by lan').length).toBe(1);
  const writer = await issuer.sign({ sub: 'writer', scope: 'a2a.read a2a.write' });
  const w = await ask({ Authorization: `Bearer ${writer}` });
  expect(w.offered).toEqual(['a2a_peers', 'a2a_message', 'a2a_history']);
  expect((await posted()).filter((t) => t === 'posted by lan').length).toBe(2);
});

test('a2a_message attaches files of the data folder and inline base64, and nothing else', async () => {
  const dir = tempDir();
  const other = tempDir();
  cleanup.push(async () => {
    rmSync(dir, { recursive: true, force: true });
    rmSync(other, { recursive: true, force: true });
  });
  const outside = joinPath(other, 'outside.txt');
  writeFileSync(outside, 'not yours');
  mkdirSync(joinPath(dir, 'tasks'));
  writeFileSync(joinPath(dir, 'tasks', 't.json'), '{}');
  writeFileSync(joinPath(dir, 'report.txt'), 'the report');
  symlinkSync(outside, joinPath(dir, 'link.txt'));
  const message = meshTools(presenceActor(lan, 'lan'), { dataDir: dir }).find(
    (t) => t.definition.name === 'a2a_message',
  )!;
  const signal = new AbortController().signal;
  const send = (attachments: unknown) =>
    message.run({ target: { type: 'agent', name: 'alice' }, text: 'files', attachments }, signal);
  const code = async (a: unknown) =>
    ((await send(a)) as { error?: { code: string; message: string } }).error;
  expect((await code([{ path: '../outside.txt' }]))?.code).toBe('A2A_ATTACHMENT');
  expect((await code([{ path: outside }]))?.message).toContain('outside the data folder');
  expect((await code([{ path: 'link.txt' }]))?.message).toContain('outside the data folder');
  expect((await code([{ path: 'tasks/t.json' }]))?.message).toContain('not a file the node shares');
  expect((await code([{ name: 'x.bin', base64: 'not base64!' }]))?.message).toContain('canonical');
  expect(
    (await code(Array.from({ length: 9 }, (_, i) => ({ name: `f${i}`, base64: '' }))))?.message,
  ).toContain('at most 8');
  const big = Buffer.alloc(4 * 1024 * 1024).toString('base64');
  expect((await code([{ name: 'big.bin', base64: big }]))?.message).toContain('budget');
  const got = new Promise<{ names: string[]; bytes: string[] }>((resolve) => {
    const inbound = createMeshClient({
      hubUrl: hub.url,
      token: MESH_TOKEN,
      log: memoryLog(),
      attachmentsDir: joinPath(other, 'inbound'),
      onInbound: (m) =>
        resolve({
          names: m.message.attachments.map((a) => a.name),
          bytes: m.message.attachments.map((a) =>
            Buffer.from(decodeAttachmentBytes(a.payload)!).toString(),
          ),
        }),
    });
    void inbound.connect('bob', 'main');
    cleanup.push(() => inbound.close());
  });
  await hubHas('bob');
  const sent = await message.run(
    {
      target: { type: 'agent', name: 'bob' },
      text: 'two files',
      attachments: [
        { path: 'report.txt' },
        { name: 'note.txt', base64: Buffer.from('inline').toString('base64') },
      ],
    },
    signal,
  );
  expect(sent).toMatchObject({ ok: true, result: { recipients: ['bob'], attachments: 2 } });
  expect(await got).toEqual({ names: ['report.txt', 'note.txt'], bytes: ['the report', 'inline'] });
  for (const c of cleanup) await c();
});

const cleanup: (() => Promise<void>)[] = [];

/** Waits until `name` is in lan's roster (a presence_joined frame reached lan). */
function hubHas(name: string): Promise<void> {
  if (lan.peers('lan').includes(name)) return Promise.resolve();
  return new Promise((resolve) => {
    const off = lan.on('change', () => {
      if (lan.peers('lan').includes(name)) {
        off();
        resolve();
      }
    });
  });
}
