/**
 * `bun run mesh disconnect` ends a running `bun run mesh connect` of the same connection: two real
 * CLI processes against a real hub on port 0, the connection remembered under its roster name
 * with the protocol's setting name (`MESH_PERSIST_CONNECTIONS=1`). The running connect stops
 * wanting the connection and exits 0 with one line; the presence is gone, the record forgotten.
 */

import { expect, setDefaultTimeout, test } from 'bun:test';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createHubClient } from '../lib/mesh/http-client.ts';
import { meshCliHub } from './support/mesh-cli.ts';

setDefaultTimeout(20_000); // per file (Bun scopes it so): real servers and processes are slow on a busy machine

const cli = meshCliHub();
const mesh = (args: string[]) => cli.run(args);

test('disconnect --agent alice ends a running connect --as alice, which exits 0 with one line', async () => {
  const roster = async () => {
    const r = await createHubClient({ baseUrl: cli.hub.url }).presence('demo');
    return r.ok ? r.result.map((p) => p.name) : r.error.code;
  };
  const connect = mesh(['connect', 'demo', '--as', 'alice']);
  await connect.out.until(/^connected to demo as alice/);
  expect(await roster()).toEqual(['alice']);
  // Remembered under the roster name, in the data folder's 0600 file.
  const file = join(cli.dataDir, 'mesh', 'connections.json');
  expect(Object.keys(JSON.parse(readFileSync(file, 'utf8')))).toEqual(['alice']);

  const disconnect = mesh(['disconnect', '--agent', 'alice']);
  expect(await disconnect.proc.exited).toBe(0);
  await disconnect.out.done;
  expect(disconnect.out.lines).toEqual([
    'disconnected alice from demo; the connection is forgotten',
  ]);

  // The running connect heard it: it stops, says so in one line and exits 0 (stdin still open).
  expect(await connect.proc.exited).toBe(0);
  await connect.out.done;
  expect(connect.out.lines.slice(1)).toEqual([
    '* connection lost, retrying',
    '* disconnected alice from demo by bun run mesh disconnect',
  ]);
  expect(await roster()).toEqual([]);
  // Nothing is left to end, and a new connect starts afresh.
  const again = mesh(['disconnect', '--agent', 'alice']);
  expect(await again.proc.exited).toBe(1);
  await again.err.done;
  expect(again.err.lines).toEqual([
    'error A2A_CLIENT_CLOSED: no remembered connection for agent alice',
  ]);
  // Three CLI processes one after another, and the running one's retries at their backoff: on a
  // loaded machine that is more than the file's default bound, which only guards against a hang.
}, 60_000);
