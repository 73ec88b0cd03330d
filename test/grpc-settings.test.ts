/**
 * The gRPC port's bounds are settings (`grpc.*`, docs/limits.md), read by a real node process from
 * its environment, and what they cut is counted: a connection past the per-address cap is closed at
 * once (`lume_grpc_cut_total{reason="address_full"}`), a half-sent preface is cut at the handshake
 * bound (`handshake_timeout`), and `lume_grpc_connections` counts the open ones. A bound below 1
 * stops the start with a line naming the variable.
 */

import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import { rmSync } from 'node:fs';
import http2 from 'node:http2';
import net from 'node:net';
import { bunCommand } from './support/bundle.ts';
import { startProcess, type ServingProcess } from './support/process.ts';
import { parsePrometheus, valueOf } from './support/prometheus.ts';

setDefaultTimeout(30_000); // per file (Bun scopes it so): real processes are slow on a busy machine

let node: ServingProcess;
let port: number;
beforeAll(async () => {
  node = await startProcess('node/main.ts', ['--name', 'scanner', '--grpc-port', '0'], {
    GRPC_MAX_CONNECTIONS_PER_ADDRESS: '2',
    GRPC_HANDSHAKE_MS: '200',
  });
  port = Number(/gRPC on port (\d+)/.exec(node.out())![1]);
});
afterAll(async () => {
  await node?.stop();
  if (node) rmSync(node.dataDir, { recursive: true, force: true });
});

const metrics = async () => parsePrometheus(await (await fetch(`${node.url}/metrics`)).text());

async function session(): Promise<http2.ClientHttp2Session> {
  const s = http2.connect(`http://127.0.0.1:${port}`);
  s.on('error', () => {});
  return s;
}
const opened = (s: http2.ClientHttp2Session) =>
  new Promise<void>((resolve) => s.once('remoteSettings', () => resolve()));
/** Resolves when the port closes the connection (an admitted one would never close by itself). */
const closed = (s: http2.ClientHttp2Session) =>
  new Promise<void>((resolve) => s.once('close', () => resolve()));

test('connections past GRPC_MAX_CONNECTIONS_PER_ADDRESS are closed and counted; the open ones are a gauge', async () => {
  const a = await session();
  const b = await session();
  await Promise.all([opened(a), opened(b)]);
  await closed(await session());
  const m = await metrics();
  expect(valueOf(m, 'lume_grpc_cut_total', { reason: 'address_full' })).toBe(1);
  expect(valueOf(m, 'lume_grpc_connections', {})).toBe(2);
  a.destroy();
  b.destroy();
  await Promise.all([closed(a), closed(b)]);
});

test('a half-sent preface is cut at GRPC_HANDSHAKE_MS and counted', async () => {
  // From an address of its own, so the per-address cap of the test before plays no part.
  const s = net.connect({ port, host: '127.0.0.1', localAddress: '127.0.0.3' });
  s.on('error', () => {});
  s.resume();
  s.once('connect', () => s.write('PRI * HTTP/2.0\r\n'));
  await new Promise<void>((resolve) => s.once('close', () => resolve()));
  const m = await metrics();
  expect(valueOf(m, 'lume_grpc_cut_total', { reason: 'handshake_timeout' })).toBeGreaterThanOrEqual(
    1,
  );
  expect((await fetch(`${node.url}/healthz`)).status).toBe(200);
});

test('a gRPC bound below 1 stops the start with a line naming its variable', async () => {
  const p = Bun.spawn(bunCommand(['node/main.ts', '--name', 'scanner']), {
    cwd: `${import.meta.dir}/..`,
    env: { ...process.env, GRPC_IDLE_MS: '0', DATA_DIR: node.dataDir, PORT: '0' },
    stdout: 'pipe',
    stderr: 'pipe',
  });
  expect(await p.exited).toBe(2);
  expect(await new Response(p.stderr).text()).toContain('GRPC_IDLE_MS');
});
