/** The client parses the hub's frames strictly: each frame type read, malformed and unknown frames refused, and a hostile hub never crashes a connection. */

import { afterEach, expect, setDefaultTimeout, test } from 'bun:test';
import type { LogFields, LogLevel } from '../lib/log.ts';
import { openConnection } from '../lib/mesh/connection.ts';
import type { MeshError } from '../lib/mesh/errors.ts';
import { PROTOCOL_VERSION } from '../lib/mesh/limits.ts';
import { parseServerFrame } from '../lib/mesh/server-frame.ts';

setDefaultTimeout(20_000); // per file (Bun scopes it so): real servers are slow on a busy machine

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const f of cleanups.splice(0).reverse()) await f();
});

const peer = { name: 'bob', presenceId: 'p-1' };
const message = {
  messageId: 'm-1',
  messageRef: 'demo:1',
  project: 'demo',
  sequence: 1,
  from: peer,
  target: { type: 'agent', name: 'alice' },
  payload: { encoding: 'identity', data: 'hi', uncompressedBytes: 2 },
  attachments: [
    { name: 'a.txt', payload: { encoding: 'base64', data: 'aGk=', uncompressedBytes: 2 } },
  ],
  createdAt: 1,
};
const claimed = {
  type: 'claimed',
  protocolVersion: PROTOCOL_VERSION,
  project: 'demo',
  self: { name: 'alice', presenceId: 'p-0' },
  peers: [peer],
  epoch: 'e-1',
  sequence: 0,
  heartbeatMs: 60_000,
  heartbeatMisses: 2,
  resumed: false,
  resumeSecret: 's-1',
  recovery: { recovered: true, since: 0, replayed: 0 },
};
const GOOD = [
  claimed,
  { type: 'ping' },
  { type: 'presence_joined', peer },
  { type: 'presence_left', peer, reason: 'heartbeat_timeout' },
  { type: 'accepted', requestId: 'r1', message, recipients: ['alice'], replayed: true },
  { type: 'message', message: { ...message, target: { type: 'project' }, replyTo: 'demo:0' } },
  { type: 'delivery', messageId: 'm-1', to: 'alice', status: 'delivered' },
  { type: 'delivery', messageId: 'm-1', to: 'alice', status: 'failed', error: 'boom' },
  { type: 'error', code: 'name_in_use', message: 'taken', requestId: 'r2' },
];

test('every frame type of the hub parses to what was sent', () => {
  for (const f of GOOD) {
    const r = parseServerFrame(JSON.stringify(f));
    expect(r).toEqual({ ok: true, result: f as never });
  }
});

const huge = 'x'.repeat(7 * 1024 * 1024);
const BAD: [string, unknown][] = [
  ['binary frame', new Uint8Array([123, 125])],
  ['not JSON', '{"type":'],
  ['array', '[]'],
  ['unknown type', { type: 'surprise' }],
  ['type not a string', { type: { toString: 1 } }],
  ['claimed without self', { ...claimed, self: undefined }],
  ['claimed with a string version', { ...claimed, protocolVersion: '3' }],
  ['claimed with peers an object', { ...claimed, peers: {} }],
  ['claimed resumed missing', { ...claimed, resumed: undefined }],
  ['presence with a path-like name', { type: 'presence_joined', peer: { ...peer, name: '../x' } }],
  ['presence_left with an unknown reason', { type: 'presence_left', peer, reason: 'because' }],
  ['accepted without requestId', { type: 'accepted', message, recipients: [] }],
  [
    'accepted recipients of numbers',
    { type: 'accepted', requestId: 'r', message, recipients: [1] },
  ],
  ['message sequence negative', { type: 'message', message: { ...message, sequence: -1 } }],
  [
    'message payload wrong encoding',
    {
      type: 'message',
      message: { ...message, payload: { encoding: 'rot13', data: '', uncompressedBytes: 0 } },
    },
  ],
  [
    'attachment named ..',
    {
      type: 'message',
      message: {
        ...message,
        attachments: [{ name: '..', payload: message.attachments[0]!.payload }],
      },
    },
  ],
  [
    'delivery with an unknown status',
    { type: 'delivery', messageId: 'm-1', to: 'alice', status: 'lost' },
  ],
  [
    'failed delivery without error',
    { type: 'delivery', messageId: 'm-1', to: 'alice', status: 'failed' },
  ],
  ['error with an unknown code', { type: 'error', code: 'nope', message: 'x' }],
  [
    'error with a huge message',
    { type: 'error', code: 'invalid_frame', message: 'x'.repeat(100_000) },
  ],
  ['huge frame', JSON.stringify({ type: 'ping', pad: huge })],
];

test('malformed, unknown, binary and oversized frames are refused with A2A_INVALID_FRAME', () => {
  for (const [why, f] of BAD) {
    const r = parseServerFrame(
      typeof f === 'string' || f instanceof Uint8Array ? f : JSON.stringify(f),
    );
    expect({ why, ok: r.ok, code: r.ok ? '' : r.error.code }).toEqual({
      why,
      ok: false,
      code: 'A2A_INVALID_FRAME',
    });
  }
});

/** A hub on port 0 that answers hello with `script` (each a text or binary frame), and later frames with `answer`. */
function fakeHub(
  script: (string | Uint8Array)[],
  answer: (frame: Record<string, unknown>) => string[] = () => [],
) {
  let hello = true;
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch: (req, s) => (s.upgrade(req) ? undefined : new Response('no', { status: 400 })),
    websocket: {
      message(ws, data) {
        const out = hello ? script : answer(JSON.parse(String(data)));
        hello = false;
        for (const f of out) ws.send(f);
      },
    },
  });
  cleanups.push(() => server.stop(true));
  return `http://127.0.0.1:${server.port}`;
}
function capture() {
  const lines: { level: LogLevel; msg: string; fields?: LogFields }[] = [];
  return {
    lines,
    log: (level: LogLevel, msg: string, fields?: LogFields) =>
      void lines.push({ level, msg, fields }),
  };
}

test('after the claim a malformed frame is logged and ignored; the connection stays up and reads on', async () => {
  const garbage: (string | Uint8Array)[] = [
    ...BAD.filter(([why]) => why !== 'huge frame').map(([, f]) =>
      typeof f === 'string' || f instanceof Uint8Array ? f : JSON.stringify(f),
    ),
    JSON.stringify({ type: 'ping', pad: huge }),
  ];
  const hubUrl = fakeHub([
    JSON.stringify({ ...claimed, peers: [] }),
    ...garbage,
    JSON.stringify({ type: 'presence_joined', peer }),
  ]);
  const { lines, log } = capture();
  const errors: MeshError[] = [];
  let joined!: () => void;
  const sawJoin = new Promise<void>((r) => (joined = r));
  const r = await openConnection({ hubUrl, project: 'demo', name: 'alice', log });
  expect(r.ok).toBe(true);
  if (!r.ok) return;
  cleanups.push(() => r.result.close());
  r.result.on('error', (e) => void errors.push(e));
  r.result.on('presence', (p) => p.kind === 'joined' && joined());
  await sawJoin;
  expect(r.result.closed).toBe(false);
  expect(r.result.peers()).toEqual([peer]);
  expect(errors.length).toBe(garbage.length);
  expect(errors.every((e) => e.code === 'A2A_INVALID_FRAME')).toBe(true);
  expect(
    lines.filter((l) => l.msg === 'mesh connection: malformed frame from the hub').length,
  ).toBe(garbage.length);
  // The frame itself is never logged, only why it was refused.
  expect(lines.every((l) => JSON.stringify(l).length < 1000)).toBe(true);
});

test('a malformed frame before the claim ends the connect with A2A_INVALID_FRAME', async () => {
  for (const first of [new Uint8Array([1, 2, 3]), '{"type":"claimed"}', '{"type":"welcome"}']) {
    const { lines, log } = capture();
    const r = await openConnection({
      hubUrl: fakeHub([first]),
      project: 'demo',
      name: 'alice',
      log,
    });
    expect(r.ok ? 'claimed' : r.error.code).toBe('A2A_INVALID_FRAME');
    expect(lines.map((l) => l.level)).toEqual(['warn']);
  }
});

test('a malformed answer to a send fails that send with A2A_INVALID_FRAME; the connection stays up', async () => {
  const hubUrl = fakeHub([JSON.stringify({ ...claimed, peers: [] })], (f) => [
    JSON.stringify({ type: 'accepted', requestId: f.requestId, message: { messageId: 7 } }),
  ]);
  const { log } = capture();
  const r = await openConnection({ hubUrl, project: 'demo', name: 'alice', log });
  if (!r.ok) throw new Error(r.error.message);
  cleanups.push(() => r.result.close());
  const sent = await r.result.send({ target: { type: 'project' }, text: 'hi' });
  expect(sent.ok ? 'accepted' : sent.error.code).toBe('A2A_INVALID_FRAME');
  expect(r.result.closed).toBe(false);
});
