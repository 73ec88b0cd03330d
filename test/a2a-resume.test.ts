/**
 * Streams resume (A2A 1.1 generation, the task's event log): every SSE event carries
 * `id: <taskId>:<generation>`, and a subscribe naming the last one seen (`Last-Event-ID`, or
 * `lastGeneration` in the params, the REST query or gRPC metadata) gets exactly the events after
 * it, then the live ones. Through a proxy that cuts the connection at random points of a stream
 * of ~300 events, each client sees every generation exactly once and in order: the kit's own
 * client (it resumes by itself), raw JSON-RPC SSE with Last-Event-ID, raw HTTP+JSON SSE with
 * `?lastGeneration=`, and @grpc/grpc-js with `a2a-last-generation` metadata. Hostile cursors get
 * coded answers; a cursor older than the kept log gets the Task first; the 1.0 form stays exact.
 */

import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import type * as grpc from '@grpc/grpc-js';
import type { Agent } from '../lib/a2a/agent.ts';
import { createA2AClient } from '../lib/a2a/client/client.ts';
import { decodeMessage } from '../lib/a2a/grpc/decode.ts';
import { encodeMessage } from '../lib/a2a/grpc/encode.ts';
import { A2A_SCHEMA } from '../lib/a2a/proto/schema.ts';
import { startCuttingProxy, type CuttingProxy } from './support/cutting-proxy.ts';
import { grpcAddressOf, rawClient, SERVICE } from './support/grpc.ts';
import {
  agentNode,
  msgV1,
  sseEvents,
  startNode,
  TEST_AUTH,
  TEST_TOKEN,
  type TestNode,
} from './support/node.ts';

setDefaultTimeout(60_000); // per file (Bun scopes it so): hundreds of events through a cutting proxy

const CHUNKS = 300;
/** Generations: the task 1, working 2, CHUNKS artifact chunks, completed: 1..LAST. */
const LAST = CHUNKS + 3;
const ALL = Array.from({ length: LAST }, (_, i) => i + 1);

/** Counts to CHUNKS in artifact chunks, letting the event loop turn every few, then completes. */
const counter: Agent = {
  async handle(ctx) {
    if (ctx.text.startsWith('ask')) return ctx.requireInput('and then?');
    ctx.working();
    for (let i = 0; i < CHUNKS; i++) {
      // Three artifacts of 100 chunks (a client reads at most 256 parts per artifact).
      ctx.artifact(
        { artifactId: `count-${Math.floor(i / 100)}`, parts: [{ text: `${i} ` }] },
        { append: i % 100 > 0, lastChunk: i % 100 === 99 },
      );
      if (i % 8 === 0) await new Promise((r) => setImmediate(r));
    }
    ctx.complete();
  },
};

let node: TestNode;
let small: TestNode;
beforeAll(async () => {
  node = await startNode(agentNode('resume', counter), { limits: { taskEventLogEvents: 1000 } });
  small = await startNode(agentNode('resume-small', counter), {
    limits: { taskEventLogEvents: 10 },
  });
});
afterAll(async () => {
  await node?.dispose();
  await small?.dispose();
});

const proxies: CuttingProxy[] = [];
afterAll(() => {
  for (const p of proxies) p.stop();
});
async function proxyTo(
  port: number,
  seed: number,
  firstRead?: () => boolean,
): Promise<CuttingProxy> {
  const p = await startCuttingProxy({
    target: { host: '127.0.0.1', port },
    window: [300, 6000],
    first: 4000,
    ...(firstRead ? { firstRead } : {}),
    cuts: 12,
    seed,
  });
  proxies.push(p);
  return p;
}
const portOf = (url: string) => Number(new URL(url).port);

/** Reads one SSE response: each frame's id and JSON, until the body ends or breaks. */
async function readSse(res: Response, seen: (id: string | undefined, doc: any) => void) {
  try {
    for await (const { id, data } of sseEvents(res)) seen(id, data);
  } catch {
    // the proxy cut the connection: the caller resumes
  }
}

const generationOfId = (id: string | undefined) => Number(id!.slice(id!.lastIndexOf(':') + 1));

/** Whether a 1.0 StreamResponse (JSON or decoded gRPC) ends the stream. */
function ends(doc: any): boolean {
  const state = doc.statusUpdate?.status?.state ?? doc.task?.status?.state;
  return state === 'TASK_STATE_COMPLETED' || state === 'TASK_STATE_FAILED';
}

/**
 * A raw SSE client that resumes: the first request streams the message, each later one
 * subscribes with the cursor in the form `resumeRequest` makes. Answers the generations seen.
 */
async function rawResuming(
  first: () => Promise<Response>,
  resumeRequest: (taskId: string, generation: number, attempt: number) => Promise<Response>,
): Promise<{ generations: number[]; frames: any[] }> {
  const generations: number[] = [];
  const frames: any[] = [];
  let cursor: string | undefined;
  let done = false;
  for (let attempt = 0; !done && attempt < 40; attempt++) {
    const res = cursor
      ? await resumeRequest(
          cursor.slice(0, cursor.lastIndexOf(':')),
          generationOfId(cursor),
          attempt,
        ).catch(() => undefined)
      : await first();
    if (!res) continue;
    await readSse(res, (id, doc) => {
      frames.push(doc);
      if (id) {
        generations.push(generationOfId(id));
        cursor = id;
      }
      if (ends(doc.result ?? doc)) done = true;
    });
  }
  return { generations, frames };
}

describe('a stream cut at random points resumes with each generation exactly once', () => {
  test("JSON-RPC, the kit's own client (it resumes by itself)", async () => {
    const seen: number[] = [];
    // The first stream is cut only once the client has read its first event (its cursor).
    const proxy = await proxyTo(portOf(node.url), 1, () => seen.length > 0);
    const client = createA2AClient({ url: proxy.url, headers: TEST_AUTH });
    let last: any;
    for await (const item of client.stream('count', { resume: { attempts: 20, backoffMs: 10 } })) {
      last = item;
      if (item.kind === 'task') seen.push(item.task.generation!);
      else if (item.kind === 'status' || item.kind === 'artifact') seen.push(item.generation!);
    }
    expect(last.kind === 'status' && last.status.state, JSON.stringify(last)).toBe('completed');
    expect(proxy.cut).toBeGreaterThan(3);
    expect(seen).toEqual(ALL);
    console.log(
      `JSON-RPC (kit client): ${proxy.cut} cuts, generations ${seen[0]}..${seen.at(-1)}, ${seen.length} events, each once`,
    );
  });

  test('JSON-RPC, raw SSE with Last-Event-ID', async () => {
    const proxy = await proxyTo(portOf(node.url), 2);
    const post = (method: string, params: unknown, headers: Record<string, string> = {}) =>
      fetch(`${proxy.url}/a2a`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'A2A-Version': '1.0',
          ...TEST_AUTH,
          ...headers,
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
      });
    const { generations, frames } = await rawResuming(
      () => post('SendStreamingMessage', { message: msgV1('count') }),
      (taskId, g) => post('SubscribeToTask', { id: taskId }, { 'Last-Event-ID': `${taskId}:${g}` }),
    );
    expect(proxy.cut).toBeGreaterThan(3);
    expect(generations).toEqual(ALL);
    // A 1.0 caller's frames are the 1.0 form exactly: the position is in the SSE id only.
    expect(JSON.stringify(frames)).not.toContain('generation');
    console.log(
      `JSON-RPC (raw Last-Event-ID): ${proxy.cut} cuts, generations ${generations[0]}..${generations.at(-1)}, ${generations.length} events, each once`,
    );
  });

  test('HTTP+JSON, raw SSE with ?lastGeneration= and Last-Event-ID in turn', async () => {
    const proxy = await proxyTo(portOf(node.url), 3);
    const headers = { 'A2A-Version': '1.1', ...TEST_AUTH };
    const { generations, frames } = await rawResuming(
      () =>
        fetch(`${proxy.url}/message:stream`, {
          method: 'POST',
          headers: { ...headers, 'content-type': 'application/json' },
          body: JSON.stringify({ message: msgV1('count') }),
        }),
      (taskId, g, attempt) =>
        attempt % 2
          ? fetch(`${proxy.url}/tasks/${taskId}:subscribe?lastGeneration=${g}`, { headers })
          : fetch(`${proxy.url}/tasks/${taskId}:subscribe`, {
              headers: { ...headers, 'Last-Event-ID': `${taskId}:${g}` },
            }),
    );
    expect(proxy.cut).toBeGreaterThan(3);
    expect(generations).toEqual(ALL);
    // A 1.1 caller's frames carry the same generation as their ids.
    const inBody = frames.map((f) =>
      Number((f.task ?? f.statusUpdate ?? f.artifactUpdate).generation),
    );
    expect(inBody).toEqual(ALL);
    console.log(
      `HTTP+JSON (raw ?lastGeneration / Last-Event-ID): ${proxy.cut} cuts, generations ${generations[0]}..${generations.at(-1)}, ${generations.length} events, each once`,
    );
  });

  test('gRPC, @grpc/grpc-js with a2a-last-generation metadata', async () => {
    const address = grpcAddressOf(node.node.card())!;
    const proxy = await proxyTo(Number(address.split(':').at(-1)), 4);
    const client = rawClient(`127.0.0.1:${proxy.port}`);
    const generations: number[] = [];
    let taskId: string | undefined;
    let done = false;
    try {
      for (let attempt = 0; !done && attempt < 40; attempt++) {
        const [method, body, extra]: [string, Uint8Array, Record<string, string>] = taskId
          ? [
              'SubscribeToTask',
              encodeMessage(A2A_SCHEMA, 'lf.a2a.v1.SubscribeToTaskRequest', { id: taskId }),
              { 'a2a-last-generation': String(generations.at(-1)) },
            ]
          : [
              'SendStreamingMessage',
              encodeMessage(A2A_SCHEMA, 'lf.a2a.v1.SendMessageRequest', {
                message: msgV1('count'),
              }),
              {},
            ];
        await grpcStream(client, method, body, extra, (doc) => {
          const e = doc.task ?? doc.statusUpdate ?? doc.artifactUpdate;
          taskId ??= doc.task?.id ?? e.taskId;
          generations.push(Number(e.generation));
          if (ends(doc)) done = true;
        });
      }
    } finally {
      client.close();
    }
    expect(proxy.cut).toBeGreaterThan(3);
    expect(generations).toEqual(ALL);
    console.log(
      `gRPC (grpc-js, a2a-last-generation): ${proxy.cut} cuts, generations ${generations[0]}..${generations.at(-1)}, ${generations.length} events, each once`,
    );
  });
});

/** One server stream read until it ends or breaks; each message decoded as a StreamResponse. */
function grpcStream(
  client: grpc.Client,
  method: string,
  body: Uint8Array,
  extra: Record<string, string>,
  onEvent: (doc: any) => void,
): Promise<void> {
  const { Metadata } = require('@grpc/grpc-js') as typeof grpc;
  const md = new Metadata();
  md.set('a2a-version', '1.0');
  md.set('authorization', `Bearer ${TEST_TOKEN}`);
  for (const [k, v] of Object.entries(extra)) md.set(k, v);
  return new Promise((resolve) => {
    const call = client.makeServerStreamRequest(
      `${SERVICE}/${method}`,
      (b: Buffer) => b,
      (b: Buffer) => b,
      Buffer.from(body),
      md,
    );
    call.on('data', (m: Buffer) => {
      const r = decodeMessage(A2A_SCHEMA, 'lf.a2a.v1.StreamResponse', new Uint8Array(m));
      if (r.ok) onEvent(r.result);
    });
    call.on('error', () => resolve());
    call.on('status', () => resolve());
  });
}

describe('cursors', () => {
  const post = (
    url: string,
    method: string,
    params: unknown,
    headers: Record<string, string> = {},
    version = '1.1',
  ) =>
    fetch(`${url}/a2a`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'A2A-Version': version,
        ...TEST_AUTH,
        ...headers,
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
    });
  /** A stream's frames (ids and JSON) read to its end, or the JSON-RPC refusal. */
  async function frames(res: Response): Promise<{ ids: string[]; docs: any[] } | { error: any }> {
    if (!(res.headers.get('content-type') ?? '').startsWith('text/event-stream'))
      return { error: ((await res.json()) as any).error };
    const ids: string[] = [];
    const docs: any[] = [];
    await readSse(res, (id, doc) => {
      if (id) ids.push(id);
      docs.push(doc.result ?? doc);
    });
    return { ids, docs };
  }
  const reasonOf = (e: any) => e.data?.find((d: any) => d.reason)?.reason;
  let asked: string;
  let other: string;
  beforeAll(async () => {
    const ask = await post(node.url, 'SendMessage', { message: msgV1('ask') });
    asked = ((await ask.json()) as any).result.task.id;
    const again = await post(node.url, 'SendMessage', { message: msgV1('ask') });
    other = ((await again.json()) as any).result.task.id;
  });

  test('hostile cursors get coded answers and tell nothing', async () => {
    const sub = (headers: Record<string, string>, params: Record<string, unknown> = {}) =>
      post(node.url, 'SubscribeToTask', { id: asked, ...params }, headers).then(frames);
    const cases: [string, Record<string, string>, Record<string, unknown>, number, string?][] = [
      ['another task', { 'Last-Event-ID': `${other}:1` }, {}, -32001, 'TASK_NOT_FOUND'],
      ['the future', { 'Last-Event-ID': `${asked}:999` }, {}, -32602, 'EVENT_CURSOR_AHEAD'],
      ['not a cursor', { 'Last-Event-ID': 'garbage' }, {}, -32602, 'EVENT_CURSOR_INVALID'],
      ['a negative', { 'Last-Event-ID': `${asked}:-1` }, {}, -32602, 'EVENT_CURSOR_INVALID'],
      [
        'enormous',
        { 'Last-Event-ID': `${asked}:${'9'.repeat(9000)}` },
        {},
        -32602,
        'EVENT_CURSOR_INVALID',
      ],
      ['a bad parameter', {}, { lastGeneration: 'x' }, -32602, 'EVENT_CURSOR_INVALID'],
      [
        'disagreeing',
        { 'Last-Event-ID': `${asked}:2` },
        { lastGeneration: '3' },
        -32602,
        'EVENT_CURSOR_INVALID',
      ],
    ];
    for (const [name, headers, params, code, reason] of cases) {
      const out = await sub(headers, params);
      expect('error' in out && [name, out.error.code, reasonOf(out.error)]).toEqual([
        name,
        code,
        reason,
      ]);
    }
    // Another task's cursor names only the task it named, never the one asked for.
    const foreign = (await sub({ 'Last-Event-ID': `${other}:1` })) as { error: any };
    expect(foreign.error.message).not.toContain(asked);
    // Another caller gets the task "not found", cursor or not.
    const anonymous = await fetch(`${node.url}/a2a`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'A2A-Version': '1.1',
        'Last-Event-ID': `${asked}:1`,
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'SubscribeToTask',
        params: { id: asked },
      }),
    });
    expect(((await anonymous.json()) as any).error.code).toBe(-32001);
    // gRPC: the same refusal for a future cursor in metadata.
    const grpcClient = rawClient(grpcAddressOf(node.node.card())!);
    let code: number | undefined;
    await new Promise<void>((done) => {
      const { Metadata } = require('@grpc/grpc-js') as typeof grpc;
      const md = new Metadata();
      md.set('a2a-version', '1.0');
      md.set('authorization', `Bearer ${TEST_TOKEN}`);
      md.set('a2a-last-generation', '999');
      const call = grpcClient.makeServerStreamRequest(
        `${SERVICE}/SubscribeToTask`,
        (b: Buffer) => b,
        (b: Buffer) => b,
        Buffer.from(encodeMessage(A2A_SCHEMA, 'lf.a2a.v1.SubscribeToTaskRequest', { id: asked })),
        md,
      );
      call.on('data', () => {});
      call.on('error', (e: grpc.ServiceError) => {
        code = e.code;
        done();
      });
      call.on('status', () => done());
    });
    grpcClient.close();
    expect(code).toBe(11); // OUT_OF_RANGE
  });

  test('a cursor before the kept log gets the Task first; within it, exactly the rest; at the end, nothing', async () => {
    const sent = await post(small.url, 'SendMessage', { message: msgV1('count') });
    const id = ((await sent.json()) as any).result.task.id;
    const old = await frames(await post(small.url, 'SubscribeToTask', { id, lastGeneration: '5' }));
    if ('error' in old) throw new Error(JSON.stringify(old.error));
    expect(old.ids).toEqual([`${id}:${LAST}`]);
    expect(old.docs[0].task.generation).toBe(String(LAST));
    const recent = await frames(
      await post(small.url, 'SubscribeToTask', { id }, { 'Last-Event-ID': `${id}:${LAST - 3}` }),
    );
    if ('error' in recent) throw new Error(JSON.stringify(recent.error));
    expect(recent.ids).toEqual([LAST - 2, LAST - 1, LAST].map((g) => `${id}:${g}`));
    expect(recent.docs.at(-1).statusUpdate.status.state).toBe('TASK_STATE_COMPLETED');
    const none = await frames(
      await post(small.url, 'SubscribeToTask', { id, lastGeneration: LAST }),
    );
    expect(none).toEqual({ ids: [], docs: [] });
  });

  test('a client reconnecting in a tight loop holds no more than the per-principal stream cap', async () => {
    for (let i = 0; i < 60; i++) {
      const ac = new AbortController();
      const res = await post(
        node.url,
        'SubscribeToTask',
        { id: asked },
        { 'Last-Event-ID': `${asked}:1` },
      );
      ac.abort();
      await res.body?.cancel();
    }
    // Streams the loop left are ended when their sockets close: a new one is still served.
    const held: Response[] = [];
    let refused: any;
    for (let i = 0; i < 40 && !refused; i++) {
      const res = await post(node.url, 'SubscribeToTask', { id: asked });
      if (res.status === 503) refused = await res.json();
      else held.push(res);
    }
    for (const r of held) await r.body?.cancel();
    expect(refused?.error?.code).toBe('PRINCIPAL_STREAMS_FULL');
    expect(held.length).toBeLessThanOrEqual(16);
  });
});
