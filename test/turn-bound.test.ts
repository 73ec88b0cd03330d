/**
 * Bounded work per caller (the trust boundary, third pass, item 2): a node runs at most
 * `turnsPerPrincipal` agent turns at once for one principal, all anonymous callers counted as one.
 * Against a real node on port 0: past the bound a send is refused `TOO_MANY_TURNS` on JSON-RPC
 * (and its streaming send), HTTP+JSON and gRPC, and from the mesh inbox's path; nothing is
 * stored; another principal still gets its own turns; once the turns end the caller is served
 * again, and the node never stopped serving.
 */

import { afterEach, expect, setDefaultTimeout, test } from 'bun:test';
import type * as grpc from '@grpc/grpc-js';
import type { Agent } from '../lib/a2a/agent.ts';
import { isA2AError } from '../lib/a2a/errors.ts';
import { encodeMessage } from '../lib/a2a/grpc/encode.ts';
import { A2A_SCHEMA } from '../lib/a2a/proto/schema.ts';
import { ANONYMOUS } from '../lib/auth/principal.ts';
import { grpcAddressOf, rawClient, unary } from './support/grpc.ts';
import { agentNode, rpc, startNode, TEST_AUTH, type TestNode } from './support/node.ts';

setDefaultTimeout(20_000); // per file (Bun scopes it so): real servers and processes are slow on a busy machine

const BOUND = 2;
const stops: (() => unknown)[] = [];
afterEach(async () => {
  for (const s of stops.splice(0).reverse()) await s();
});

/** `hold` stays working until `letGo`, which resolves once every held turn has returned. */
function holdingAgent() {
  let open = () => {};
  const gate = new Promise<void>((r) => (open = r));
  const turns: Promise<void>[] = [];
  const agent: Agent = {
    async handle(ctx) {
      if (!ctx.text.startsWith('hold')) return ctx.complete('done');
      ctx.working('holding');
      const turn = gate.then(() => ctx.complete('done'));
      turns.push(turn);
      await turn;
    },
  };
  return {
    agent,
    letGo: async () => {
      open();
      await Promise.all(turns);
    },
  };
}

const message = (text: string) => ({
  messageId: crypto.randomUUID(),
  role: 'ROLE_USER',
  parts: [{ text }],
});
const ANON = {};
const send = (n: TestNode, text: string, auth: Record<string, string>, method = 'SendMessage') =>
  rpc(
    n.url,
    method,
    { message: message(text), configuration: { returnImmediately: true } },
    '1.0',
    1,
    auth,
  );

test('past its running turns a caller is refused TOO_MANY_TURNS on every binding; nothing is stored; others are served', async () => {
  const { agent, letGo } = holdingAgent();
  const n = await startNode(agentNode('busy', agent), { limits: { turnsPerPrincipal: BOUND } });
  stops.push(() => n.dispose());
  stops.push(letGo);
  for (let i = 0; i < BOUND; i++)
    expect((await send(n, 'hold', ANON)).result.task.status.state).toBe('TASK_STATE_WORKING');
  const stored = await n.node.store.count();

  // JSON-RPC and its streaming send: -32000 with the reason in this project's ErrorInfo.
  for (const method of ['SendMessage', 'SendStreamingMessage']) {
    const refused = await send(n, 'hold', ANON, method);
    expect([refused.error?.code, refused.error?.data]).toEqual([
      -32000,
      [
        {
          '@type': 'type.googleapis.com/google.rpc.ErrorInfo',
          reason: 'TOO_MANY_TURNS',
          domain: 'lume-a2a',
        },
      ],
    ]);
  }
  // HTTP+JSON: 429 RESOURCE_EXHAUSTED, with when to try again.
  const rest = await fetch(`${n.url}/message:send`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'a2a-version': '1.0' },
    body: JSON.stringify({ message: message('hold') }),
  });
  const body = (await rest.json()) as any;
  expect([rest.status, rest.headers.get('retry-after'), body.error.status]).toEqual([
    429,
    '5',
    'RESOURCE_EXHAUSTED',
  ]);
  expect(body.error.details[0].reason).toBe('TOO_MANY_TURNS');
  // gRPC: RESOURCE_EXHAUSTED (8).
  const client: grpc.Client = rawClient(grpcAddressOf(n.node.card())!);
  stops.push(() => client.close());
  const g = await unary(
    client,
    'SendMessage',
    encodeMessage(A2A_SCHEMA, 'lf.a2a.v1.SendMessageRequest', { message: message('hold') }),
    { 'a2a-version': '1.0' },
  );
  expect([g.code, g.reason, g.domain]).toEqual([8, 'TOO_MANY_TURNS', 'lume-a2a']);
  // The mesh inbox's path: the node's own task, acting for an anonymous sender, counts with them.
  const mesh = await n.node.engine.send({
    params: {
      message: { ...message('hold'), role: 'user' } as never,
      configuration: { returnImmediately: true },
    },
    version: '1.0',
    caller: { kind: 'node', name: 'busy' },
    actingFor: ANONYMOUS,
  });
  expect(isA2AError(mesh) && mesh.code).toBe('TOO_MANY_TURNS');
  expect(await n.node.store.count()).toBe(stored);

  // A token holder has turns of its own, up to the same bound.
  for (let i = 0; i < BOUND; i++)
    expect((await send(n, 'hold', TEST_AUTH)).result.task.status.state).toBe('TASK_STATE_WORKING');
  expect((await send(n, 'hold', TEST_AUTH)).error.data[0].reason).toBe('TOO_MANY_TURNS');

  // Once the turns end, the caller is served again.
  await letGo();
  const again = await send(n, 'quick', ANON);
  expect(again.result?.task.status.state).toBe('TASK_STATE_COMPLETED');
});
