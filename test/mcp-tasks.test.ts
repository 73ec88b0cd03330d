/**
 * MCP's tasks extension in lib/mcp (lib/mcp/tasks.ts, lib/mcp/task-methods.ts): the task table's
 * bounds (per principal, per process, the TTL) and its owner scoping, then the wire on a real
 * server (the conformance node's fixture through createMcpEndpoint, on port 0) under hostile
 * requests: another principal's task id, a huge or garbage id, a cancel of a finished task, more
 * tasks than the bound, the methods without the extension declared. Each answer is a coded
 * JSON-RPC error and the server goes on answering.
 */

import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import type { Principal } from '../lib/auth/principal.ts';
import { createMcpEndpoint, type McpEndpoint } from '../lib/mcp/endpoint.ts';
import { MCP_LIMITS } from '../lib/mcp/limits.ts';
import type { ToolResult } from '../lib/mcp/protocol.ts';
import { createTaskTable, TASKS_EXTENSION, type TaskWork } from '../lib/mcp/tasks.ts';
import conformance from '../node/conformance.ts';

setDefaultTimeout(20_000); // per file (Bun scopes it so): real servers are slow on a busy machine

const LIMITS = { ...MCP_LIMITS, tasks: 5, tasksPerPrincipal: 2, taskTtlMs: 60_000 };
const done: TaskWork = async () => ({ content: [{ type: 'text', text: 'done' }] });
/** Work that runs until its task is cancelled or expires. */
const forever: TaskWork = (run) =>
  new Promise<ToolResult>((resolve) =>
    run.signal.addEventListener('abort', () => resolve({ content: [] }), { once: true }),
  );
/** Resolves once the task of `id` is finished (its work settles on the next turns). */
async function settled(get: () => { status: string } | undefined) {
  for (let i = 0; i < 100 && get()?.status === 'working'; i++) await Promise.resolve();
}

describe('the task table', () => {
  test('a principal keeps at most tasksPerPrincipal unfinished tasks; a finished one makes room and is gone', async () => {
    const table = createTaskTable(LIMITS);
    const a = table.start('alice', done, {});
    const b = table.start('alice', forever, {});
    if (!a.ok || !b.ok) throw new Error('not started');
    await settled(() => table.get('alice', a.result.taskId));
    expect(table.get('alice', a.result.taskId)?.status).toBe('completed');
    // Full: the finished task goes to make room, the unfinished one stays.
    const c = table.start('alice', forever, {});
    expect(c.ok).toBe(true);
    expect(table.get('alice', a.result.taskId)).toBeUndefined();
    expect(table.get('alice', b.result.taskId)?.status).toBe('working');
    const d = table.start('alice', forever, {});
    expect(d.ok ? 'started' : d.error.code).toBe('MCP_TOO_MANY_TASKS');
    // Another principal is not held back by alice's.
    expect(table.start('bob', forever, {}).ok).toBe(true);
    table.close();
    expect(table.size()).toBe(0);
  });

  test('the process keeps at most `tasks`; past it MCP_TASKS_FULL, nothing changed', () => {
    const table = createTaskTable(LIMITS);
    for (const who of ['a', 'b', 'c', 'd', 'e'])
      expect(table.start(who, forever, {}).ok).toBe(true);
    const more = table.start('f', forever, {});
    expect(more.ok ? 'started' : more.error.code).toBe('MCP_TASKS_FULL');
    expect(table.size()).toBe(5);
    table.close();
  });

  test('a task is kept for its TTL, then it is gone and its work aborted', async () => {
    let at = 1_000;
    const table = createTaskTable(LIMITS, () => at);
    let aborted = false;
    const t = table.start(
      'alice',
      (run) => {
        run.signal.addEventListener('abort', () => (aborted = true));
        return forever(run);
      },
      {},
    );
    if (!t.ok) throw new Error('not started');
    await Promise.resolve(); // the work starts on the next turn
    await Promise.resolve();
    expect(t.result.ttlMs).toBe(60_000);
    at += 59_999;
    expect(table.get('alice', t.result.taskId)?.status).toBe('working');
    at += 1;
    expect(table.get('alice', t.result.taskId)).toBeUndefined();
    expect(aborted).toBe(true);
    table.close();
  });

  test("another principal's task is unknown to it: no read, no update, no cancel", () => {
    const table = createTaskTable(LIMITS);
    const t = table.start('alice', forever, {});
    if (!t.ok) throw new Error('not started');
    const id = t.result.taskId;
    expect(table.get('bob', id)).toBeUndefined();
    expect(table.update('bob', id, {})).toBe(false);
    expect(table.cancel('bob', id)).toBe(false);
    expect(table.get('alice', id)?.status).toBe('working');
    table.close();
  });

  test('input: the task waits on every request, partial answers keep it waiting, unknown keys are ignored', async () => {
    const table = createTaskTable(LIMITS);
    const ask = { method: 'elicitation/create', params: { message: 'x', requestedSchema: {} } };
    const t = table.start(
      'alice',
      async (run) => {
        const got = await run.gather({ one: ask, two: ask });
        if ('resultType' in got || !got.ok) return { content: [], isError: true };
        return { content: [{ type: 'text', text: JSON.stringify(got.result) }] };
      },
      { elicitation: {} },
    );
    if (!t.ok) throw new Error('not started');
    const id = t.result.taskId;
    await settled(() => table.get('alice', id));
    const waiting = table.get('alice', id)!;
    expect(waiting.status).toBe('input_required');
    const [k1, k2] = Object.keys(waiting.inputRequests ?? {});
    table.update('alice', id, { [k1!]: { action: 'accept', content: { n: 1 } }, nope: {} });
    expect(Object.keys(table.get('alice', id)!.inputRequests ?? {})).toEqual([k2!]);
    table.update('alice', id, { [k2!]: { action: 'accept', content: { n: 2 } } });
    for (let i = 0; i < 100 && table.get('alice', id)!.status !== 'completed'; i++)
      await Promise.resolve();
    const end = table.get('alice', id)!;
    expect(end.status).toBe('completed');
    const text = (end.result as unknown as ToolResult).content[0] as { text: string };
    expect(JSON.parse(text.text)).toEqual({
      one: { action: 'accept', content: { n: 1 } },
      two: { action: 'accept', content: { n: 2 } },
    });
    table.close();
  });
});

// The wire: the conformance fixture's tools on a real server, two principals by their token.
let endpoint: McpEndpoint;
let server: ReturnType<typeof Bun.serve>;
let url: string;
const principal = (req: Request): Principal =>
  req.headers.get('authorization') === 'Bearer bob'
    ? { kind: 'token', name: 'bob' }
    : { kind: 'token', name: 'alice' };

beforeAll(() => {
  endpoint = createMcpEndpoint({
    definition: { ...conformance().mcp!, tasks: true },
    limits: { tasksPerPrincipal: 3 },
    allowedOrigin: () => false,
    anonymousAllowed: false,
  });
  server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch: (req) => endpoint.fetch(req, principal(req), '127.0.0.1'),
  });
  url = `http://127.0.0.1:${server.port}/mcp`;
});
afterAll(async () => {
  await endpoint.close();
  server.stop(true);
});

let seq = 0;
/** One stateless request as `who`, the extension declared unless `plain`. */
async function rpc(
  method: string,
  params: Record<string, unknown>,
  o: { who?: string; plain?: boolean } = {},
): Promise<{ status: number; body: Record<string, any> }> {
  const name = (params.name ?? params.taskId) as string | undefined;
  const res = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      authorization: `Bearer ${o.who ?? 'alice'}`,
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': method,
      ...(name === undefined ? {} : { 'mcp-name': name }),
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: ++seq,
      method,
      params: {
        ...params,
        _meta: {
          'io.modelcontextprotocol/protocolVersion': '2026-07-28',
          'io.modelcontextprotocol/clientCapabilities': o.plain
            ? {}
            : { extensions: { [TASKS_EXTENSION]: {} } },
        },
      },
    }),
  });
  return { status: res.status, body: (await res.json()) as Record<string, any> };
}

const startSlow = async (seconds: number, who = 'alice') =>
  (await rpc('tools/call', { name: 'slow_compute', arguments: { seconds } }, { who })).body.result
    .taskId as string;

describe('the tasks extension on the wire, under hostile requests', () => {
  test("another principal's task id answers exactly as an id that never was", async () => {
    const id = await startSlow(60);
    const stranger = await rpc('tasks/get', { taskId: id }, { who: 'bob' });
    const never = await rpc('tasks/get', { taskId: crypto.randomUUID() }, { who: 'bob' });
    expect(stranger.body.error).toEqual(never.body.error);
    expect(stranger.body.error).toMatchObject({
      code: -32602,
      message: 'Unknown task',
      data: { code: 'MCP_UNKNOWN_TASK' },
    });
    expect(JSON.stringify(stranger.body)).not.toContain(id);
    for (const m of ['tasks/cancel', 'tasks/update'])
      expect(
        (await rpc(m, { taskId: id, inputResponses: {} }, { who: 'bob' })).body.error.code,
      ).toBe(-32602);
    // The owner's task is untouched by the stranger's cancel.
    expect((await rpc('tasks/get', { taskId: id })).body.result.status).toBe('working');
    await rpc('tasks/cancel', { taskId: id });
  });

  test('a huge or garbage task id is a coded -32602, and the server goes on', async () => {
    const huge = await rpc('tasks/get', { taskId: 'x'.repeat(8_000) });
    expect(huge.body.error).toMatchObject({ code: -32602, data: { code: 'MCP_BAD_PARAMS' } });
    for (const garbage of ['../../etc/passwd', '%00', 'null', '*'])
      expect((await rpc('tasks/get', { taskId: garbage })).body.error.data.code).toBe(
        'MCP_UNKNOWN_TASK',
      );
    const raw = await fetch(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        authorization: 'Bearer alice',
        'mcp-protocol-version': '2026-07-28',
        'mcp-method': 'tasks/get',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tasks/get',
        params: {
          taskId: 42,
          _meta: {
            'io.modelcontextprotocol/protocolVersion': '2026-07-28',
            'io.modelcontextprotocol/clientCapabilities': { extensions: { [TASKS_EXTENSION]: {} } },
          },
        },
      }),
    });
    expect(raw.status).toBe(400);
    expect(((await raw.json()) as any).error.code).toBe(-32020);
    expect((await rpc('tools/call', { name: 'greet', arguments: { name: 'x' } })).status).toBe(200);
  });

  test('a cancel of a finished task is the same empty ack, and the task stays completed', async () => {
    const id = await startSlow(0);
    let got = (await rpc('tasks/get', { taskId: id })).body.result;
    for (let i = 0; i < 50 && got.status === 'working'; i++)
      got = (await rpc('tasks/get', { taskId: id })).body.result;
    expect(got.status).toBe('completed');
    const ack = await rpc('tasks/cancel', { taskId: id });
    expect(ack.body.result).toMatchObject({ resultType: 'complete' });
    expect(ack.body.result.status).toBeUndefined();
    const after = (await rpc('tasks/get', { taskId: id })).body.result;
    expect(after.status).toBe('completed');
    expect(after.result.content[0].text).toContain('Computed');
  });

  test('more unfinished tasks than the bound: MCP_TOO_MANY_TASKS; a cancelled one makes room', async () => {
    const ids = [
      await startSlow(60, 'bob'),
      await startSlow(60, 'bob'),
      await startSlow(60, 'bob'),
    ];
    const over = await rpc(
      'tools/call',
      { name: 'slow_compute', arguments: { seconds: 60 } },
      { who: 'bob' },
    );
    expect(over.body.error).toMatchObject({ code: -32600, data: { code: 'MCP_TOO_MANY_TASKS' } });
    expect(over.body.error.message).toContain('at most 3');
    await rpc('tasks/cancel', { taskId: ids[0]! }, { who: 'bob' });
    expect(await startSlow(60, 'bob')).toBeString();
    expect((await rpc('tasks/get', { taskId: ids[0]! }, { who: 'bob' })).body.error.code).toBe(
      -32602,
    );
    for (const id of ids.slice(1)) await rpc('tasks/cancel', { taskId: id }, { who: 'bob' });
  });

  test('without the extension declared: tasks/* is -32021, a task-only tool is -32021, others answer inline', async () => {
    for (const m of ['tasks/get', 'tasks/update', 'tasks/cancel']) {
      const r = await rpc(m, { taskId: 'any', inputResponses: {} }, { plain: true });
      expect(r.body.error).toMatchObject({
        code: -32021,
        data: { requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } },
      });
    }
    const required = await rpc(
      'tools/call',
      { name: 'failing_job', arguments: {} },
      { plain: true },
    );
    expect(required.body.error.code).toBe(-32021);
    const inline = await rpc(
      'tools/call',
      { name: 'slow_compute', arguments: { seconds: 0 } },
      { plain: true },
    );
    expect(inline.body.result.resultType).toBe('complete');
    expect(inline.body.result.taskId).toBeUndefined();
    for (const m of ['tasks/list', 'tasks/result'])
      expect((await rpc(m, { taskId: 'any' })).body.error.code).toBe(-32601);
  });

  test('task notifications asked on subscriptions/listen without the extension declared: -32021', async () => {
    const r = await rpc(
      'subscriptions/listen',
      { notifications: { taskIds: ['x'] } },
      { plain: true },
    );
    expect(r.status).toBe(400);
    expect(r.body.error).toMatchObject({
      code: -32021,
      data: { requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } },
    });
  });
});
