/**
 * A malformed `Host` or request line, against the hub and a node as real processes started with
 * NODE_ENV=development: every one answers a small coded 400 (never Bun's development error page
 * with the checkout's paths and source lines), the process keeps serving, and a flood of one
 * identical log line is written a few times and then counted, not written 300 times.
 */

import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { startProcess, type ServingProcess } from './support/process.ts';
import { rawGet, rawRequest } from './support/raw-http.ts';

setDefaultTimeout(20_000); // per file (Bun scopes it so): real servers and processes are slow on a busy machine

const MALFORMED_HOSTS = ['@', 'a?b', '[zz]', 'a b', 'x:99999', 'a/b', '%%', '[::1', '\u00ff'];

let hub: ServingProcess;
let node: ServingProcess;
beforeAll(async () => {
  [hub, node] = await Promise.all([
    startProcess('hub/main.ts', [], { NODE_ENV: 'development' }),
    startProcess('node/main.ts', ['--name', 'scanner'], { NODE_ENV: 'development' }),
  ]);
});
afterAll(async () => {
  await Promise.all([hub?.stop(), node?.stop()]);
});

for (const which of ['hub', 'node'] as const) {
  describe(which, () => {
    const proc = () => (which === 'hub' ? hub : node);

    test('a malformed Host answers 400 BAD_HOST, small and without source lines', async () => {
      const answers = [];
      for (const host of MALFORMED_HOSTS) {
        const a = await rawGet(proc().url, host);
        answers.push([host, a.status, a.status === 400 ? JSON.parse(a.body).error.code : a.body]);
        expect(a.bytes).toBeLessThan(1024);
        expect(a.body).not.toContain('/work');
        expect(a.body).not.toContain('at fetch');
      }
      expect(answers).toEqual(MALFORMED_HOSTS.map((h) => [h, 400, 'BAD_HOST']));
      // A well-formed Host still reaches the route.
      expect((await rawGet(proc().url, new URL(proc().url).host)).status).toBe(200);
      expect(proc().alive()).toBe(true);
    });

    test('a malformed request line answers 4xx or 505 from the parser, never a page', async () => {
      for (const line of ['FOO', 'GET  / HTTP/1.1', 'GET /a b HTTP/1.1']) {
        const a = await rawRequest(
          proc().url,
          `${line}\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`,
        );
        expect([400, 505]).toContain(a.status);
        expect(a.bytes).toBeLessThan(1024);
      }
      expect((await fetch(`${proc().url}/healthz`)).status).toBe(200);
    });
  });
}

test('one log line repeated 300 times is written a few times, then counted', async () => {
  // A forged fleet signature on /a2a logs `a2a signature refused` for each request.
  const forged = (from = 'crm', more = '') =>
    fetch(`${node.url}/a2a`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-peer-signature': `v1 node=${from} ts=${Date.now()} nonce=${crypto.randomUUID()} scope=a2a mode=shared sig=AAAA${more}`,
      },
      body: '{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"x"}}',
    });
  const statuses = new Set<number>();
  for (let i = 0; i < 300; i++) statuses.add((await forged()).status);
  expect([...statuses]).toEqual([401]);
  // A different refusal (an unknown node) is a different line: once it is in the log, so is every earlier one.
  await forged('nobody', ' to=scanner route=/a2a');
  const log = await node.waitForLog('PEER_UNKNOWN_NODE');
  const written = log.split('\n').filter((l) => l.includes('PEER_UNSIGNED')).length;
  expect(written).toBe(5);
});
