/**
 * The bounds of lib/limits.ts on servers on port 0: the task cache by bytes, a task's history and
 * artifact caps, an A2A stream whose reader stalls, trace retention and caps, and `/readyz`
 * naming a failing check.
 */

import { afterAll, expect, setDefaultTimeout, test } from 'bun:test';
import { Database } from 'bun:sqlite';
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Agent } from '../lib/a2a/agent.ts';
import { createTraceStore } from '../lib/fleet/trace.ts';
import {
  agentNode,
  msgV1,
  rpc,
  startNode,
  tempDir,
  TEST_AUTH,
  type TestNode,
} from './support/node.ts';
import { rawSse } from './support/raw-sse.ts';
import { startFleet } from './support/fleet.ts';

setDefaultTimeout(20_000); // per file (Bun scopes it so): real servers and processes are slow on a busy machine

const KiB = 1024;
const nodes: TestNode[] = [];
afterAll(async () => {
  for (const n of nodes) await n.dispose();
});

/** A node without peer keys (a standalone node) running `agent` under `limits`. */
async function node(agent: Agent, limits: Record<string, number>): Promise<TestNode> {
  const n = await startNode(agentNode('bounded', agent), { limits });
  nodes.push(n);
  return n;
}

/** An agent that asks for more input on every message, so a task can be continued for ever. */
const askingAgent: Agent = {
  handle: (ctx) => ctx.requireInput(`noted ${ctx.text.length} characters`),
};

test('the task cache is bounded by bytes; evicted tasks are read back from their files', async () => {
  const n = await node(askingAgent, { taskCacheBytes: 1024 * KiB });
  const ids: string[] = [];
  for (let i = 0; i < 20; i++) {
    const r = await rpc(n.url, 'SendMessage', { message: msgV1('x'.repeat(200 * KiB)) });
    ids.push(r.result.task.id);
  }
  const cached = n.node.store.cached;
  expect(cached.bytes).toBeLessThanOrEqual(1024 * KiB);
  expect(cached.entries).toBeLessThan(20);
  for (const id of ids) {
    const r = await rpc(n.url, 'GetTask', { id });
    expect(r.result.history[0].parts[0].text).toHaveLength(200 * KiB);
  }
  expect(n.node.store.cached.bytes).toBeLessThanOrEqual(1024 * KiB);
});

test("a task's history keeps the newest messages within its count and byte caps", async () => {
  const n = await node(askingAgent, {
    taskHistoryMessages: 10,
    taskHistoryBytes: 64 * KiB,
    taskEventLogBytes: 16 * KiB,
  });
  let task = (await rpc(n.url, 'SendMessage', { message: msgV1('first') })).result.task;
  for (let i = 0; i < 100; i++) {
    const r = await rpc(n.url, 'SendMessage', {
      message: msgV1(`turn ${i} ${'y'.repeat(10 * KiB)}`, { taskId: task.id }),
    });
    task = r.result.task;
  }
  const got = (await rpc(n.url, 'GetTask', { id: task.id })).result;
  expect(got.history.length).toBeLessThanOrEqual(10);
  expect(Buffer.byteLength(JSON.stringify(got.history))).toBeLessThanOrEqual(80 * KiB); // wire form is a little larger
  // The newest survive: the last continuation and the agent's answer to it.
  expect(got.history.at(-2).parts[0].text).toStartWith('turn 99 ');
  expect(got.history.at(-1).parts[0].text).toBe(`noted ${8 + 10 * KiB} characters`);
  expect(got.history.some((m: any) => m.parts[0].text === 'first')).toBe(false);
  // The stored record stays small too (it was 1 MB and growing without the cap): the task's
  // newest line in the task log: the history within its cap and the event log
  // (TASK_EVENT_LOG_BYTES) within its own.
  const segments = join(n.dataDir, 'bounded', 'tasks', 'segments');
  const lines = readdirSync(segments)
    .sort()
    .flatMap((f) => readFileSync(join(segments, f), 'utf8').trimEnd().split('\n'))
    .filter((l) => l.includes(task.id));
  expect(Buffer.byteLength(lines.at(-1)!)).toBeLessThan(96 * KiB);
});

test('artifacts past their cap fail the task with TASK_TOO_LARGE', async () => {
  const flood: Agent = {
    handle: (ctx) => {
      for (let i = 0; i < 50; i++)
        ctx.artifact({ name: `part ${i}`, parts: [{ text: 'z'.repeat(KiB) }] });
      ctx.complete('all parts written');
    },
  };
  const n = await node(flood, { taskArtifacts: 8 });
  const task = (await rpc(n.url, 'SendMessage', { message: msgV1('go') })).result.task;
  expect(task.status.state).toBe('TASK_STATE_FAILED');
  expect(task.artifacts).toHaveLength(8);
  expect(task.status.message.parts[1].data).toEqual({
    error: { code: 'TASK_TOO_LARGE', message: 'A task holds at most 8 artifacts' },
  });
});

test('an A2A subscriber that stops reading is ended with STREAM_TOO_SLOW and its backlog dropped', async () => {
  let release!: () => void;
  const flood: Agent = {
    async handle(ctx) {
      if (!ctx.continued) return ctx.requireInput('say go');
      await new Promise<void>((r) => (release = r));
      // 16 MiB of artifact updates, far past the socket buffers and the 256 KiB queue.
      for (let i = 0; i < 256; i++)
        ctx.artifact(
          { artifactId: 'big', parts: [{ text: String(i).padEnd(64 * KiB, '.') }] },
          { append: i > 0 },
        );
      ctx.requireInput('done');
    },
  };
  const n = await node(flood, { sseQueueBytes: 256 * KiB, taskArtifactBytes: 64 * 1024 * KiB });
  const task = (await rpc(n.url, 'SendMessage', { message: msgV1('start') })).result.task;
  const reader = rawSse(n.url, `/tasks/${task.id}:subscribe`, {
    'a2a-version': '1.0',
    ...TEST_AUTH,
  });
  await reader.opened;
  reader.stall();
  await rpc(n.url, 'SendMessage', {
    message: msgV1('go', { taskId: task.id }),
    configuration: { returnImmediately: true },
  });
  release();
  // The stream ends either way: at the agent's input-required, or cut for being too slow.
  const frames = (await reader.drain()).trimEnd().split('\n\n');
  const last = frames.at(-1)!;
  expect(last).toStartWith('event: error\ndata: ');
  expect(JSON.parse(last.slice(last.indexOf('data: ') + 6)).error.details[0].reason).toBe(
    'STREAM_TOO_SLOW',
  );
  expect(frames.length).toBeLessThan(256);
});

/** The W3C ids every trace record carries (the same for all here). */
const SPAN = {
  traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
  spanId: '00f067aa0ba902b7',
  parentSpanId: null,
};

test('trace: names and codes are cut, rows past the row cap are deleted, and so are rows past the age cap', async () => {
  const f = await startFleet([]);
  try {
    // Records as long as the ones that made a 500-row page 32.5 MB.
    for (let i = 0; i < 300; i++)
      f.hub.trace.record({
        ts: new Date().toISOString(),
        from: 'a2a',
        to: 'gone',
        capability: `x.${'a'.repeat(50_000)}`,
        durationMs: 1,
        outcome: 'failed',
        errorCode: 'E'.repeat(500),
        bytes: 0,
        ...SPAN,
      });
    const page = await fetch(`${f.hubUrl}/api/trace?limit=500`);
    const text = await page.text();
    const records = JSON.parse(text).records;
    expect(records[0].capability).toHaveLength(128);
    expect(records[0].capability).toEndWith('…');
    expect(records[0].errorCode).toHaveLength(64);
    // Each record: its cut names, plus the W3C ids (about 100 characters).
    expect(text.length).toBeLessThan(300 * 500);
  } finally {
    await f.stop();
  }

  const dir = tempDir('lume-a2a-trace-');
  let now = Date.parse('2026-01-10T00:00:00Z');
  const db = new Database(join(dir, 'trace.sqlite'), { create: true, strict: true });
  const trace = createTraceStore(db, { maxRows: 100, maxAgeMs: 24 * 3_600_000, now: () => now });
  const at = (ms: number) => new Date(ms).toISOString();
  for (let i = 0; i < 50; i++)
    trace.record({
      ts: at(now - 3 * 24 * 3_600_000),
      from: 'a2a',
      to: 'old',
      capability: 'x.read',
      durationMs: 1,
      outcome: 'ok',
      errorCode: null,
      bytes: 1,
      ...SPAN,
    });
  for (let i = 0; i < 250; i++)
    trace.record({
      ts: at(now),
      from: 'a2a',
      to: 'new',
      capability: 'x.read',
      durationMs: 1,
      outcome: 'ok',
      errorCode: null,
      bytes: 1,
      ...SPAN,
    });
  trace.prune();
  expect(trace.count()).toBe(100);
  const kept = trace.page({ limit: 500 }).records;
  expect(kept.every((r) => r.to === 'new')).toBe(true);
  expect(kept[0]!.id).toBe(300);
  now += 2 * 24 * 3_600_000;
  trace.prune();
  expect(trace.count()).toBe(0);
  db.close();
  rmSync(dir, { recursive: true, force: true });
});

test('/readyz answers 503 NOT_READY naming the failing check; /healthz still answers', async () => {
  const n = await startNode(agentNode('bounded', askingAgent), {
    readyChecks: { data: () => 'the snapshot is missing' },
  });
  nodes.push(n);
  const res = await fetch(`${n.url}/readyz`);
  expect(res.status).toBe(503);
  expect(await res.json()).toEqual({
    ok: false,
    name: 'bounded',
    error: { code: 'NOT_READY', message: 'not ready: data' },
    checks: {
      tasks: { ok: true },
      keys: { ok: true },
      data: { ok: false, detail: 'the snapshot is missing' },
      shutdown: { ok: true },
    },
  });
  expect((await fetch(`${n.url}/healthz`)).status).toBe(200);
});
