/**
 * The hub's live streams resume as a browser's EventSource does: every frame carries an SSE `id:`,
 * and a reconnect that sends `Last-Event-ID` continues where it stopped. `/api/trace/stream` and
 * the mesh's `/v1/watch` replay exactly the records and messages after the id, then go live (no
 * gap, no repeat); a cursor they cannot continue from (too old, of the future, malformed) gets one
 * `event: reset` with `STREAM_RESET`. `/api/fleet/stream` sends only the readings after the id;
 * `/api/tasks/stream` nothing until the list changes when the id names the list as it is. Raw
 * requests with the header, as an EventSource sends it, against a real hub on port 0.
 */

import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import { TRACE_REPLAY } from '../hub/http/trace-live.ts';
import { isA2AError } from '../lib/a2a/errors.ts';
import { ANONYMOUS } from '../lib/auth/principal.ts';
import { startFleet, type RunningFleet } from './support/fleet.ts';
import { join, msg, type RawClient } from './support/mesh.ts';

setDefaultTimeout(30_000); // per file (Bun scopes it so): a real hub on a busy machine

let f: RunningFleet;
const clients: RawClient[] = [];
beforeAll(async () => {
  f = await startFleet([], { hub: { liveMs: { fleet: 100, tasks: 100 } } });
});
afterAll(async () => {
  for (const c of clients) await c.close();
  await f?.stop();
});

interface Frame {
  id?: string;
  event?: string;
  data: any;
}

/** An SSE stream read frame by frame (`id`, `event`, parsed `data`), as an EventSource parses it. */
async function open(path: string, lastEventId?: string) {
  const ac = new AbortController();
  const res = await fetch(`${f.hubUrl}${path}`, {
    signal: ac.signal,
    headers: lastEventId === undefined ? {} : { 'Last-Event-ID': lastEventId },
  });
  expect(res.headers.get('content-type')).toBe('text/event-stream');
  const reader = res.body!.getReader();
  let buf = '';
  const decoder = new TextDecoder();
  return {
    async next(): Promise<Frame> {
      for (;;) {
        const i = buf.indexOf('\n\n');
        if (i >= 0) {
          const block = buf.slice(0, i);
          buf = buf.slice(i + 2);
          const frame: Partial<Frame> = {};
          for (const line of block.split('\n')) {
            if (line.startsWith('id: ')) frame.id = line.slice(4);
            else if (line.startsWith('event: ')) frame.event = line.slice(7);
            else if (line.startsWith('data: ')) frame.data = JSON.parse(line.slice(6));
          }
          if ('data' in frame) return frame as Frame;
          continue;
        }
        const { value, done } = await reader.read();
        if (done) throw new Error('stream ended');
        buf += decoder.decode(value, { stream: true });
      }
    },
    close: () => ac.abort(),
  };
}

const record = (capability: string) =>
  f.hub.trace.record({
    ts: new Date().toISOString(),
    from: 'test',
    to: 'scanner',
    capability,
    durationMs: 1,
    outcome: 'ok',
    errorCode: null,
    bytes: 0,
    traceId: '0'.repeat(32),
    spanId: '0'.repeat(16),
    parentSpanId: null,
  });

test('/api/trace/stream: ids, the missed records after Last-Event-ID, then live; reset past what it can replay', async () => {
  const first = open('/api/trace/stream');
  const s = await first;
  const a = record('a.one');
  const fa = await s.next();
  expect([fa.id, fa.data.capability]).toEqual([String(a.id), 'a.one']);
  s.close();
  // Missed while away: two records; the reconnect gets them in order, then a new one live.
  const b = record('a.two');
  const c = record('a.three');
  const r = await open('/api/trace/stream', String(a.id));
  const replayed = [await r.next(), await r.next()];
  expect(replayed.map((x) => [x.id, x.data.capability])).toEqual([
    [String(b.id), 'a.two'],
    [String(c.id), 'a.three'],
  ]);
  const d = record('a.four');
  expect((await r.next()).id).toBe(String(d.id));
  r.close();

  // Current: nothing replayed, the next record comes live.
  const current = await open('/api/trace/stream', String(d.id));
  const e = record('a.five');
  expect((await current.next()).id).toBe(String(e.id));
  current.close();

  for (const bad of [String(e.id + 1000), 'abc', 'x'.repeat(500)]) {
    const s2 = await open('/api/trace/stream', bad);
    const reset = await s2.next();
    expect([reset.event, reset.data.code]).toEqual(['reset', 'STREAM_RESET']);
    const live = record('a.after-reset');
    expect((await s2.next()).id).toBe(String(live.id));
    s2.close();
  }

  // Further behind than one trace page: reset, not a partial replay.
  const old = record('a.old');
  for (let i = 0; i < TRACE_REPLAY + 1; i++) record('a.many');
  const behind = await open('/api/trace/stream', String(old.id));
  expect((await behind.next()).event).toBe('reset');
  behind.close();
});

test('/api/fleet/stream: a reconnect naming its last reading gets only the readings after it', async () => {
  const s = await open('/api/fleet/stream');
  const first = await s.next();
  expect(first.id).toMatch(/^[0-9a-f]{8}\.\d+$/);
  const n = Number(first.id!.split('.')[1]);
  expect(first.data.samples.length).toBeGreaterThanOrEqual(1);
  const second = await s.next();
  expect(second.id).toBe(`${first.id!.split('.')[0]}.${n + 1}`);
  s.close();
  const again = await open('/api/fleet/stream', first.id);
  const resumed = await again.next();
  // Everything after reading n that the hub kept: at least n+1, and never reading n itself.
  expect(resumed.data.samples.length).toBe(Number(resumed.id!.split('.')[1]) - n);
  again.close();
  const foreign = await open('/api/fleet/stream', '00000000.1');
  const full = await foreign.next();
  expect(full.data.samples.length).toBe(Number(full.id!.split('.')[1]));
  foreign.close();
});

test('/api/tasks/stream: the id names the list; a reconnect holding it is sent nothing new', async () => {
  const s = await open('/api/tasks/stream');
  const first = await s.next();
  expect(first.id).toMatch(/^[\w-]{22}$/);
  s.close();
  const other = await open('/api/tasks/stream', 'not-the-list');
  expect((await other.next()).id).toBe(first.id);
  other.close();
  // Holding the list as it is, the first frame it is sent is the list after the next change.
  const held = await open('/api/tasks/stream', first.id);
  const made = await f.hub.node.engine.send({
    params: {
      message: { messageId: crypto.randomUUID(), role: 'user', parts: [{ text: 'hello' }] },
      configuration: { returnImmediately: false },
    },
    version: '1.0',
    caller: ANONYMOUS,
  });
  const id = !isA2AError(made) && 'task' in made ? made.task.id : undefined;
  expect(id).toBeDefined();
  const next = await held.next();
  expect(next.id).not.toBe(first.id);
  expect(next.data.tasks.map((t: any) => t.id)).toContain(id);
  held.close();
});

test('/v1/watch: message frames carry <epoch>:<sequence>; a reconnect gets the missed messages, then live; reset otherwise', async () => {
  const res = await fetch(`${f.hubUrl}/api/projects.create`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{"name":"resumed"}',
  });
  expect(res.ok).toBe(true);
  const bob = await join({ url: f.hubUrl }, 'resumed', 'bob');
  clients.push(bob.c);
  let n = 0;
  const say = async (text: string) => {
    await bob.c.send(msg(`r${++n}`, `m${n}`, { type: 'project' }, text));
    for (;;) if ((await bob.c.next()).type === 'accepted') return;
  };
  const w = await open('/v1/watch?project=resumed');
  expect((await w.next()).data.type).toBe('roster');
  await say('one');
  const one = await w.next();
  expect(one.id).toMatch(/^.+:1$/);
  const epoch = one.id!.slice(0, -2);
  w.close();
  await say('two');
  await say('three');
  const r = await open('/v1/watch?project=resumed', one.id);
  const frames = [await r.next(), await r.next(), await r.next()];
  // The missed messages first, then the roster as it is now, then live.
  expect(frames.map((x) => x.data.type)).toEqual(['message', 'message', 'roster']);
  expect(frames.slice(0, 2).map((x) => x.id)).toEqual([`${epoch}:2`, `${epoch}:3`]);
  await say('four');
  expect((await r.next()).id).toBe(`${epoch}:4`);
  r.close();
  for (const bad of [`${epoch}:99`, `other:1`, 'nonsense']) {
    const s = await open('/v1/watch?project=resumed', bad);
    const seen = [await s.next(), await s.next()];
    expect(seen.map((x) => x.event ?? x.data.type).sort()).toEqual(['reset', 'roster']);
    s.close();
  }
});
