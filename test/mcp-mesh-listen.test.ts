/**
 * The mesh for MCP 2026-07-28 clients, which have no session, through the official v2 client
 * (`@modelcontextprotocol/client` 2.4.0): a principal whose `subscriptions/listen` stream
 * subscribes to `lume://mesh/inbox` is present in the mesh; a message another principal sends it
 * (from a stateless client or a 2025-11-25 session of `@modelcontextprotocol/sdk` 1.32.2) arrives
 * on that stream as `notifications/resources/updated` with the message in `_meta`, and nowhere
 * else, over HTTP and through the stdio relay alike; the inbox reads back; without a stream the
 * mesh tools say how to be present; an anonymous listen is refused; a principal's streams are
 * bounded.
 */

import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { resolve } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { Client as SessionClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as SessionTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { MCP_LIMITS } from '../lib/mcp/limits.ts';
import { McpSessions } from '../lib/mcp/sessions.ts';
import { realNodeDefs, startFleet, type RunningFleet } from './support/fleet.ts';
import { TEST_AUTH } from './support/node.ts';

setDefaultTimeout(30_000); // per file (Bun scopes it so): real servers and processes are slow on a busy machine

const INBOX = 'lume://mesh/inbox';
const TOKENS = {
  alice: `alice-${crypto.randomUUID()}`,
  bob: `bob-${crypto.randomUUID()}`,
  carol: `carol-${crypto.randomUUID()}`,
  dave: `dave-${crypto.randomUUID()}`,
  erin: `erin-${crypto.randomUUID()}`,
  frank: `frank-${crypto.randomUUID()}`,
};
type Who = keyof typeof TOKENS;
const auth = (who: Who) => ({ Authorization: `Bearer ${TOKENS[who]}` });

let f: RunningFleet;
const closers: (() => Promise<unknown>)[] = [];

beforeAll(async () => {
  f = await startFleet(await realNodeDefs(['scanner']), { tokens: TOKENS });
  const made = await fetch(`${f.hubUrl}/api/projects.create`, {
    method: 'POST',
    headers: { ...TEST_AUTH, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'main', description: 'the default project' }),
  });
  expect(made.status).toBe(200);
});
afterAll(async () => {
  for (const c of closers.reverse()) await c().catch(() => {});
  await f.stop();
});

interface Heard {
  uri: string;
  message?: { ref: string; from: string; to: string; text: string; replyTo?: string };
}

/**
 * A v2 client pinned to 2026-07-28 as `who` (over HTTP, or over stdio through `bun run mcp`);
 * every `resources/updated` it hears is noted, in order.
 */
async function v2(who: Who, over: 'http' | 'stdio' = 'http') {
  const client = new Client(
    { name: `lume-${who}`, version: '1.0.0' },
    { versionNegotiation: { mode: { pin: '2026-07-28' } } },
  );
  await client.connect(
    over === 'http'
      ? new StreamableHTTPClientTransport(new URL(`${f.hubUrl}/mcp`), {
          requestInit: { headers: auth(who) },
        })
      : new StdioClientTransport({
          command: process.execPath,
          args: [resolve(import.meta.dir, '../hub/cli/mcp.ts')],
          env: {
            ...(process.env as Record<string, string>),
            LUME_HUB_URL: f.hubUrl,
            LUME_TOKEN: TOKENS[who],
          },
          stderr: 'pipe',
        }),
  );
  closers.push(() => client.close());
  const heard: Heard[] = [];
  const waiters: (() => void)[] = [];
  client.setNotificationHandler('notifications/resources/updated', (n) => {
    const meta = (n.params._meta ?? {}) as Record<string, unknown>;
    heard.push({ uri: n.params.uri, message: meta['lume-a2a/meshMessage'] as Heard['message'] });
    for (const w of waiters.splice(0)) w();
  });
  /** Resolves once `count` notifications have been heard. */
  const hear = async (count: number) => {
    while (heard.length < count) await new Promise<void>((r) => waiters.push(r));
    return heard;
  };
  return { client, heard, hear };
}

const call = async (c: Client, name: string, args: Record<string, unknown>) =>
  (await c.callTool({ name, arguments: args })) as {
    isError?: boolean;
    structuredContent?: any;
  };

describe('the mesh over subscriptions/listen', () => {
  test('a message to a listening principal reaches its stream only; the inbox reads back; replies travel too', async () => {
    const alice = await v2('alice');
    const bob = await v2('bob');
    const carol = await v2('carol');

    // Without a listen stream there is no presence: the tool says how to get one.
    const early = await call(alice.client, 'a2a_message', {
      target: { type: 'agent', name: 'bob' },
      text: 'too early',
    });
    expect(early.isError).toBe(true);
    expect(early.structuredContent.error.code).toBe('MCP_NO_MESH');
    expect(early.structuredContent.error.message).toContain(INBOX);

    const subs = [];
    for (const who of [alice, bob, carol]) {
      const sub = await who.client.listen({ resourceSubscriptions: [INBOX] });
      expect(sub.honoredFilter.resourceSubscriptions).toEqual([INBOX]);
      subs.push(sub);
    }
    const peers = await call(bob.client, 'a2a_peers', {});
    expect(peers.structuredContent.self).toBe('bob');
    expect(peers.structuredContent.peers).toEqual(expect.arrayContaining(['alice', 'carol']));

    const sent = await call(alice.client, 'a2a_message', {
      target: { type: 'agent', name: 'bob' },
      text: 'hello bob, from a stateless client',
    });
    expect(sent.isError).toBeFalsy();
    const [first] = await bob.hear(1);
    expect(first).toMatchObject({
      uri: INBOX,
      message: { from: 'alice', to: 'bob', text: 'hello bob, from a stateless client' },
    });

    // bob answers; alice hears it on her own stream.
    const back = await call(bob.client, 'a2a_message', {
      target: { type: 'agent', name: 'alice' },
      text: 'heard you',
      replyTo: first!.message!.ref,
    });
    expect(back.isError).toBeFalsy();
    expect((await alice.hear(1))[0]!.message).toMatchObject({
      from: 'bob',
      text: 'heard you',
      replyTo: first!.message!.ref,
    });

    // carol is sent one of her own after bob's: the first thing she hears is hers, not bob's.
    await call(alice.client, 'a2a_message', {
      target: { type: 'agent', name: 'carol' },
      text: 'for carol only',
    });
    const carolHeard = await carol.hear(1);
    expect(carolHeard.map((h) => h.message?.text)).toEqual(['for carol only']);

    // The inbox resource is the caller's own.
    const read = async (c: Client) =>
      JSON.parse(((await c.readResource({ uri: INBOX })).contents[0] as { text: string }).text);
    const bobs = await read(bob.client);
    expect(bobs.presence).toBe('bob');
    expect(bobs.messages.map((m: { text: string }) => m.text)).toEqual([
      'hello bob, from a stateless client',
    ]);
    expect((await read(carol.client)).messages.map((m: { text: string }) => m.text)).toEqual([
      'for carol only',
    ]);

    // The ref is the mesh's own cursor: what came after it is read back with a2a_history.
    const after = await call(bob.client, 'a2a_history', { after: first!.message!.ref });
    expect(after.structuredContent.messages.map((m: { text: string }) => m.text)).toContain(
      'heard you',
    );

    for (const s of subs) await s.close();
  });

  test('a 2025-11-25 session (the v1 SDK) still speaks in the mesh, and reaches a listening 2026 client', async () => {
    const frank = await v2('frank');
    const sub = await frank.client.listen({ resourceSubscriptions: [INBOX] });
    const dave = new SessionClient({ name: 'lume-dave', version: '1.0.0' });
    await dave.connect(
      new SessionTransport(new URL(`${f.hubUrl}/mcp`), { requestInit: { headers: auth('dave') } }),
    );
    closers.push(() => dave.close());
    const sent = await dave.callTool({
      name: 'a2a_message',
      arguments: { target: { type: 'agent', name: 'frank' }, text: 'from an old session' },
    });
    expect(sent.isError).toBeFalsy();
    expect((await frank.hear(1))[0]!.message).toMatchObject({
      from: 'dave',
      text: 'from an old session',
    });
    await sub.close();
  });

  test('over stdio (bun run mcp) the listen stream holds the presence and hears its messages too', async () => {
    const erin = await v2('erin', 'stdio');
    const sub = await erin.client.listen({ resourceSubscriptions: [INBOX] });
    expect(sub.honoredFilter.resourceSubscriptions).toEqual([INBOX]);
    const alice = await v2('alice');
    const aliceSub = await alice.client.listen({ resourceSubscriptions: [INBOX] });
    const sent = await call(alice.client, 'a2a_message', {
      target: { type: 'agent', name: 'erin' },
      text: 'through the stdio relay',
    });
    expect(sent.isError).toBeFalsy();
    // alice's first presence may still be leaving: she is present as alice or alice-2.
    expect((await erin.hear(1))[0]!.message).toMatchObject({
      from: expect.stringMatching(/^alice(-2)?$/),
      text: 'through the stdio relay',
    });
    await aliceSub.close();
    await sub.close();
  });

  test('an anonymous listen on the inbox is refused with a code; other listens are not affected', async () => {
    const res = await fetch(`${f.hubUrl}/mcp`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2026-07-28',
        'mcp-method': 'subscriptions/listen',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 7,
        method: 'subscriptions/listen',
        params: {
          notifications: { resourceSubscriptions: [INBOX] },
          _meta: {
            'io.modelcontextprotocol/protocolVersion': '2026-07-28',
            'io.modelcontextprotocol/clientCapabilities': {},
          },
        },
      }),
    });
    expect(res.status).toBe(401);
    const body = await res.json();
    expect(body.error.data.code).toBe('UNAUTHENTICATED');
    const carol = await v2('carol');
    const sub = await carol.client.listen({ toolsListChanged: true });
    expect(sub.honoredFilter.toolsListChanged).toBe(true);
    await sub.close();
  });
});

describe('the bounds of listen streams', () => {
  test('one principal holds at most listenersPerPrincipal; the process at most listeners', () => {
    const sessions = new McpSessions({ ...MCP_LIMITS, listenersPerPrincipal: 2, listeners: 3 });
    const a1 = sessions.listen(1, {}, 'user:a');
    const a2 = sessions.listen(2, {}, 'user:a');
    expect(a1.ok && a2.ok).toBe(true);
    const a3 = sessions.listen(3, {}, 'user:a');
    expect(!a3.ok && a3.error.code).toBe('MCP_TOO_MANY_LISTENERS');
    expect(sessions.listen(4, {}, 'user:b').ok).toBe(true);
    const b2 = sessions.listen(5, {}, 'user:b');
    expect(!b2.ok && b2.error.code).toBe('MCP_LISTENERS_FULL');
    // A stream that ends frees its place.
    if (a1.ok) a1.result.queue.close();
    expect(sessions.listen(6, {}, 'user:a').ok).toBe(true);
  });
});
