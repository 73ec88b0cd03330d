/** `bun run mesh …` commands run in process against a real hub: what the user reads on stdout and stderr. */

import { afterEach, expect, setDefaultTimeout, test } from 'bun:test';
import { runMeshCli } from '../hub/mesh/cli.ts';
import { hubUrlList } from '../lib/mesh/http-client.ts';
import { join, startHub, type TestHub } from './support/mesh.ts';

setDefaultTimeout(20_000); // per file (Bun scopes it so): real servers and processes are slow on a busy machine

let hub: TestHub;
afterEach(async () => {
  await hub?.stop();
});

async function run(argv: string[], lines?: AsyncIterable<string>, hubs: string[] = [hub.url]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runMeshCli(argv, {
    out: (l) => out.push(l),
    err: (l) => err.push(l),
    hubUrl: hubs[0]!,
    hubUrls: hubs.slice(1),
    lines,
    waitMs: 2000,
  });
  return { code, out, err };
}

/** An address on loopback where nothing listens any more: connecting to it is refused. */
async function closedAddress(): Promise<string> {
  const s = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response('') });
  const url = `http://127.0.0.1:${s.port}`;
  await s.stop(true);
  return url;
}

test('several hubs: a command asks the next when one refuses the connection, and says which it tried when all do', async () => {
  expect(hubUrlList('http://a:1, http://b:2,', undefined, 'http://a:1')).toEqual([
    'http://a:1',
    'http://b:2',
  ]);
  hub = startHub();
  const gone = await closedAddress();
  expect(await run(['project', 'create', 'demo'], undefined, [gone, hub.url])).toEqual({
    code: 0,
    out: ['created project demo'],
    err: [],
  });
  expect((await run(['project', 'list'], undefined, [gone, hub.url])).out).toEqual(['demo']);
  const bob = await join(hub, 'demo', 'bob');
  bob.c.ws.addEventListener('message', (e) => {
    const f = JSON.parse(String(e.data));
    if (f.type === 'message')
      bob.c.ws.send(JSON.stringify({ type: 'delivered', messageId: f.message.messageId }));
  });
  // The mesh connection fails over too: `send` reaches bob through the hub that answers.
  expect(
    await run(['send', 'demo', '--as', 'alice', '--to', 'bob', 'hi'], undefined, [gone, hub.url]),
  ).toEqual({ code: 0, out: ['sent demo:1 to bob', 'delivered to bob'], err: [] });
  const other = await closedAddress();
  expect(await run(['project', 'list'], undefined, [gone, other])).toEqual({
    code: 1,
    out: [],
    err: [
      `error A2A_HTTP_TRANSPORT: cannot reach the hub at ${gone} or ${other}: connection refused`,
    ],
  });
});

test('projects, peers, send and history, with one-line coded errors', async () => {
  hub = startHub();
  expect(await run(['project', 'create', 'demo', '--desc', 'the demo'])).toEqual({
    code: 0,
    out: ['created project demo'],
    err: [],
  });
  expect(await run(['project', 'create', 'demo'])).toEqual({
    code: 1,
    out: [],
    err: ['error A2A_PROJECT_CONFLICT: project-conflict: project demo already exists'],
  });
  expect((await run(['project', 'list'])).out).toEqual(['demo  the demo']);
  const bob = await join(hub, 'demo', 'bob');
  expect((await run(['peers', 'demo'])).out).toEqual(['bob']);
  expect((await run(['status'])).out).toEqual([
    `hub ${hub.url} protocol 3`,
    'demo: 1 present (bob)',
  ]);

  // bob acknowledges whatever arrives, so `send` can report the outcome.
  bob.c.ws.addEventListener('message', (e) => {
    const f = JSON.parse(String(e.data));
    if (f.type === 'message')
      bob.c.ws.send(JSON.stringify({ type: 'delivered', messageId: f.message.messageId }));
  });
  expect(await run(['send', 'demo', '--as', 'alice', '--to', 'bob', 'hello', 'bob'])).toEqual({
    code: 0,
    out: ['sent demo:1 to bob', 'delivered to bob'],
    err: [],
  });
  expect(await run(['send', 'demo', '--as', 'bob', 'hi'])).toEqual({
    code: 1,
    out: [],
    err: ['error A2A_NAME_IN_USE: name_in_use: name bob is already present in project demo'],
  });
  expect(await run(['send', 'demo', '--as', 'alice', '--to', 'zed', 'hi'])).toEqual({
    code: 1,
    out: [],
    err: [
      'error A2A_RECIPIENT_NOT_PRESENT: recipient_not_present: zed is not present in project demo',
    ],
  });
  const h = await run(['history', 'demo', '--limit', '5']);
  expect(h.out).toEqual([expect.stringMatching(/^demo:1 \S+Z alice -> bob: hello bob$/)]);
  expect((await run(['history', 'demo', '--before', 'demo:1'])).out).toEqual(['no messages']);
  expect((await run(['history', 'demo', '--before', 'x', '--after', 'y'])).err).toEqual([
    'error A2A_BAD_REQUEST: A2A_BAD_REQUEST: before and after cannot be combined',
  ]);
  expect((await run(['project', 'delete', 'demo'])).err[0]).toStartWith(
    'error A2A_PROJECT_CONFLICT:',
  );
  expect((await run(['frobnicate'])).code).toBe(2);
});

test('connect stays connected: prints arrivals and joins, sends typed lines, /to and /reply', async () => {
  hub = startHub();
  await hub.store.createProject({ name: 'demo' });
  const bob = await join(hub, 'demo', 'bob');
  const typed = lineFeed();
  const session = run(['connect', 'demo', '--as', 'alice'], typed.lines);
  expect((await bob.c.next()).type).toBe('presence_joined');
  typed.push('hello everyone');
  const broadcast = await bob.c.next();
  await bob.c.send({ type: 'delivered', messageId: broadcast.message.messageId });
  await bob.c.send({
    type: 'message',
    requestId: 'r1',
    messageId: 'b-1',
    target: { type: 'agent', name: 'alice' },
    payload: { encoding: 'identity', data: 'hi alice', uncompressedBytes: 8 },
    attachments: [],
  });
  expect((await bob.c.take(2)).map((f) => f.status ?? f.type)).toEqual(['accepted', 'delivered']);
  typed.push('/reply demo:2 got it');
  const reply = await bob.c.next();
  expect([reply.message.target.name, reply.message.replyTo]).toEqual(['bob', 'demo:2']);
  typed.push('/to nobody hi');
  typed.push('/quit');
  const { code, out, err } = await session;
  expect(code).toBe(0);
  expect(out.map((l) => l.replace(/ \S+Z /, ' T '))).toEqual([
    'connected to demo as alice; present: bob (/quit to leave)',
    '* sent demo:1 to bob',
    '* delivered to bob',
    'demo:2 T bob -> alice: hi alice',
    '* sent demo:3 to bob',
  ]);
  expect(err).toEqual([
    'error A2A_RECIPIENT_NOT_PRESENT: recipient_not_present: nobody is not present in project demo',
  ]);
});

/** Lines a test types, one at a time. */
function lineFeed() {
  const queue: string[] = [];
  let wake: (() => void) | undefined;
  return {
    push(l: string) {
      queue.push(l);
      wake?.();
    },
    lines: (async function* () {
      for (;;) {
        while (queue.length === 0) await new Promise<void>((r) => (wake = r));
        yield queue.shift()!;
      }
    })(),
  };
}
