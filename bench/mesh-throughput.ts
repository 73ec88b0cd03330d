/**
 * Benchmark: durable direct messages per second end to end (send -> accepted -> delivered) and
 * broadcast deliveries per second to 100 presences (with and without their acknowledgements), each against a file store (WAL,
 * synchronous = FULL, group commit) and an in-memory store for the durability cost. The direct
 * rows also give the hub process's CPU time per message (/proc), steadier than the rate on a
 * shared machine.
 * Usage: bun bench/mesh-throughput.ts [--direct-only]
 */

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { claim, fmt, spawnHub } from './mesh-common.ts';
import { cpuMs } from './proc-cpu.ts';

const text = (s: string) => ({ encoding: 'identity', data: s, uncompressedBytes: s.length });

/** PAIRS senders each keep WINDOW messages in flight to their own receiver, which acknowledges each one. */
async function direct(
  mode: 'file' | 'memory',
  total: number,
  pairs = 8,
  window = 256,
): Promise<{ rate: number; hubCpuUs: number; clientCpuUs: number }> {
  const dir = mkdtempSync(join(tmpdir(), 'mesh-bench-'));
  const hub = await spawnHub(mode, dir, ['bench']);
  let delivered = 0;
  let finish!: () => void;
  const done = new Promise<void>((r) => (finish = r));
  const perPair = Math.floor(total / pairs);
  const senders = [];
  for (let p = 0; p < pairs; p++) {
    await claim(hub.url, 'bench', `r${p}`, (f, c) => {
      if (f.type === 'message')
        c.ws.send(`{"type":"delivered","messageId":"${f.message.messageId}"}`);
    });
    let sent = 0;
    const sendOne = (ws: WebSocket) => {
      const id = `p${p}-${sent++}`;
      ws.send(
        JSON.stringify({
          type: 'message',
          requestId: id,
          messageId: id,
          target: { type: 'agent', name: `r${p}` },
          payload: text(`status update ${id}`),
          attachments: [],
        }),
      );
    };
    const s = await claim(hub.url, 'bench', `s${p}`, (f, c) => {
      if (f.type === 'delivery' && f.status === 'delivered') {
        if (++delivered === perPair * pairs) finish();
        if (sent < perPair) sendOne(c.ws);
      }
    });
    senders.push({
      s,
      start: () => {
        for (let i = 0; i < window && sent < perPair; i++) sendOne(s.ws);
      },
    });
  }
  const t0 = performance.now();
  const cpu0 = cpuMs(hub.proc.pid);
  const own0 = process.cpuUsage();
  for (const x of senders) x.start();
  await done;
  const rate = (perPair * pairs) / ((performance.now() - t0) / 1000);
  const hubCpuUs = ((cpuMs(hub.proc.pid) - cpu0) * 1000) / (perPair * pairs);
  const own = process.cpuUsage(own0);
  const clientCpuUs = (own.user + own.system) / (perPair * pairs);
  await hub.stop();
  rmSync(dir, { recursive: true, force: true });
  return { rate, hubCpuUs, clientCpuUs };
}

/** One sender broadcasts to `receivers` presences with `window` broadcasts in flight; receivers acknowledge when `ack`. */
async function broadcast(
  mode: 'file' | 'memory',
  messages: number,
  ack: boolean,
  receivers = 100,
  window = 256,
): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), 'mesh-bench-'));
  const hub = await spawnHub(mode, dir, ['bench']);
  let received = 0;
  const expected = messages * receivers;
  let finish!: () => void;
  const done = new Promise<void>((r) => (finish = r));
  for (let i = 0; i < receivers; i++)
    await claim(hub.url, 'bench', `r${i}`, (f, c) => {
      if (f.type !== 'message') return;
      if (ack) c.ws.send(`{"type":"delivered","messageId":"${f.message.messageId}"}`);
      if (++received === expected) finish();
    });
  let sent = 0;
  const sendOne = (ws: WebSocket) => {
    const id = `b-${sent++}`;
    ws.send(
      JSON.stringify({
        type: 'message',
        requestId: id,
        messageId: id,
        target: { type: 'project' },
        payload: text(`broadcast ${id}`),
        attachments: [],
      }),
    );
  };
  const s = await claim(hub.url, 'bench', 'sender', (f, c) => {
    if (f.type === 'accepted' && sent < messages) sendOne(c.ws);
  });
  const t0 = performance.now();
  for (let i = 0; i < window && sent < messages; i++) sendOne(s.ws);
  await done;
  const rate = expected / ((performance.now() - t0) / 1000);
  await hub.stop();
  rmSync(dir, { recursive: true, force: true });
  return rate;
}

const rows: [string, string, number][] = [];
for (const mode of ['file', 'memory'] as const) {
  const d = await direct(mode, 100_000);
  rows.push(['direct messages/s (send -> accepted -> delivered)', mode, d.rate]);
  rows.push(['  hub CPU µs per direct message', mode, d.hubCpuUs]);
  rows.push(['  clients CPU µs per direct message', mode, d.clientCpuUs]);
}
const directOnly = process.argv.includes('--direct-only');
for (const mode of directOnly ? [] : (['file', 'memory'] as const))
  rows.push([
    'broadcast deliveries/s to 100, acknowledged',
    mode,
    await broadcast(mode, 3_000, true),
  ]);
for (const mode of directOnly ? [] : (['file', 'memory'] as const))
  rows.push([
    'broadcast deliveries/s to 100, fan-out only',
    mode,
    await broadcast(mode, 3_000, false),
  ]);
for (const [what, mode, rate] of rows)
  console.log(
    `${what.padEnd(52)} ${(mode === 'file' ? 'file WAL FULL' : 'in-memory').padEnd(14)} ${fmt(rate)}`,
  );
process.exit(0);
