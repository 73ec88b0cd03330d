/**
 * The mesh as tools: the hub serves the JSON-schema definitions of `a2a_peers`, `a2a_message` and
 * `a2a_history`; a model-backed node with a mesh presence lists its peers and sends a mesh message
 * through them when its model (a real OpenAI-compatible server on port 0) calls them, and reads
 * the history back.
 */

import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import Ajv from 'ajv';
import { memoryLog } from '../lib/log.ts';
import { createMeshClient } from '../lib/mesh/client.ts';
import { modelBackedNode } from '../lib/node/model-node.ts';
import { presenceActor } from '../lib/agents/mesh-actors.ts';
import { MESH_TOOL_DEFINITIONS, meshTools, meshToolsFor } from '../lib/agents/mesh-tools.ts';
import { realNodeDefs, startFleet, type RunningFleet } from './support/fleet.ts';
import { join, startHub, type TestHub } from './support/mesh.ts';
import {
  lastUser,
  startModelServer,
  type ChatBody,
  type ModelServer,
} from './support/model-server.ts';
import { msgV1, rpc, startNode, type TestNode } from './support/node.ts';

setDefaultTimeout(20_000); // per file (Bun scopes it so): real servers and processes are slow on a busy machine

let f: RunningFleet;
beforeAll(async () => {
  f = await startFleet(await realNodeDefs(['scanner']));
});
afterAll(() => f.stop());

test('GET /api/mesh/tools serves the three definitions as OpenAI-style functions with valid JSON schemas', async () => {
  const res = await fetch(`${f.hubUrl}/api/mesh/tools`);
  expect(res.status).toBe(200);
  const { tools } = await res.json();
  expect(tools.map((t: any) => [t.type, t.function.name])).toEqual([
    ['function', 'a2a_peers'],
    ['function', 'a2a_message'],
    ['function', 'a2a_history'],
  ]);
  expect(tools.map((t: any) => t.function)).toEqual(
    JSON.parse(JSON.stringify(MESH_TOOL_DEFINITIONS)),
  );
  const ajv = new Ajv({ strict: true });
  const message = ajv.compile(tools[1].function.parameters);
  expect(message({ target: { type: 'agent', name: 'bob' }, text: 'hi' })).toBe(true);
  expect(
    message({ target: { type: 'agent', name: 'bob' }, text: 'hi', attachments: ['/etc/passwd'] }),
  ).toBe(false);
  expect(message({ text: 'no target' })).toBe(false);
  expect(
    (await fetch(`${f.hubUrl}/api/mesh/tools`, { method: 'POST', headers: { Origin: f.hubUrl } }))
      .status,
  ).toBe(405);
});

test('a model-backed agent lists its peers and messages one of them over the mesh, through the tools', async () => {
  const hub: TestHub = startHub();
  const steps: string[] = [];
  // The model's plan: who is here? then message bob; then say what it did.
  const model: ModelServer = startModelServer((b: ChatBody) => {
    const results = b.messages.filter((m) => m.role === 'tool').map((m) => JSON.parse(m.content!));
    if (results.length === 0)
      return (steps.push('peers'), { calls: [{ name: 'a2a_peers', args: {} }] });
    if (results.length === 1) {
      const peer = results[0].result.peers[0];
      steps.push(`message ${peer}`);
      return {
        calls: [
          {
            name: 'a2a_message',
            args: {
              target: { type: 'agent', name: peer },
              text: `hello ${peer}, asked: ${lastUser(b)}`,
            },
          },
        ],
      };
    }
    if (results.length === 2)
      return (steps.push('history'), { calls: [{ name: 'a2a_history', args: { limit: 5 } }] });
    return { text: `Sent ${results[1].result.ref} to ${results[1].result.recipients.join(', ')}.` };
  });
  let node: TestNode | undefined;
  const mesh = createMeshClient({ hubUrl: hub.url, log: memoryLog() });
  try {
    await hub.store.createProject({ name: 'main' });
    const bob = await join(hub, 'main', 'bob');
    const def = (await realNodeDefs(['lan'], { dataDir: undefined }))[0]!;
    const { definition, health } = modelBackedNode(def, {
      endpoint: { baseUrl: model.baseUrl, model: 'tiny' },
      pingMs: 60_000,
      log: memoryLog(),
      toolsFor: (caller) =>
        meshToolsFor(caller, { self: 'lan', presence: presenceActor(mesh, 'lan') }),
      maxSteps: 5,
    });
    expect((await mesh.connect('lan', 'main', 'lan')).state).toBe('connected');
    node = await startNode(definition);
    const t = (
      await rpc(node.url, 'SendMessage', { message: msgV1('tell the others the DNS is fine') })
    ).result.task;
    expect(t.status.state).toBe('TASK_STATE_COMPLETED');
    expect(steps).toEqual(['peers', 'message bob', 'history']);
    const calls = t.artifacts[0].parts.find((p: any) => p.data).data.calls;
    expect(calls.map((c: any) => `${c.tool} ${c.ok}`)).toEqual([
      'a2a_peers true',
      'a2a_message true',
      'a2a_history true',
    ]);
    // The answer once: in the artifact, not repeated by the completed status.
    expect(t.artifacts[0].parts.find((p: any) => p.text).text).toBe('Sent main:1 to bob.');
    expect(t.status.message).toBeUndefined();
    // bob really got it, from lan.
    let frame = await bob.c.next();
    while (frame.type !== 'message') frame = await bob.c.next();
    expect([frame.message.from.name, frame.message.payload.data]).toEqual([
      'lan',
      'hello bob, asked: tell the others the DNS is fine',
    ]);
    // The history the model read holds the message it sent.
    const historyResult = JSON.parse(
      model.requests
        .at(-1)!
        .body.messages.filter((m) => m.role === 'tool')
        .at(-1)!.content!,
    );
    expect(historyResult.result.messages.map((m: any) => `${m.from}->${m.to}`)).toEqual([
      'lan->bob',
    ]);
    health?.stop();
  } finally {
    await node?.dispose();
    await mesh.close();
    await hub.stop();
    model.stop();
  }
});

test('the tools refuse malformed calls with codes and say when the agent is not connected', async () => {
  const hub: TestHub = startHub();
  const mesh = createMeshClient({ hubUrl: hub.url, log: memoryLog() });
  try {
    const [peers, message] = meshTools(presenceActor(mesh, 'ghost'));
    const signal = new AbortController().signal;
    expect(await peers!.run({}, signal)).toEqual({
      ok: false,
      error: { code: 'A2A_CLIENT_CLOSED', message: 'ghost is not connected to the mesh' },
    });
    expect(
      ((await message!.run({ target: { type: 'agent' }, text: 'x' }, signal)) as any).error.code,
    ).toBe('BAD_ARGS');
    expect(
      ((await message!.run({ target: { type: 'project' }, text: 'x' }, signal)) as any).error.code,
    ).toBe('A2A_CLIENT_CLOSED');
  } finally {
    await mesh.close();
    await hub.stop();
  }
});
