/**
 * Agents that hear the mesh (lib/node/mesh-inbox.ts): a real hub on port 0, real nodes with a
 * mesh presence whose inbound messages become turns of their agent, and real mesh clients. A
 * direct message gets its agent's answer with `replyTo`, in order for a burst of 50; a broadcast
 * is answered only when it names the agent; two agents that always ask back stop at the
 * conversation's reply limit; a full inbox and an agent that is not running are `failed` with
 * their reason; a question left open is continued by the next message of its conversation.
 */

import { isA2AError } from '../lib/a2a/errors.ts';
import { afterEach, expect, setDefaultTimeout, test } from 'bun:test';
import type { Agent } from '../lib/a2a/agent.ts';
import { memoryLog } from '../lib/log.ts';
import { createMeshClient, type MeshClient } from '../lib/mesh/client.ts';
import { decodeText } from '../lib/mesh/payload.ts';
import type { MeshMessage } from '../lib/mesh/wire.ts';
import type { NodeDefinition } from '../lib/node/node-types.ts';
import { createMeshInbox, engineTurns, type InboxOutcome } from '../lib/node/mesh-inbox.ts';
import { realNodeDefs } from './support/fleet.ts';
import { startHub, type TestHub } from './support/mesh.ts';
import { agentNode, gate, startNode, type TestNode } from './support/node.ts';

setDefaultTimeout(20_000); // per file (Bun scopes it so): real servers and processes are slow on a busy machine

const stops: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const s of stops.splice(0).reverse()) await s();
});

async function hub(): Promise<TestHub> {
  const h = startHub();
  stops.push(() => h.stop());
  await h.store.createProject({ name: 'main' });
  return h;
}

/** A node of `def` whose presence in `main` hands messages to its agent, as `bun run node` with mesh.autoConnect wires it. */
async function meshNode(
  h: TestHub,
  def: NodeDefinition,
  o: { queueLimit?: number; maxThreadReplies?: number; attach?: boolean } = {},
) {
  const outcomes: InboxOutcome[] = [];
  const waiters: (() => void)[] = [];
  let client: MeshClient;
  const inbox = createMeshInbox({
    name: def.name,
    post: (req) => client.send(def.name, req),
    log: memoryLog(),
    ...o,
    onOutcome: (x) => {
      outcomes.push(x);
      for (const w of waiters.splice(0)) w();
    },
  });
  client = createMeshClient({ hubUrl: h.url, log: memoryLog(), onInbound: (m) => inbox.take(m) });
  const node: TestNode = await startNode(def);
  if (o.attach !== false) inbox.attach(engineTurns(node.node.engine, def.name, true));
  stops.push(() => node.dispose());
  stops.push(() => client.close());
  expect((await client.connect(def.name, 'main')).state).toBe('connected');
  /** Resolves once `n` outcomes are in. */
  const settled = async (n: number) => {
    while (outcomes.length < n) await new Promise<void>((r) => waiters.push(r));
    return outcomes.slice(0, n);
  };
  return { client, inbox, node, outcomes, settled };
}

/** A person at a mesh client: what they receive, and the outcomes of what they sent. */
async function person(h: TestHub, name: string) {
  const got: MeshMessage[] = [];
  const deliveries: string[] = [];
  const waiters: (() => void)[] = [];
  const wake = () => {
    for (const w of waiters.splice(0)) w();
  };
  const client = createMeshClient({
    hubUrl: h.url,
    log: memoryLog(),
    onInbound: (m) => {
      got.push(m.message);
      wake();
    },
  });
  client.on('delivery', (d) => {
    deliveries.push(`${d.status}${d.status === 'failed' ? `: ${d.error}` : ''}`);
    wake();
  });
  stops.push(() => client.close());
  expect((await client.connect(name, 'main')).state).toBe('connected');
  const until = async (ok: () => boolean) => {
    while (!ok()) await new Promise<void>((r) => waiters.push(r));
  };
  const say = async (text: string, to?: string, replyTo?: string) => {
    const r = await client.send(name, {
      target: to ? { type: 'agent', name: to } : { type: 'project' },
      text,
      ...(replyTo ? { replyTo } : {}),
    });
    if (!r.ok) throw new Error(r.error.message);
    return r.result.message.messageRef;
  };
  return { client, got, deliveries, until, say };
}

test("a message to a node gets its agent's answer with replyTo, in order, for a burst of 50", async () => {
  const h = await hub();
  const [lanDef] = await realNodeDefs(['lan'], { dataDir: undefined });
  await meshNode(h, lanDef!);
  const alice = await person(h, 'alice');
  const refs: string[] = [];
  for (let i = 0; i < 50; i++)
    refs.push(await alice.say(i % 2 ? 'lan status' : 'which hosts are online', 'lan'));
  await alice.until(() => alice.got.length >= 50);
  expect(alice.got.map((m) => m.replyTo)).toEqual(refs);
  expect(alice.got.every((m) => m.from.name === 'lan' && m.target.type === 'agent')).toBe(true);
  // The keyword agent's own summaries: lan's status, and its hosts.
  expect(decodeText(alice.got[1]!.payload)).toMatch(/lan|network|hosts/i);
  expect(decodeText(alice.got[0]!.payload)).toMatch(/hosts online/);
  await alice.until(() => alice.deliveries.length >= 50);
  expect(new Set(alice.deliveries)).toEqual(new Set(['delivered']));
});

test('a broadcast is answered to everyone only when it names the agent; one that does not is context for the next turn', async () => {
  const h = await hub();
  const [lanDef] = await realNodeDefs(['lan'], { dataDir: undefined });
  const lan = await meshNode(h, lanDef!);
  const alice = await person(h, 'alice');
  const quiet = await alice.say('good morning everyone');
  const asked = await alice.say('lan status please');
  await lan.settled(2);
  expect(lan.outcomes[0]).toEqual({ ref: quiet, unanswered: 'a broadcast that does not name lan' });
  await alice.until(() => alice.got.length >= 1);
  expect([alice.got[0]!.replyTo, alice.got[0]!.target.type]).toEqual([asked, 'project']);
  // The broadcast nobody answered went with the next turn of its conversation: a reply to it.
  const followUp = await alice.say('@lan and the dns?', undefined, quiet);
  await alice.until(() => alice.got.length >= 2);
  expect(alice.got[1]!.replyTo).toBe(followUp);
  // The turns are lan's own tasks (no A2A caller sees them); the last one carried the broadcast as context.
  const page = await lan.node.node.engine.listTasks(
    { pageSize: 10, includeArtifacts: false, historyLength: 10 },
    { kind: 'node', name: 'lan' },
  );
  if (isA2AError(page)) throw new Error(page.message);
  const contexts = page.tasks.map((t) => (t.history?.[0]?.metadata?.['lume/mesh'] as any)?.context);
  expect(contexts).toContainEqual([expect.stringContaining('good morning everyone')]);
  const anonymous = await lan.node.node.engine.listTasks(
    { pageSize: 10, includeArtifacts: false },
    { kind: 'anonymous' },
  );
  expect(anonymous).toMatchObject({ tasks: [] });
});

test("two agents that always ask back stop at the conversation's reply limit", async () => {
  const h = await hub();
  const askBack = (name: string): Agent => ({
    handle: (ctx) => ctx.complete(`${name} heard "${ctx.text}"; and you?`),
  });
  const a = await meshNode(h, agentNode('ping', askBack('ping')), { maxThreadReplies: 6 });
  const b = await meshNode(h, agentNode('pong', askBack('pong')), { maxThreadReplies: 6 });
  // ping's model starts a conversation with pong (as its a2a_message tool would).
  const first = await a.client.send('ping', {
    target: { type: 'agent', name: 'pong' },
    text: 'hello?',
  });
  expect(first.ok).toBe(true);
  // They answer each other until one of them sees the limit; then nobody answers.
  const limit = 'the conversation already holds 6 replies';
  const stopped = () =>
    [...a.outcomes, ...b.outcomes].some((o) => 'unanswered' in o && o.unanswered === limit);
  while (!stopped())
    await Promise.race([a.settled(a.outcomes.length + 1), b.settled(b.outcomes.length + 1)]);
  const all = await a.client.history('ping', { limit: 100 });
  expect(all.ok && all.result.map((m) => `${m.from.name}>${m.replyTo ?? '-'}`)).toEqual(
    all.ok
      ? all.result.map(
          (_m, i) => `${i % 2 ? 'pong' : 'ping'}>${i ? all.result[i - 1]!.messageRef : '-'}`,
        )
      : [],
  );
  expect(all.ok && all.result.length).toBe(7);
});

test('a full inbox and an agent that is not running yet are failed with their reason', async () => {
  const h = await hub();
  const hold = gate();
  let started!: () => void;
  const first = new Promise<void>((r) => (started = r));
  const slow: Agent = {
    async handle(ctx) {
      started();
      await hold.promise;
      ctx.complete('done');
    },
  };
  await meshNode(h, agentNode('slow', slow), { queueLimit: 2 });
  await meshNode(h, agentNode('later', slow), { attach: false });
  const alice = await person(h, 'alice');
  await alice.say('one', 'slow');
  await first;
  for (const t of ['two', 'three', 'four']) await alice.say(t, 'slow');
  await alice.say('hello', 'later');
  await alice.until(() => alice.deliveries.length >= 5);
  expect(alice.deliveries).toEqual([
    'delivered',
    'delivered',
    'delivered',
    "failed: A2A_INBOX_FULL: 2 messages already wait for slow's agent; send it again later",
    "failed: later's agent is not running yet",
  ]);
  hold.open();
  await alice.until(() => alice.got.length >= 3);
  expect(alice.got.map((m) => decodeText(m.payload))).toEqual(['done', 'done', 'done']);
});

test('a question the agent left open is continued by the next message of its conversation', async () => {
  const h = await hub();
  const [lanDef] = await realNodeDefs(['lan'], { dataDir: undefined });
  await meshNode(h, lanDef!);
  const alice = await person(h, 'alice');
  await alice.say('tell me something', 'lan');
  await alice.until(() => alice.got.length >= 1);
  expect(decodeText(alice.got[0]!.payload)).toContain('Which do you want?');
  await alice.say('the dns then?', 'lan', alice.got[0]!.messageRef);
  await alice.until(() => alice.got.length >= 2);
  expect(decodeText(alice.got[1]!.payload)).not.toContain('Which do you want?');
});
