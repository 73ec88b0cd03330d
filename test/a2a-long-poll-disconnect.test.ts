/**
 * A held long-poll (`GetTask` with `currentGeneration`) whose client goes away frees its slot at
 * once, on JSON-RPC, HTTP+JSON and gRPC (lib/a2a/engine/long-polls.ts, the request's abort
 * signal): a caller who opened as many as its bound allows and then disconnected them all may
 * open as many again at once, and the `lume_a2a_long_polls` gauge falls to 0, long before the
 * wait (60 s here, past the test's timeout) would have ended.
 */

import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import * as grpc from '@grpc/grpc-js';
import type { Agent } from '../lib/a2a/agent.ts';
import { encodeMessage } from '../lib/a2a/grpc/encode.ts';
import { A2A_SCHEMA } from '../lib/a2a/proto/schema.ts';
import { jsonRpcAdapter } from './support/bindings.ts';
import { grpcAddressOf, rawClient, SERVICE } from './support/grpc.ts';
import { agentNode, startNode, TEST_AUTH, TEST_TOKEN, type TestNode } from './support/node.ts';
import { waitFor } from './support/processes.ts';

setDefaultTimeout(30_000); // per file (Bun scopes it so): real servers on a busy machine

/** Every task asks for input and stays there (generation 2). */
const agent: Agent = { handle: (ctx) => ctx.requireInput('go on?') };
const BOUND = 25;

let node: TestNode;
let grpcClient: grpc.Client;
let taskId: string;
beforeAll(async () => {
  node = await startNode(agentNode('long-poll-gone', agent), {
    limits: { longPollMs: 60_000, longPollsPerPrincipal: BOUND },
  });
  grpcClient = rawClient(grpcAddressOf(node.node.card())!);
  const sent = await jsonRpcAdapter(node.url, '1.1').call('SendMessage', {
    message: { messageId: crypto.randomUUID(), role: 'ROLE_USER', parts: [{ text: 'park' }] },
  });
  if (!('result' in sent)) throw new Error(sent.error);
  taskId = (sent.result as any).task.id;
});
afterAll(async () => {
  grpcClient?.close();
  await node?.dispose();
});

/** One held read, and how to walk away from it. */
interface Held {
  answered: Promise<unknown>;
  disconnect(): void;
}

const viaFetch = (url: string, init: RequestInit): Held => {
  const ac = new AbortController();
  const answered = fetch(url, { ...init, signal: ac.signal }).then(
    (r) => r.json(),
    () => 'gone',
  );
  return { answered, disconnect: () => ac.abort() };
};

const bindings: Record<string, () => Held> = {
  'JSON-RPC': () =>
    viaFetch(`${node.url}/a2a`, {
      method: 'POST',
      headers: { ...TEST_AUTH, 'content-type': 'application/json', 'A2A-Version': '1.1' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'GetTask',
        params: { id: taskId, currentGeneration: '2' },
      }),
    }),
  'HTTP+JSON': () =>
    viaFetch(`${node.url}/tasks/${taskId}?currentGeneration=2`, {
      headers: { ...TEST_AUTH, 'A2A-Version': '1.1' },
    }),
  gRPC: () => {
    const md = new grpc.Metadata();
    md.set('authorization', `Bearer ${TEST_TOKEN}`);
    md.set('a2a-version', '1.1');
    const body = encodeMessage(A2A_SCHEMA, 'lf.a2a.v1.GetTaskRequest', {
      id: taskId,
      currentGeneration: '2',
    });
    let call: grpc.ClientUnaryCall | undefined;
    const answered = new Promise((resolve) => {
      call = grpcClient.makeUnaryRequest(
        `${SERVICE}/GetTask`,
        (b: Buffer) => b,
        (b: Buffer) => b,
        Buffer.from(body),
        md,
        (err) => resolve(err ? err.code : 'answered'),
      );
    });
    return { answered, disconnect: () => call!.cancel() };
  },
};

const gauge = async () => {
  const text = await (await fetch(`${node.url}/metrics`, { headers: TEST_AUTH })).text();
  return Number(/^lume_a2a_long_polls (\d+)$/m.exec(text)?.[1]);
};

describe('a long-poll whose client goes away', () => {
  for (const [name, open] of Object.entries(bindings))
    test(`${name}: its slot is freed at once`, async () => {
      const held = Array.from({ length: BOUND }, open);
      await waitFor(`${BOUND} held`, () => node.node.engine.longPollsHeld === BOUND);
      expect(await gauge()).toBe(BOUND);
      // At the caller's bound: one more is refused at once.
      const refused = await open().answered;
      if (name === 'gRPC') expect(refused).toBe(grpc.status.RESOURCE_EXHAUSTED);
      else expect(JSON.stringify(refused)).toContain('TOO_MANY_LONG_POLLS');
      const began = performance.now();
      for (const h of held) h.disconnect();
      await waitFor('every slot freed', () => node.node.engine.longPollsHeld === 0);
      expect(performance.now() - began).toBeLessThan(10_000); // the wait would be 60 s
      expect(await gauge()).toBe(0);
      await Promise.all(held.map((h) => h.answered));
      // As many again are held: the caller's slots were all given back.
      const again = Array.from({ length: BOUND }, open);
      await waitFor(`${BOUND} held again`, () => node.node.engine.longPollsHeld === BOUND);
      for (const h of again) h.disconnect();
      await waitFor('freed again', () => node.node.engine.longPollsHeld === 0);
    });
});
