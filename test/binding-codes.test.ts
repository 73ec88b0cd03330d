/**
 * The A2A bindings tell the request metrics the error code they rendered, so `/metrics` counts the
 * code the caller was told, never one guessed back from the answer's body: a JSON-RPC 1.0
 * UNAUTHENTICATED (whose -32000 it shares with TASK_STORE_FULL) and an HTTP+JSON PARSE_ERROR
 * (whose body carries only the HTTP status) count under their own codes; a success counts none.
 */

import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import { parsePrometheus, valueOf, type Family } from './support/prometheus.ts';
import { agentNode, startNode, TEST_AUTH, type TestNode } from './support/node.ts';

setDefaultTimeout(20_000); // per file (Bun scopes it so): real servers are slow on a busy machine

let n: TestNode;
beforeAll(async () => {
  n = await startNode(agentNode('codes', { handle: (ctx) => ctx.complete('ok') }));
});
afterAll(() => n?.dispose());

const scrape = async (): Promise<Map<string, Family>> =>
  parsePrometheus(await (await fetch(`${n.url}/metrics`, { headers: TEST_AUTH })).text());
const errors = (m: Map<string, Family>, route: string, code: string) =>
  valueOf(m, 'lume_http_errors_total', { route, code });

const rpc = (headers: Record<string, string>, method: string, params: unknown) =>
  fetch(`${n.url}/a2a`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'A2A-Version': '1.0', ...headers },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });

test('each coded answer counts under the code its binding rendered, on both HTTP bindings', async () => {
  const before = await scrape();
  const refused = await rpc({ authorization: 'Bearer not-a-token' }, 'GetTask', { id: 'x' });
  expect([refused.status, ((await refused.json()) as any).error.code]).toEqual([401, -32000]);
  const missing = await rpc(TEST_AUTH, 'GetTask', { id: 'no-such-task' });
  expect(((await missing.json()) as any).error.data[0].reason).toBe('TASK_NOT_FOUND');
  const bad = await fetch(`${n.url}/message:send`, {
    method: 'POST',
    headers: { ...TEST_AUTH, 'content-type': 'application/json', 'A2A-Version': '1.0' },
    body: '{not json',
  });
  expect([bad.status, ((await bad.json()) as any).error.status]).toEqual([400, 'INVALID_ARGUMENT']);
  const ok = await rpc(TEST_AUTH, 'ListTasks', {});
  expect(((await ok.json()) as any).result.tasks).toEqual([]);

  const after = await scrape();
  const grew = (route: string, code: string) =>
    errors(after, route, code) - errors(before, route, code);
  expect([
    grew('/a2a', 'UNAUTHENTICATED'),
    grew('/a2a', 'TASK_STORE_FULL'),
    grew('/a2a', 'TASK_NOT_FOUND'),
    grew('/message:send', 'PARSE_ERROR'),
    grew('/message:send', 'other'),
  ]).toEqual([1, 0, 1, 1, 0]);
  const total = (m: Map<string, Family>) =>
    [...(m.get('lume_http_errors_total')?.samples ?? [])].reduce((s, x) => s + x.value, 0);
  expect(total(after) - total(before)).toBe(3); // the success counted no code
});
