/** Hostile input on `/v1/connect`: each bad frame gets the protocol's coded error and the hub keeps serving everyone else. */

import { afterEach, expect, setDefaultTimeout, test } from 'bun:test';
import { gzipSync } from 'node:zlib';
import {
  createProject,
  join,
  msg,
  RawClient,
  startHub,
  text,
  type TestHub,
} from './support/mesh.ts';

setDefaultTimeout(20_000); // per file (Bun scopes it so): real servers and processes are slow on a busy machine

let hub: TestHub;
afterEach(async () => {
  await hub?.stop();
});

/** Two present clients; `after` proves bob still receives from alice. */
async function pair() {
  hub = startHub({
    limits: { maxFrameBytes: 64 * 1024, maxContentBytes: 16 * 1024, textPlainLimit: 1024 },
  });
  await createProject(hub, 'demo');
  const a = await join(hub, 'demo', 'alice');
  const b = await join(hub, 'demo', 'bob');
  await a.c.next();
  return {
    a,
    b,
    async stillServing(id: string) {
      await b.c.send(msg(`ok-${id}`, id, { type: 'agent', name: 'alice' }, 'still fine'));
      expect((await b.c.next()).type).toBe('accepted');
      expect((await a.c.next()).message.messageId).toBe(id);
    },
  };
}

test('binary, malformed JSON, non-object and unknown frame types are invalid_frame on a claimed socket', async () => {
  const { b, stillServing } = await pair();
  await b.c.send(new Uint8Array([1, 2, 3]));
  await b.c.send('{"type": "message", ');
  await b.c.send('[1,2]');
  await b.c.send({ type: 'launch_missiles' });
  await b.c.send({ type: 'message', messageId: 'x' });
  await b.c.send({ type: 'hello', protocolVersion: 3, project: 'demo', name: 'bob2' });
  expect(await b.c.take(6)).toEqual([
    {
      type: 'error',
      code: 'invalid_frame',
      message: 'binary frames are not part of the protocol; send JSON text',
    },
    { type: 'error', code: 'invalid_frame', message: 'frame is not valid JSON' },
    { type: 'error', code: 'invalid_frame', message: 'frame must be a JSON object' },
    { type: 'error', code: 'invalid_frame', message: 'unsupported frame type "launch_missiles"' },
    {
      type: 'error',
      code: 'invalid_frame',
      message: 'message.requestId must be a string of 1 to 128 characters',
    },
    {
      type: 'error',
      code: 'invalid_frame',
      message: 'already claimed; hello is only the first frame',
    },
  ]);
  await stillServing('m-after-garbage');
});

test('a frame over the size cap is payload_too_large and the socket stays', async () => {
  const { b, stillServing } = await pair();
  await b.c.send(
    JSON.stringify(msg('r1', 'm-big', { type: 'agent', name: 'alice' }, 'x'.repeat(70 * 1024))),
  );
  expect(await b.c.next()).toEqual({
    type: 'error',
    code: 'payload_too_large',
    message: 'frame is over 65536 bytes',
  });
  await stillServing('m-after-big');
});

test('a gzip bomb, a lying size, non-canonical base64 and unsafe attachment names are refused with their codes', async () => {
  const { b, stillServing } = await pair();
  const bomb = Buffer.from(gzipSync(Buffer.alloc(20 * 1024 * 1024))).toString('base64');
  const send = (id: string, extra: Record<string, unknown>) =>
    b.c.send({ ...msg(id, id, { type: 'agent', name: 'alice' }, 'see attached'), ...extra });
  await send('m-bomb', {
    payload: { encoding: 'gzip+base64', data: bomb, uncompressedBytes: 2000 },
  });
  await send('m-size', { payload: { ...text('hello'), uncompressedBytes: 4 } });
  const att = (name: string, data = 'aGk=') => ({
    attachments: [{ name, payload: { encoding: 'base64', data, uncompressedBytes: 2 } }],
  });
  await send('m-b64', att('a.txt', 'aGl='));
  await send('m-dotdot', att('..'));
  await send('m-slash', att('../../etc/passwd'));
  await send('m-back', att('..\\win.ini'));
  await send('m-ctl', att('evil\nname'));
  await send('m-empty', { payload: text('   ') });
  await send('m-many', {
    attachments: Array.from({ length: 9 }, (_, i) => att(`f${i}`).attachments[0]),
  });
  const codes = (await b.c.take(9)).map((f) => [f.requestId, f.code]);
  expect(codes).toEqual([
    ['m-bomb', 'payload_too_large'],
    ['m-size', 'message_rejected'],
    ['m-b64', 'message_rejected'],
    ['m-dotdot', 'message_rejected'],
    ['m-slash', 'message_rejected'],
    ['m-back', 'message_rejected'],
    ['m-ctl', 'message_rejected'],
    ['m-empty', 'message_rejected'],
    ['m-many', 'message_rejected'],
  ]);
  await stillServing('m-after-bad-content');
  expect((await hub.store.history({ project: 'demo', limit: 50 })).map((m) => m.messageId)).toEqual(
    ['m-after-bad-content'],
  );
});

test('before the claim: a first frame that is not hello, or garbage, is invalid_frame and closes 1008', async () => {
  hub = startHub();
  await createProject(hub, 'demo');
  for (const first of [{ type: 'delivered', messageId: 'm-1' }, 'not json', new Uint8Array([0])]) {
    const c = new RawClient(hub);
    await c.send(first);
    expect({ frame: await c.next(), close: await c.closed }).toEqual({
      frame: { type: 'error', code: 'invalid_frame', message: expect.any(String) },
      close: { code: 1008, reason: 'invalid_frame' },
    });
  }
});

test('no hello before the deadline closes 1008 "hello timeout"', async () => {
  hub = startHub({ limits: { helloTimeoutMs: 30 } });
  const c = new RawClient(hub);
  await c.opened;
  expect(await c.closed).toEqual({ code: 1008, reason: 'hello timeout' });
  expect(c.frames).toEqual([]);
});
