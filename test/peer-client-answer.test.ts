/**
 * The peer client reads a node's answer once, as text, under its size cap: an answer with a
 * Content-Length and a chunked one give the same result and the same size in bytes (as sent, not
 * in characters); one over the cap, declared or streamed, is PEER_BAD_ANSWER; and a call's log
 * line is written only at a level the logger writes.
 */

import { afterAll, expect, setDefaultTimeout, test } from 'bun:test';
import { parseFleet } from '../lib/config/fleet-file.ts';
import { consoleLog, logs, memoryLog, silentLog } from '../lib/log.ts';
import { createPeerClient } from '../lib/peer/client.ts';
import { createSigner } from '../lib/peer/signer.ts';

setDefaultTimeout(20_000); // per file (Bun scopes it so): real servers and processes are slow on a busy machine

const answer = JSON.stringify({ ok: true, result: { city: 'Zürich', n: 1 } });
const big = JSON.stringify({ ok: true, result: 'x'.repeat(4096) });
const chunked = (text: string) =>
  new Response(
    new ReadableStream({
      start(c) {
        const bytes = new TextEncoder().encode(text);
        c.enqueue(bytes.subarray(0, 7));
        c.enqueue(bytes.subarray(7));
        c.close();
      },
    }),
    { headers: { 'content-type': 'application/json' } },
  );
const server = Bun.serve({
  port: 0,
  hostname: '127.0.0.1',
  async fetch(req) {
    await req.arrayBuffer();
    const scope = req.headers.get('x-peer-signature')?.match(/ scope=(\S+)/)?.[1];
    if (scope === 'plain.answer') return Response.json(JSON.parse(answer));
    if (scope === 'chunked.answer') return chunked(answer);
    if (scope === 'plain.big') return new Response(big);
    if (scope === 'chunked.big') return chunked(big);
    return new Response('not json at all', { status: 200 });
  },
});
afterAll(() => server.stop(true));

const fleet = parseFleet({
  hub: { name: 'a2a', port: 0, role: 'hub', file: 'x' },
  nodes: [{ name: 'node1', port: server.port, role: 'x', file: 'x', url: server.url.origin }],
});
const signer = createSigner({ node: 'a2a', secret: new Uint8Array(32).fill(7) });
const log = memoryLog();
const client = createPeerClient({ signer, fleet, log, maxAnswerBytes: 1024 });

test('an answer with a Content-Length and a chunked one: the same result and the same size in bytes', async () => {
  const bytes = new TextEncoder().encode(answer).byteLength;
  expect(bytes).toBeGreaterThan(answer.length); // ü is two bytes
  for (const scope of ['plain.answer', 'chunked.answer']) {
    const meter: { answerBytes?: number } = {};
    const r = await client.peerFetch('node1', scope, {}, { meter });
    expect(r).toEqual({ ok: true, result: { city: 'Zürich', n: 1 } });
    expect(meter.answerBytes).toBe(bytes);
  }
  expect(log.lines.filter((l) => l.startsWith('debug peer call'))).toHaveLength(2);
});

test('an answer over the cap, declared or streamed, and one that is not JSON are coded failures', async () => {
  for (const scope of ['plain.big', 'chunked.big']) {
    const meter: { answerBytes?: number } = {};
    const r = await client.peerFetch('node1', scope, {}, { meter });
    expect(r).toMatchObject({
      ok: false,
      error: { code: 'PEER_BAD_ANSWER', message: 'answer is larger than 1024 bytes' },
    });
    expect(meter.answerBytes).toBeUndefined();
  }
  const r = await client.peerFetch('node1', 'other.thing', {});
  expect(r).toMatchObject({ ok: false, error: { code: 'PEER_BAD_ANSWER', kind: 'bad-answer' } });
  expect(log.lines.some((l) => l.startsWith('warn peer call failed'))).toBe(true);
});

test('a call builds its log line only at a level the logger writes', () => {
  const info = consoleLog('test', 'info');
  expect([logs(info, 'debug'), logs(info, 'info'), logs(info, 'warn')]).toEqual([
    false,
    true,
    true,
  ]);
  expect([logs(silentLog, 'error'), logs(memoryLog(), 'debug')]).toEqual([false, true]);
});

test('a node that answers after the deadline is a PEER_TIMEOUT at the deadline, and the next call goes through', async () => {
  const slow = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    async fetch(req) {
      await req.arrayBuffer();
      const late = req.headers.get('x-peer-signature')?.includes(' scope=slow.answer ');
      if (late) await Bun.sleep(400); // the node's own pace, not the test's synchronisation
      return Response.json(JSON.parse(answer));
    },
  });
  try {
    const f = parseFleet({
      hub: { name: 'a2a', port: 0, role: 'hub', file: 'x' },
      nodes: [{ name: 'node2', port: slow.port, role: 'x', file: 'x', url: slow.url.origin }],
    });
    const c = createPeerClient({ signer, fleet: f });
    expect(await c.peerFetch('node2', 'slow.answer', {}, { timeout: 50 })).toMatchObject({
      ok: false,
      error: { code: 'PEER_TIMEOUT', kind: 'timeout' },
    });
    expect(await c.peerFetch('node2', 'fast.answer', {}, { timeout: 5_000 })).toEqual({
      ok: true,
      result: { city: 'Zürich', n: 1 },
    });
  } finally {
    slow.stop(true);
  }
});
