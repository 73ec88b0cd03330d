/**
 * The bound on JSON values (100,000: containers and commas, counted over the text before parsing,
 * lib/body.ts) on every surface of a real hub process that reads JSON besides A2A's (which
 * test/a2a-grpc-bounds.test.ts covers): MCP, the mesh's HTTP routes and its socket, and the signed
 * peer routes. A body of 100,001 tiny values, well under each surface's byte limit, is refused
 * with the surface's own coded answer, and the hub still answers afterwards.
 */

import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadFleet } from '../lib/config/fleet-file.ts';
import { ensureKeys, loadPeerIdentity } from '../lib/peer/keys.ts';
import { tempDir } from './support/node.ts';
import { startProcess, type ServingProcess } from './support/process.ts';

setDefaultTimeout(30_000); // per file (Bun scopes it so): real processes are slow on a busy machine

/** 100,001 values: a list of 100,000 zeros is the list and its 99,999 commas, one more. */
const MANY = `[${'0,'.repeat(100_000)}0]`;

let hub: ServingProcess;
let dataDir: string;
beforeAll(async () => {
  dataDir = tempDir('lume-json-values-');
  const fleetFile = join(dataDir, 'fleet.json');
  writeFileSync(
    fleetFile,
    JSON.stringify({
      hub: { name: 'a2a', port: 0, role: 'hub', file: 'hub/main.ts' },
      nodes: [{ name: 'crm', port: 0, role: 'customers', file: 'node/crm/index.ts' }],
    }),
  );
  await ensureKeys(dataDir, await loadFleet(fleetFile));
  hub = await startProcess('hub/main.ts', [], { PORT: '0' }, { dataDir, fleetFile });
});
afterAll(async () => {
  await hub?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

const healthy = async () => (await fetch(`${hub.url}/healthz`)).status;

test('MCP: a JSON-RPC message of 100,001 values is a parse error coded BODY_TOO_MANY_VALUES', async () => {
  const r = await fetch(`${hub.url}/mcp`, {
    method: 'POST',
    headers: { accept: 'application/json, text/event-stream', 'content-type': 'application/json' },
    body: `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"pad":${MANY}}}`,
  });
  const body = (await r.json()) as { error?: { code: number; data?: unknown } };
  expect(body.error?.code).toBe(-32700);
  expect(JSON.stringify(body.error?.data)).toContain('BODY_TOO_MANY_VALUES');
  expect(await healthy()).toBe(200);
});

test("the mesh's HTTP routes refuse it as they refuse bad JSON, saying why", async () => {
  const create = (body: string) =>
    fetch(`${hub.url}/api/projects.create`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
    });
  const broken = await create('{');
  const r = await create(`{"name":"many","pad":${MANY}}`);
  const body = (await r.json()) as { error?: { code: string; message: string } };
  expect([r.status, body.error?.code]).toEqual([broken.status, 'bad-json']);
  expect(body.error?.message).toContain('more than 100000 values');
  const projects = await (await fetch(`${hub.url}/api/projects.list`)).text();
  expect(projects).not.toContain('"many"');
});

test("the mesh's socket answers such a frame invalid_frame, before it is parsed", async () => {
  const ws = new WebSocket(`${hub.url.replace('http', 'ws')}/v1/connect`);
  const first = new Promise<string>((resolve) => {
    ws.onmessage = (e) => resolve(String(e.data));
  });
  await new Promise<void>((resolve) => (ws.onopen = () => resolve()));
  ws.send(`{"type":"hello","protocolVersion":3,"project":"main","name":"x","pad":${MANY}}`);
  const frame = JSON.parse(await first) as { type: string; code: string; message: string };
  expect([frame.type, frame.code]).toEqual(['error', 'invalid_frame']);
  expect(frame.message).toContain('more than 100000 values');
  ws.close();
  expect(await healthy()).toBe(200);
});

test('the signed peer routes answer BODY_TOO_MANY_VALUES (400), signature and all', async () => {
  const { signer } = await loadPeerIdentity(dataDir, 'crm');
  const bytes = new TextEncoder().encode(
    `{"capability":"node.capabilities","args":{"pad":${MANY}}}`,
  );
  const headers = {
    ...(await signer.sign({ to: 'a2a', route: '/peer/invoke', scope: 'node.capabilities' }, bytes)),
    'content-type': 'application/json',
  };
  const r = await fetch(`${hub.url}/peer/invoke`, { method: 'POST', headers, body: bytes });
  const body = (await r.json()) as { error?: { code: string } };
  expect([r.status, body.error?.code]).toEqual([400, 'BODY_TOO_MANY_VALUES']);
  expect(await healthy()).toBe(200);
});
