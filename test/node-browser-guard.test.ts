/**
 * Nodes refuse what a page on another site could send, as the hub does. Before, a cross-site POST
 * without a Content-Type (a CORS-simple request, no preflight) reached `/a2a`: on a node with
 * A2A_OPEN=1 a foreign page registered a webhook, and the node posted to a loopback service with
 * an `Authorization` the page chose. The REST binding refused such bodies already; JSON-RPC now
 * does too. Each attack is sent byte for byte as a browser sends it.
 */

import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import { realNodeDefs } from './support/fleet.ts';
import { startNode, type TestNode } from './support/node.ts';
import { rawRequest } from './support/raw-http.ts';

setDefaultTimeout(20_000); // per file (Bun scopes it so): real servers and processes are slow on a busy machine

let node: TestNode;
let hits = 0;
let receiver: ReturnType<typeof Bun.serve>;

beforeAll(async () => {
  receiver = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch: () => (hits++, new Response('ok')),
  });
  // A2A_OPEN=1: anonymous callers may register webhooks (a conformance run on this machine).
  node = await startNode((await realNodeDefs(['scanner'], { dataDir: undefined }))[0]!, {
    access: { anonymous: 'all' },
  });
});
afterAll(async () => {
  await node?.dispose();
  receiver?.stop(true);
});

const sendWithWebhook = () =>
  JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'SendMessage',
    params: {
      message: { messageId: crypto.randomUUID(), role: 'ROLE_USER', parts: [{ text: 'sectors' }] },
      configuration: {
        taskPushNotificationConfig: {
          url: `http://127.0.0.1:${receiver.port}/admin`,
          authentication: { scheme: 'Bearer', credentials: 'chosen-by-the-page' },
        },
      },
    },
  });

/** A POST to the node's /a2a with exactly these extra header lines. */
const post = (headers: string[], body = sendWithWebhook()) =>
  rawRequest(
    node.url,
    [
      'POST /a2a HTTP/1.1',
      `Host: ${new URL(node.url).host}`,
      `Content-Length: ${Buffer.byteLength(body)}`,
      'Connection: close',
      ...headers,
      '',
      body,
    ].join('\r\n'),
  );
const codeOf = (a: { body: string }) => JSON.parse(a.body).error.code;

test('a cross-site POST without a Content-Type, or text/plain, or from another Origin, is refused', async () => {
  const answers = [];
  for (const headers of [
    ['Origin: http://evil.example', 'Sec-Fetch-Site: cross-site'],
    ['Sec-Fetch-Site: cross-site'],
    ['Origin: http://127.0.0.1:1', 'Content-Type: text/plain;charset=UTF-8'],
    ['Origin: null', 'Content-Type: application/json'],
    ['Content-Type: text/plain;charset=UTF-8'],
    ['Content-Type: application/x-www-form-urlencoded'],
    [],
  ]) {
    const a = await post(headers);
    answers.push([a.status, codeOf(a)]);
  }
  // The JSON-RPC binding answers a body that is not JSON in its own shape: -32005.
  expect(answers).toEqual([
    [403, 'FORBIDDEN_CROSS_SITE'],
    [403, 'FORBIDDEN_CROSS_SITE'],
    [403, 'FORBIDDEN_ORIGIN'],
    [403, 'FORBIDDEN_ORIGIN'],
    [200, -32005],
    [200, -32005],
    [200, -32005],
  ]);
  // Nothing was stored and nothing was posted.
  const list = await fetch(`${node.url}/a2a`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'a2a-version': '1.0' },
    body: '{"jsonrpc":"2.0","id":2,"method":"ListTasks","params":{}}',
  }).then((r) => r.json());
  expect(list.result.tasks).toEqual([]);
  expect(hits).toBe(0);
});

test('the node’s own origin, a client outside a browser, and public reads from anywhere still work', async () => {
  const own = await post([`Origin: ${node.url}`, 'Content-Type: application/json']);
  expect(own.status).toBe(200);
  const card = await rawRequest(
    node.url,
    `GET /.well-known/agent-card.json HTTP/1.1\r\nHost: ${new URL(node.url).host}\r\nSec-Fetch-Site: cross-site\r\nConnection: close\r\n\r\n`,
  );
  expect(card.status).toBe(200);
  const reads = await rawRequest(
    node.url,
    `GET /tasks HTTP/1.1\r\nHost: ${new URL(node.url).host}\r\nSec-Fetch-Site: cross-site\r\nConnection: close\r\n\r\n`,
  );
  expect([reads.status, codeOf(reads)]).toEqual([403, 'FORBIDDEN_CROSS_SITE']);
});
