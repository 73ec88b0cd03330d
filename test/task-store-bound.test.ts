/**
 * The hard bound of a node's task store, against real nodes over HTTP on each store (the task
 * log and a throw-away PostgreSQL cluster): with every stored task in progress, a SendMessage
 * that would create one more is refused `TASK_STORE_FULL` on JSON-RPC, HTTP+JSON and gRPC,
 * nothing is stored, a message to an existing task still works, and once tasks finish and
 * retention makes room new tasks are accepted again; concurrent sends at the bound never
 * overshoot it. The byte bound (`TASK_MAX_BYTES`) of the task log and the PostgreSQL store
 * alike: large finished tasks are deleted oldest first so the store stays near it, and large
 * tasks in progress that fill it refuse a new one.
 */

import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type * as grpc from '@grpc/grpc-js';
import { SQL } from 'bun';
import type { Agent } from '../lib/a2a/agent.ts';
import { encodeMessage } from '../lib/a2a/grpc/encode.ts';
import { A2A_SCHEMA } from '../lib/a2a/proto/schema.ts';
import { ROW_BYTES } from '../lib/a2a/store/postgres/task-count.ts';
import { hardBound } from '../lib/a2a/store/task-store.ts';
import type { NodeOptions } from '../lib/node/node-types.ts';
import { grpcAddressOf, rawClient, unary } from './support/grpc.ts';
import { agentNode, rpc, startNode, TEST_AUTH, TEST_TOKEN, tempDir } from './support/node.ts';
import { type FilePostgres, sharedPostgres } from './support/postgres.ts';

setDefaultTimeout(20_000); // per file (Bun scopes it so): real servers and processes are slow on a busy machine

const MAX_STORED = 4;
const BOUND = hardBound(MAX_STORED);

let pg: FilePostgres;
let databases = 0;
beforeAll(async () => {
  pg = await sharedPostgres();
});
afterAll(async () => {
  await pg?.release();
});

/**
 * `hold` stays working until the test lets it go; `ask` waits for input; anything else, and an
 * answer to a question, completes. `letGo` resolves once every held turn has completed its task.
 */
function holdingAgent(): { agent: Agent; letGo(): Promise<void> } {
  let open = () => {};
  const gate = new Promise<void>((resolve) => (open = resolve));
  const turns: Promise<void>[] = [];
  const agent: Agent = {
    async handle(ctx) {
      if (ctx.continued) return ctx.complete('thanks');
      if (ctx.text === 'ask') return ctx.requireInput('which one?');
      if (!ctx.text.startsWith('hold')) return ctx.complete('done');
      ctx.working('holding');
      const turn = Promise.race([
        gate,
        new Promise<void>((r) => ctx.signal.addEventListener('abort', () => r(), { once: true })),
      ]).then(() => ctx.complete('done'));
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

const message = (text: string, extra: Record<string, unknown> = {}) => ({
  messageId: crypto.randomUUID(),
  role: 'ROLE_USER',
  parts: [{ text }],
  ...extra,
});
const send = (url: string, text: string, extra: Record<string, unknown> = {}) =>
  rpc(url, 'SendMessage', {
    message: message(text, extra),
    configuration: { returnImmediately: text.startsWith('hold') },
  });

const backends: { name: string; options(): Promise<Partial<NodeOptions>> }[] = [
  { name: 'the task log', options: async () => ({ dataDir: tempDir() }) },
  {
    name: 'PostgreSQL',
    options: async () => ({
      dataDir: tempDir(),
      tasksDatabaseUrl: await pg.createDatabase(`bound_${++databases}`),
    }),
  },
];

describe.each(backends)('the task store bound on $name', (backend) => {
  test('a full store of tasks in progress refuses a new task on every binding, stores nothing, and takes new ones once retention makes room', async () => {
    const { agent, letGo } = holdingAgent();
    const n = await startNode(agentNode('bound', agent), {
      ...(await backend.options()),
      limits: { taskMaxStored: MAX_STORED },
    });
    let client: grpc.Client | undefined;
    try {
      // Fill the store to its hard bound with tasks in progress: working and input-required.
      const held: string[] = [];
      for (let i = 0; i < BOUND - 2; i++) {
        const r = await send(n.url, 'hold');
        expect(r.result.task.status.state).toBe('TASK_STATE_WORKING');
        held.push(r.result.task.id);
      }
      const asked: string[] = [];
      for (let i = 0; i < 2; i++) {
        const r = await send(n.url, 'ask');
        expect(r.result.task.status.state).toBe('TASK_STATE_INPUT_REQUIRED');
        asked.push(r.result.task.id);
      }
      expect(await n.node.store.count()).toBe(BOUND);

      // JSON-RPC: -32000 with the reason in an ErrorInfo of this project's domain.
      const refused = await send(n.url, 'another');
      expect(refused.result).toBeUndefined();
      expect(refused.error.code).toBe(-32000);
      expect(refused.error.data).toEqual([
        {
          '@type': 'type.googleapis.com/google.rpc.ErrorInfo',
          reason: 'TASK_STORE_FULL',
          domain: 'lume-a2a',
        },
      ]);
      // HTTP+JSON: 503 UNAVAILABLE.
      const rest = await fetch(`${n.url}/message:send`, {
        method: 'POST',
        headers: { ...TEST_AUTH, 'content-type': 'application/json', 'a2a-version': '1.0' },
        body: JSON.stringify({ message: message('another') }),
      });
      expect(rest.status).toBe(503);
      expect(rest.headers.get('retry-after')).toBe('5');
      const body = (await rest.json()) as any;
      expect(body.error.status).toBe('UNAVAILABLE');
      expect(body.error.details[0].reason).toBe('TASK_STORE_FULL');
      // gRPC: UNAVAILABLE (14), reason TASK_STORE_FULL.
      client = rawClient(grpcAddressOf(n.node.card())!);
      const g = await unary(
        client,
        'SendMessage',
        encodeMessage(A2A_SCHEMA, 'lf.a2a.v1.SendMessageRequest', { message: message('grpc') }),
        { 'a2a-version': '1.0', authorization: `Bearer ${TEST_TOKEN}` },
      );
      expect([g.code, g.reason, g.domain]).toEqual([14, 'TASK_STORE_FULL', 'lume-a2a']);
      // Streaming sends are refused the same way.
      const stream = await rpc(n.url, 'SendStreamingMessage', { message: message('stream') });
      expect(stream.error?.data?.[0]?.reason).toBe('TASK_STORE_FULL');

      // Nothing was stored: the store, the listing and (on the task log) the segments hold the bound.
      expect(await n.node.store.count()).toBe(BOUND);
      const listed = (await rpc(n.url, 'ListTasks', { pageSize: 100 })).result;
      expect(listed.totalSize).toBe(BOUND);
      if (backend.name === 'the task log')
        expect(recordCount(join(n.dataDir, 'bound', 'tasks'))).toBe(BOUND);

      // The node keeps serving: reading and continuing an existing task work.
      expect((await rpc(n.url, 'GetTask', { id: held[0] })).result.status.state).toBe(
        'TASK_STATE_WORKING',
      );
      const answered = await send(n.url, 'the first', { taskId: asked[0] });
      expect(answered.result.task.status.state).toBe('TASK_STATE_COMPLETED');

      // One finished task over the retention bound: retention deletes it and a new task fits.
      await n.node.store.retain();
      expect(await n.node.store.count()).toBe(MAX_STORED);
      const next = await send(n.url, 'ask');
      expect(next.result.task.status.state).toBe('TASK_STATE_INPUT_REQUIRED');
      expect((await send(n.url, 'another')).error.data[0].reason).toBe('TASK_STORE_FULL');

      // Every held task finishes: retention makes room for as many new tasks as the bound allows.
      await letGo();
      await n.node.store.flush();
      await n.node.store.retain();
      expect(await n.node.store.count()).toBe(MAX_STORED);
      for (let i = 0; i < 2 * BOUND; i++) {
        const fresh = await send(n.url, 'plain');
        expect(fresh.result.task.status.state).toBe('TASK_STATE_COMPLETED');
      }
      await n.node.store.retain();
      expect(await n.node.store.count()).toBe(MAX_STORED);
    } finally {
      client?.close();
      void letGo();
      await n.dispose();
    }
  });

  test('concurrent sends at the bound: exactly the room left is taken, the rest refused', async () => {
    const { agent, letGo } = holdingAgent();
    const n = await startNode(agentNode('bound', agent), {
      ...(await backend.options()),
      limits: { taskMaxStored: MAX_STORED },
    });
    try {
      const answers = await Promise.all(
        Array.from({ length: BOUND + 15 }, () => send(n.url, 'hold')),
      );
      const accepted = answers.filter((a) => a.result);
      const refused = answers.filter((a) => a.error?.data?.[0]?.reason === 'TASK_STORE_FULL');
      expect([accepted.length, refused.length]).toEqual([BOUND, 15]);
      await n.node.store.flush();
      expect(await n.node.store.count()).toBe(BOUND);
    } finally {
      void letGo();
      await n.dispose();
    }
  });
});

/** Each task's newest line in the task log's segments (a deleted task's none): its bytes. */
function newestLines(dir: string): Map<string, number> {
  const newest = new Map<string, number>();
  const segments = join(dir, 'segments');
  for (const f of readdirSync(segments).sort())
    for (const line of readFileSync(join(segments, f), 'utf8').trimEnd().split('\n')) {
      if (!line) continue;
      const { id, op } = JSON.parse(line) as { id: string; op: string };
      if (op === 'put') newest.set(id, Buffer.byteLength(line) + 1);
      else newest.delete(id);
    }
  return newest;
}

/** Bytes of the tasks' newest records (what TASK_MAX_BYTES bounds). */
const recordBytes = (dir: string) => [...newestLines(dir).values()].reduce((a, b) => a + b, 0);
const recordCount = (dir: string) => newestLines(dir).size;

/** A store with a byte bound, and the bytes it holds as that store measures them. */
const byteBackends: {
  name: string;
  open(): Promise<{ options: Partial<NodeOptions>; bytes(dataDir: string): Promise<number> }>;
}[] = [
  {
    name: 'the task log',
    open: async () => ({
      options: { dataDir: tempDir() },
      bytes: async (dataDir) => recordBytes(join(dataDir, 'bytes', 'tasks')),
    }),
  },
  {
    name: 'PostgreSQL',
    async open() {
      const url = await pg.createDatabase(`bytes_${++databases}`);
      return {
        options: { dataDir: tempDir(), tasksDatabaseUrl: url },
        async bytes() {
          const sql = new SQL(url, { max: 1 });
          try {
            const [row] = await sql.unsafe(
              `SELECT coalesce(sum(${ROW_BYTES}), 0) AS b FROM lume_a2a_tasks WHERE node = 'bytes'`,
            );
            return Number(row.b);
          } finally {
            await sql.close();
          }
        },
      };
    },
  },
];

describe.each(byteBackends)('the byte bound of the store on $name', (backend) => {
  const MAX_BYTES = 200_000;
  const big = 'x'.repeat(60_000);

  test('large finished tasks are deleted oldest first; the store stays near the bound and new tasks go on', async () => {
    const { agent } = holdingAgent();
    const b = await backend.open();
    const n = await startNode(agentNode('bytes', agent), {
      ...b.options,
      limits: { taskMaxBytes: MAX_BYTES },
    });
    try {
      const ids: string[] = [];
      for (let i = 0; i < 12; i++) {
        const r = await send(n.url, `big ${big}`);
        expect(r.result.task.status.state).toBe('TASK_STATE_COMPLETED');
        ids.push(r.result.task.id);
      }
      await n.node.store.flush();
      await n.node.store.retain();
      expect(await b.bytes(n.dataDir)).toBeLessThanOrEqual(MAX_BYTES);
      expect((await rpc(n.url, 'GetTask', { id: ids[0] })).error.code).toBe(-32001);
      expect((await rpc(n.url, 'GetTask', { id: ids[11] })).result.id).toBe(ids[11]);
    } finally {
      await n.dispose();
    }
  });

  test('large tasks in progress that fill it refuse a new task TASK_STORE_FULL; finished, they make room', async () => {
    const { agent, letGo } = holdingAgent();
    const b = await backend.open();
    const n = await startNode(agentNode('bytes', agent), {
      ...b.options,
      limits: { taskMaxBytes: MAX_BYTES },
    });
    try {
      for (let i = 0; i < 4; i++)
        expect((await send(n.url, `hold ${big}`)).result.task.status.state).toBe(
          'TASK_STATE_WORKING',
        );
      await n.node.store.flush();
      const refused = await send(n.url, 'small');
      expect([refused.error?.code, refused.error?.data?.[0]?.reason]).toEqual([
        -32000,
        'TASK_STORE_FULL',
      ]);
      expect(await n.node.store.count()).toBe(4);
      await letGo();
      await n.node.store.flush();
      await n.node.store.retain();
      expect((await send(n.url, 'small')).result.task.status.state).toBe('TASK_STATE_COMPLETED');
    } finally {
      void letGo();
      await n.dispose();
    }
  });
});
