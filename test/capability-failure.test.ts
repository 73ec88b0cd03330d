/**
 * A capability that answers an expected failure as a value, `fail('NOT_FOUND', …, 'id')` from the
 * package's node library, is seen with that code, message and field by every caller: the official
 * A2A SDK over JSON-RPC (a data part), HTTP+JSON, a text turn, the signed peer channel,
 * fleet.invoke and its trace record, the console's call through the hub, and the hub's MCP tool
 * (official MCP client), and the tool a node's model calls (on the mesh, in process).
 */

import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { Role } from '@a2a-js/sdk';
import {
  ClientFactory,
  ClientFactoryOptions,
  createAuthenticatingFetchWithRetry,
  JsonRpcTransportFactory,
} from '@a2a-js/sdk/client';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { capability, defineNode, fail } from '../lib/kit/node.ts';
import { catalogTools } from '../lib/agents/model-agent.ts';
import { createPeerClient } from '../lib/peer/client.ts';
import { loadPeerIdentity } from '../lib/peer/keys.ts';
import { localInvoke, startFleet, type RunningFleet } from './support/fleet.ts';
import { TEST_AUTH, TEST_TOKEN } from './support/node.ts';

setDefaultTimeout(20_000); // per file (Bun scopes it so): real servers and processes are slow on a busy machine

const RECORDS: Record<string, string> = { 'r-1': 'first record' };

/** A node as an author writes one: a missing record is a returned failure, not a throw. */
const records = defineNode(() => ({
  name: 'records',
  description: 'A test node that looks records up by id',
  capabilities: [
    capability({
      id: 'record.get',
      name: 'Record',
      description: 'One record by id',
      tags: ['test'],
      keywords: ['record'],
      readOnly: true,
      args: {
        id: {
          type: 'string',
          description: 'Record id such as r-1',
          required: true,
          pattern: 'r-\\d+',
        },
      },
      run: ({ id }) => {
        const title = RECORDS[id];
        if (title === undefined) return fail('NOT_FOUND', `no record ${id}`, 'id');
        return { id, title };
      },
      summarize: (r) => `${r.id}: ${r.title}`,
    }),
  ],
}));

const FAILURE = { code: 'NOT_FOUND', message: 'no record r-9', field: 'id' };

let f: RunningFleet;
let nodeUrl: string;
beforeAll(async () => {
  f = await startFleet([records()]);
  nodeUrl = f.nodes.get('records')!.url;
});
afterAll(() => f.stop());

/** The coded failure a failed task's status message carries as data. */
const failureOf = (status: { message?: { parts: { data?: unknown }[] } }) =>
  status.message?.parts.find((p) => p.data !== undefined)?.data;

describe('over A2A', () => {
  test('JSON-RPC (official SDK, data part): the task fails with the code, message and field', async () => {
    const authFetch = createAuthenticatingFetchWithRetry(fetch, {
      headers: async () => ({ Authorization: `Bearer ${TEST_TOKEN}` }),
      shouldRetryWithHeaders: async () => undefined,
    });
    const client = await new ClientFactory(
      ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
        transports: [new JsonRpcTransportFactory({ fetchImpl: authFetch })],
      }),
    ).createFromUrl(nodeUrl);
    const answer = (await client.sendMessage({
      message: {
        messageId: crypto.randomUUID(),
        role: Role.ROLE_USER,
        parts: [
          {
            content: { $case: 'data', value: { skill: 'record.get', args: { id: 'r-9' } } },
            filename: '',
            mediaType: 'application/json',
            metadata: undefined,
          },
        ],
        contextId: '',
        taskId: '',
        extensions: [],
        referenceTaskIds: [],
        metadata: undefined,
      },
    } as any)) as any;
    // The SDK reads 1.0 parts into its oneof form.
    const parts = answer.status.message.parts.map((p: any) => p.content);
    expect(parts).toEqual([
      { $case: 'text', value: 'no record r-9' },
      { $case: 'data', value: { error: FAILURE } },
    ]);
  });

  test('HTTP+JSON and a text turn: the same failure, and a known id still answers', async () => {
    const send = async (parts: unknown[]) => {
      const res = await fetch(`${nodeUrl}/message:send`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'A2A-Version': '1.0', ...TEST_AUTH },
        body: JSON.stringify({
          message: { messageId: crypto.randomUUID(), role: 'ROLE_USER', parts },
        }),
      });
      return { status: res.status, task: (await res.json()).task };
    };
    const data = await send([{ data: { skill: 'record.get', args: { id: 'r-9' } } }]);
    const text = await send([{ text: 'show record r-9' }]);
    const found = await send([{ text: 'show record r-1' }]);
    expect([data.status, data.task.status.state, failureOf(data.task.status)]).toEqual([
      200,
      'TASK_STATE_FAILED',
      { error: FAILURE },
    ]);
    expect([text.status, text.task.status.state, failureOf(text.task.status)]).toEqual([
      200,
      'TASK_STATE_FAILED',
      { error: FAILURE },
    ]);
    expect([found.task.status.state, found.task.artifacts[0].parts[0].data]).toEqual([
      'TASK_STATE_COMPLETED',
      { id: 'r-1', title: 'first record' },
    ]);
  });
});

describe('over the fleet', () => {
  test('the signed peer channel answers the code with its registry status (404) and the field', async () => {
    const hub = await loadPeerIdentity(f.dataDir, 'a2a');
    const client = createPeerClient({ signer: hub.signer, fleet: f.fleet });
    expect(await client.peerFetch('records', 'record.get', { id: 'r-9' })).toEqual({
      ok: false,
      error: { ...FAILURE, kind: 'failed', status: 404 },
    });
  });

  test('fleet.invoke passes it on and its trace record keeps the code', async () => {
    const r = await f.hub.invoker.invoke('records', 'record.get', { id: 'r-9' });
    expect(r).toMatchObject({ ok: false, error: { ...FAILURE, kind: 'failed', status: 404 } });
    const record = f.hub.trace
      .page({ to: 'records', limit: 500 })
      .records.find((t) => t.id === r.traceId);
    expect(record).toMatchObject({
      from: 'a2a',
      to: 'records',
      capability: 'record.get',
      outcome: 'failed',
      errorCode: 'NOT_FOUND',
    });
  });

  test("the console's call through the hub answers the node's code, message and field with its status, and a success its summary", async () => {
    const r = await localInvoke(f.hubUrl, {
      target: 'records',
      capability: 'record.get',
      args: { id: 'r-9' },
    });
    expect(r).toEqual({ status: 404, json: { ok: false, error: FAILURE } });
    // A success carries the node's summary line with its result.
    const found = await localInvoke(f.hubUrl, {
      target: 'records',
      capability: 'record.get',
      args: { id: 'r-1' },
    });
    expect(found).toEqual({
      status: 200,
      json: {
        ok: true,
        result: { id: 'r-1', title: 'first record' },
        summary: 'r-1: first record',
      },
    });
  });

  test("the hub's MCP tool answers it as a tool error with the code, message and field", async () => {
    const client = new Client({ name: 'lume-test', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${f.hubUrl}/mcp`), {
        requestInit: { headers: TEST_AUTH },
      }),
    );
    try {
      const r = await client.callTool({ name: 'records_get', arguments: { id: 'r-9' } });
      expect([r.isError, r.structuredContent]).toEqual([true, { ok: false, error: FAILURE }]);
    } finally {
      await client.close();
    }
  });
});

test("the node's catalog as a model's tools (what a mesh agent calls) answers the same failure", async () => {
  const [tool] = catalogTools(records().catalog);
  const signal = new AbortController().signal;
  expect([tool!.definition.name, await tool!.run({ id: 'r-9' }, signal)]).toEqual([
    'record_get',
    { ok: false, error: FAILURE },
  ]);
});
