/**
 * Benchmark: durable direct messages per second end to end (send -> accepted -> delivered) and
 * broadcast deliveries per second to 100 presences (with and without their acknowledgements), each against a file store (WAL,
 * synchronous = FULL, group commit) and an in-memory store for the durability cost. The direct
 * rows also give the hub process's CPU time per message (/proc), steadier than the rate on a
 * shared machine.
 * The clients' CPU per message (this process) is printed too: they share the cores with the hub.
 * With `--raw` they read each frame as text and look only at its type, messageId and status (as
 * bench/mesh-cluster.ts does) instead of parsing it, leaving more of the cores to the hub.
 * Usage: bun bench/mesh-throughput.ts [--direct-only] [--file-only] [--raw] [--messages N]
 */

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { claim, fmt, spawnHub } from './mesh-common.ts';
import { cpuMs } from './proc-cpu.ts';

const text = (s: string) => ({ encoding: 'identity', data: s, uncompressedBytes: s.length });
const RAW = process.argv.includes('--raw');
const at = process.argv.indexOf('--messages');
const MESSAGES = at > 0 ? Number(process.argv[at + 1]) : 100_000;

/** A frame's messageId read from its text (the bench's ids need no escapes). */
const idOf = (frame: string): string => {
  const i = frame.indexOf('"messageId":"') + 13;
  return frame.slice(i, frame.indexOf('"', i));
};
/** Whether a frame (parsed, or its text with --raw) is the message itself; then its id. */
const messageIdOf = (f: any): string | undefined =>
  RAW
    ? (f as string).startsWith('{"type":"message"')
      ? idOf(f)
      : undefined
    : f.type === 'message'
      ? f.message.messageId
      : undefined;
const isDelivered = (f: any): boolean =>
  RAW
    ? (f as string).startsWith('{"type":"delivery"') &&
      (f as string).includes('"status":"delivered"')
    : f.type === 'delivery' && f.status === 'delivered';

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
    await claim(
      hub.url,
      'bench',
      `r${p}`,
      (f, c) => {
        const id = messageIdOf(f);
        if (id !== undefined) c.ws.send(`{"type":"delivered","messageId":"${id}"}`);
      },
      RAW,
    );
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
    const s = await claim(
      hub.url,
      'bench',
      `s${p}`,
      (f, c) => {
        if (isDelivered(f)) {
          if (++delivered === perPair * pairs) finish();
          if (sent < perPair) sendOne(c.ws);
        }
      },
      RAW,
    );
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
const MODES = process.argv.includes('--file-only')
  ? (['file'] as const)
  : (['file', 'memory'] as const);
for (const mode of MODES) {
  const d = await direct(mode, MESSAGES);
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
    `${what.padEnd(52)} ${(mode === 'file' ? 'file, fsynced' : 'in-memory').padEnd(14)} ${fmt(rate)}`,
  );
process.exit(0);
