/**
 * Open event streams are bounded. Before, `/api/tasks/stream` had no cap and re-read a full task
 * listing every 2 s on each open stream: 900 idle readers took the hub to 76 % of a core. Now a
 * process serves at most `sseStreams` streams and one principal at most `sseStreamsPerPrincipal`
 * (503 with a coded body past either, on the hub's streams and on a node's A2A streams alike), and
 * a principal's task list is read once for all of its pages, when a task changed.
 */

import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { realNodeDefs, startFleet, type RunningFleet } from './support/fleet.ts';
import { TEST_AUTH, sseFrames } from './support/node.ts';

setDefaultTimeout(20_000); // per file (Bun scopes it so): real servers and processes are slow on a busy machine

const CAROL = 'lume_carol-token-for-the-stream-bounds-test';
let f: RunningFleet;
const open: AbortController[] = [];
// The open responses, held: a response nothing references may be collected, and its connection
// closed with it, which frees its slot (under a full run's memory pressure a third stream got in).
const held: Response[] = [];

beforeAll(async () => {
  f = await startFleet(await realNodeDefs(['scanner']), {
    tokens: { carol: CAROL },
    hub: { limits: { sseStreams: 5, sseStreamsPerPrincipal: 2 } },
  });
});
afterAll(async () => {
  for (const c of open) c.abort();
  await f?.stop();
});

/** Opens a stream of the hub and answers its status, its body (when refused) and its frames. */
async function stream(path: string, headers: Record<string, string> = {}, hub = f) {
  const abort = new AbortController();
  open.push(abort);
  const res = await fetch(`${hub.hubUrl}${path}`, { headers, signal: abort.signal });
  held.push(res);
  if (res.status !== 200) return { status: res.status, body: await res.json(), abort };
  return { status: 200, frames: sseFrames(res), abort };
}

describe('caps', () => {
  test('per principal, then per process: 503 with a coded body', async () => {
    const carol = { authorization: `Bearer ${CAROL}` };
    const answers = [];
    for (const headers of [{}, {}, {}, carol, carol, carol, TEST_AUTH, TEST_AUTH]) {
      const s = await stream('/api/trace/stream', headers);
      answers.push([s.status, s.body?.error?.code ?? null]);
    }
    expect(answers).toEqual([
      [200, null],
      [200, null],
      [503, 'PRINCIPAL_STREAMS_FULL'],
      [200, null],
      [200, null],
      [503, 'PRINCIPAL_STREAMS_FULL'],
      [200, null],
      [503, 'STREAMS_FULL'],
    ]);
    // The hub node's A2A streams count against the same bounds (one registry per process).
    const a2a = await fetch(`${f.hubUrl}/a2a`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'a2a-version': '1.0', ...TEST_AUTH },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'SendStreamingMessage',
        params: {
          message: { messageId: crypto.randomUUID(), role: 'ROLE_USER', parts: [{ text: 'hi' }] },
        },
      }),
    });
    expect([a2a.status, (await a2a.json()).error.code]).toEqual([503, 'STREAMS_FULL']);
    for (const c of open.splice(0)) c.abort();
  });
});

describe('the task list stream', () => {
  let g: RunningFleet;
  beforeAll(async () => {
    g = await startFleet(await realNodeDefs(['scanner']));
  });
  afterAll(() => g?.stop());

  test('read once for all of a principal’s pages, and again when a task changes, not on a timer', async () => {
    let readings = 0;
    const engine = g.hub.node.engine;
    const listTasks = engine.listTasks.bind(engine);
    engine.listTasks = (...args: Parameters<typeof listTasks>) => (readings++, listTasks(...args));
    try {
      const pages = [
        await stream('/api/tasks/stream', {}, g),
        await stream('/api/tasks/stream', {}, g),
      ];
      const first = await Promise.all(pages.map(async (p) => (await p.frames!.next()).value));
      expect(first.map((p) => p.tasks.length)).toEqual([0, 0]);
      expect(readings).toBe(1);
      // A task of the hub changes: both pages get the new list, from one more reading.
      const made = await fetch(`${g.hubUrl}/message:send`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'a2a-version': '1.0' },
        body: JSON.stringify({
          message: {
            messageId: crypto.randomUUID(),
            role: 'ROLE_USER',
            parts: [{ text: 'sectors' }],
          },
        }),
      }).then((r) => r.json());
      const next = await Promise.all(pages.map(async (p) => (await p.frames!.next()).value));
      expect(next.map((p) => p.tasks.map((t: { id: string }) => t.id))).toEqual([
        [made.task.id],
        [made.task.id],
      ]);
      expect(readings).toBeLessThanOrEqual(3);
    } finally {
      engine.listTasks = listTasks;
      for (const c of open.splice(0)) c.abort();
    }
  });
});
