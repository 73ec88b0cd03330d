/**
 * Bounds, health and shutdown of real processes: stalled readers of the hub's trace stream are
 * ended with a reason while the hub's memory stays bounded; `/healthz` and `/readyz` answer on
 * the hub and a node; SIGTERM ends open streams with a final event and the process exits 0.
 */

import { afterAll, expect, setDefaultTimeout, test } from 'bun:test';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir, TEST_AUTH } from './support/node.ts';
import { startProcess, type ServingProcess } from './support/process.ts';
import { parsePrometheus, valueOf } from './support/prometheus.ts';
import { rawSse, rssOf } from './support/raw-sse.ts';

setDefaultTimeout(20_000); // per file (Bun scopes it so): real servers and processes are slow on a busy machine

const dirs: string[] = [];
const children: ServingProcess[] = [];
afterAll(() => {
  for (const c of children) c.proc.kill('SIGKILL');
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

async function hubProcess(env: Record<string, string> = {}): Promise<ServingProcess> {
  const dataDir = tempDir('lume-a2a-limits-');
  dirs.push(dataDir);
  // One fleet node that never answers (port 1): every call to it fails fast and is traced.
  const fleetFile = join(dataDir, 'fleet.json');
  writeFileSync(
    fleetFile,
    JSON.stringify({
      hub: { name: 'a2a', port: 0, role: 'hub', file: 'hub/main.ts' },
      nodes: [
        {
          name: 'gone',
          port: 1,
          role: 'a node that is not running',
          file: 'node/scanner/index.ts',
        },
      ],
    }),
  );
  const child = await startProcess(
    'hub/main.ts',
    [],
    { PORT: '0', LOG_LEVEL: 'error', ...env },
    { dataDir, fleetFile },
  );
  children.push(child);
  return child;
}

/** Makes `count` traced calls through the hub's API, 16 at a time. */
async function traceCalls(url: string, count: number, capability: string): Promise<void> {
  let started = 0;
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (started < count) {
        started++;
        const res = await fetch(`${url}/api/local-invoke`, {
          method: 'POST',
          headers: { origin: url, 'content-type': 'application/json', ...TEST_AUTH },
          body: JSON.stringify({ target: 'gone', capability, args: {} }),
        });
        await res.arrayBuffer();
      }
    }),
  );
}

const MiB = 1024 * 1024;

/** How many event streams the hub has ended for falling behind (its /metrics). */
async function tooSlowEnded(url: string): Promise<number> {
  const res = await fetch(`${url}/metrics`, { headers: TEST_AUTH });
  expect(res.status).toBe(200);
  return valueOf(parsePrometheus(await res.text()), 'lume_sse_streams_too_slow_total');
}

test('stalled trace readers: memory stays bounded and each is ended with STREAM_TOO_SLOW', async () => {
  const hub = await hubProcess({ SSE_QUEUE_BYTES: String(64 * 1024) });
  const readers = Array.from({ length: 4 }, () => rawSse(hub.url, '/api/trace/stream'));
  await Promise.all(readers.map((r) => r.opened));
  readers.forEach((r) => r.stall());
  const before = rssOf(hub.proc.pid);

  // What once took the hub from 93 to 634 MiB: 2,000 calls with 20 KB capability names.
  await traceCalls(hub.url, 2_000, `x.${'a'.repeat(20_000)}`);
  const afterLongNames = rssOf(hub.proc.pid);
  // Then records until the hub says it ended all four readers: their socket buffers fill, then
  // the 64 KiB queue. Rounds of 1,000 calls, at most 64 (about 14 on a 2-core Linux VM).
  let rounds = 0;
  while ((await tooSlowEnded(hub.url)) < readers.length) {
    expect(++rounds).toBeLessThanOrEqual(64);
    await traceCalls(hub.url, 1_000, 'x.read');
  }
  const records = 2_000 + rounds * 1_000;
  const afterFlood = rssOf(hub.proc.pid);

  const page = await fetch(`${hub.url}/api/trace?limit=500`);
  const pageBytes = (await page.arrayBuffer()).byteLength;
  const streams = await Promise.all(readers.map((r) => r.drain()));
  console.log(
    `hub RSS: ${(before / MiB).toFixed(0)} MiB before, +${((afterLongNames - before) / MiB).toFixed(1)} MiB after 2,000 long names, +${((afterFlood - before) / MiB).toFixed(1)} MiB after ${records} records; /api/trace?limit=500 is ${(pageBytes / 1024).toFixed(0)} KiB`,
  );

  for (const text of streams) {
    const frames = text
      .split('\n\n')
      .filter((f) => f.startsWith('data:') || f.startsWith('event:'));
    const last = frames[frames.length - 1]!;
    expect(last).toStartWith('event: close\ndata: ');
    expect(JSON.parse(last.slice(last.indexOf('data: ') + 6))).toMatchObject({
      code: 'STREAM_TOO_SLOW',
    });
    // The reader got less than everything: its backlog was dropped, not kept.
    expect(frames.length - 1).toBeLessThan(records);
  }
  expect(afterLongNames - before).toBeLessThan(48 * MiB);
  expect(afterFlood - before).toBeLessThan(64 * MiB);
  expect(pageBytes).toBeLessThan(256 * 1024);
  // The hub kept serving.
  expect((await fetch(`${hub.url}/healthz`)).status).toBe(200);
}, 120_000);

test('the hub: /healthz and /readyz; SIGTERM ends an open trace stream with SHUTTING_DOWN and exits 0', async () => {
  const hub = await hubProcess();
  expect(await (await fetch(`${hub.url}/healthz`)).json()).toEqual({ ok: true, name: 'a2a' });
  const ready = await fetch(`${hub.url}/readyz`);
  expect(ready.status).toBe(200);
  // The boot self-check's verdicts (card, catalog, data) are readiness checks too.
  expect((await ready.json()).checks).toEqual({
    tasks: { ok: true },
    keys: { ok: true },
    trace: { ok: true },
    mesh: { ok: true },
    card: { ok: true },
    catalog: { ok: true },
    data: { ok: true },
    shutdown: { ok: true },
  });

  const reader = rawSse(hub.url, '/api/trace/stream');
  await reader.opened;
  hub.proc.kill('SIGTERM');
  const text = await reader.drain();
  expect(text.trimEnd().split('\n\n').at(-1)).toBe(
    'event: close\ndata: {"code":"SHUTTING_DOWN","message":"The server is shutting down"}',
  );
  expect(await hub.proc.exited).toBe(0);
});

test('a node: /healthz and /readyz; SIGTERM ends an open task subscription with a final error event and exits 0', async () => {
  const node = await startProcess('node/main.ts', ['--name', 'crm', '--port', '0']);
  children.push(node);
  dirs.push(node.dataDir);
  expect(await (await fetch(`${node.url}/healthz`)).json()).toEqual({ ok: true, name: 'crm' });
  expect(await (await fetch(`${node.url}/readyz`)).json()).toMatchObject({
    ok: true,
    checks: { tasks: { ok: true }, keys: { ok: true }, shutdown: { ok: true } },
  });
  // `/health` stays as an alias with its fields.
  expect(await (await fetch(`${node.url}/health`)).json()).toMatchObject({
    ok: true,
    name: 'crm',
    a2a: true,
  });

  // A message the catalog cannot place leaves the task input-required; a subscription to it stays open.
  const headers = { 'content-type': 'application/json', 'a2a-version': '1.0' };
  const sent = await fetch(`${node.url}/message:send`, {
    method: 'POST',
    headers,
    body: JSON.stringify({
      message: { messageId: crypto.randomUUID(), role: 'ROLE_USER', parts: [{ text: 'zzz' }] },
    }),
  });
  const { task } = (await sent.json()) as { task: { id: string; status: { state: string } } };
  expect(task.status.state).toBe('TASK_STATE_INPUT_REQUIRED');
  const reader = rawSse(node.url, `/tasks/${task.id}:subscribe`, { 'a2a-version': '1.0' });
  await reader.opened;
  node.proc.kill('SIGTERM');
  const frames = (await reader.drain()).trimEnd().split('\n\n');
  // The task first (its frame carries its resume `id:` line, then the data).
  const first = frames.find((f) => !f.startsWith(':'))!; // after the comment that opens the stream
  expect(first).toStartWith(`id: ${task.id}:`);
  expect(first).toInclude('\ndata: ');
  const last = frames.at(-1)!;
  expect(last).toStartWith('event: error\ndata: ');
  expect(JSON.parse(last.slice(last.indexOf('data: ') + 6))).toEqual({
    error: {
      code: 503,
      status: 'UNAVAILABLE',
      message: 'The server is shutting down',
      details: [
        {
          '@type': 'type.googleapis.com/google.rpc.ErrorInfo',
          reason: 'SHUTTING_DOWN',
          domain: 'lume-a2a',
        },
      ],
    },
  });
  expect(await node.proc.exited).toBe(0);
});
