/**
 * The hub's `/mcp` and MCP's tasks extension, under the official v2 client
 * (`@modelcontextprotocol/client` 2.4.0): the hub advertises the extension in `server/discover`;
 * a fleet capability that changes state runs as an MCP task for a client that declared the
 * extension, and its result is read with `tasks/get`; a 2025-11-25 client calls the same tool
 * and gets its result at once; `delegate` follows its hub task, whose input-required becomes the
 * MCP task's `input_required` (the reply continues the hub task; a cancel cancels it); the same
 * over the stdio relay; an A2A auth-required becomes an input request of its own kind.
 * The v2 client has no API for the extension (its `request` refuses `tasks/get` on 2026-07-28,
 * and `callTool` refuses a `resultType: "task"`), so the task methods go through the client's own
 * Streamable HTTP transport as raw JSON-RPC messages.
 */

import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { resolve } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import type { Task } from '../lib/a2a/types.ts';
import { newSecret } from '../lib/auth/secret.ts';
import { capability, defineNode } from '../lib/kit/node.ts';
import { A2A_STATE_META, A2A_TASK_META, interruption } from '../hub/mcp/task-follow.ts';
import { startFleet, type RunningFleet } from './support/fleet.ts';
import { TEST_AUTH, TEST_TOKEN } from './support/node.ts';

setDefaultTimeout(30_000); // per file (Bun scopes it so): real servers are slow on a busy machine

const TASKS = 'io.modelcontextprotocol/tasks';
const OTHER_TOKEN = newSecret();

/** Opened by the test: `brew.start` of `tea` works until then. */
const kettle = Promise.withResolvers<void>();

/** A node with a capability that changes state and, for tea, works until the test lets it end. */
const brewery = defineNode(() => ({
  name: 'brewery',
  description: 'A test node that brews',
  capabilities: [
    capability({
      id: 'brew.start',
      name: 'Brew',
      description: 'Brews a pot (tea takes as long as the test says)',
      tags: ['test'],
      keywords: ['brew'],
      readOnly: false,
      args: { kind: { type: 'string', description: 'What to brew', required: true } },
      run: async ({ kind }) => {
        if (kind === 'tea') await kettle.promise;
        return { brewed: kind };
      },
    }),
  ],
}));

let f: RunningFleet;
const closers: (() => Promise<unknown>)[] = [];
beforeAll(async () => {
  f = await startFleet([brewery()], { tokens: { other: OTHER_TOKEN } });
});
afterAll(async () => {
  for (const c of closers) await c().catch(() => {});
  await f.stop();
});

/** Raw JSON-RPC over the v2 client's own transport, the extension declared in each `_meta`. */
async function rawTransport(auth: Record<string, string> = TEST_AUTH) {
  const t = new StreamableHTTPClientTransport(new URL(`${f.hubUrl}/mcp`), {
    requestInit: { headers: auth },
  });
  const waiting = new Map<number, (m: Record<string, any>) => void>();
  t.onmessage = (m) => {
    const id = (m as { id?: number }).id;
    if (id !== undefined) waiting.get(id)?.(m as Record<string, any>);
  };
  await t.start();
  closers.push(() => t.close());
  let n = 0;
  return async (method: string, params: Record<string, unknown>): Promise<Record<string, any>> => {
    const id = ++n;
    const answered = new Promise<Record<string, any>>((resolve) => waiting.set(id, resolve));
    await t.send({
      jsonrpc: '2.0',
      id,
      method,
      params: {
        ...params,
        _meta: {
          'io.modelcontextprotocol/protocolVersion': '2026-07-28',
          'io.modelcontextprotocol/clientCapabilities': {
            elicitation: {},
            extensions: { [TASKS]: {} },
          },
        },
      },
    } as never);
    return answered;
  };
}

/** The hub task an input request of a delegation names. */
const hubTaskOf = (view: Record<string, any>): string =>
  (Object.values(view.inputRequests)[0] as any).params._meta[A2A_TASK_META];

/** Reads the task until it leaves `working` (each read is a request to the hub; bounded). */
async function untilNot(rpc: Awaited<ReturnType<typeof rawTransport>>, taskId: string) {
  let r = (await rpc('tasks/get', { taskId })).result;
  for (let i = 0; i < 2_000 && r.status === 'working'; i++)
    r = (await rpc('tasks/get', { taskId })).result;
  return r;
}

describe('the tasks extension on the hub', () => {
  test('the v2 client sees the extension in server/discover', async () => {
    const c = new Client(
      { name: 'lume-tasks-test', version: '1.0.0' },
      { versionNegotiation: { mode: { pin: '2026-07-28' } } },
    );
    await c.connect(
      new StreamableHTTPClientTransport(new URL(`${f.hubUrl}/mcp`), {
        requestInit: { headers: TEST_AUTH },
      }),
    );
    closers.push(() => c.close());
    expect(c.getServerCapabilities()?.extensions?.[TASKS]).toEqual({});
    const tools = (await c.listTools()).tools.map((t) => t.name);
    expect(tools).toContain('brewery_start');
  });

  test('a fleet capability that changes state runs as a task; tasks/get reads its result', async () => {
    const rpc = await rawTransport();
    const made = await rpc('tools/call', {
      name: 'brewery_start',
      arguments: { kind: 'tea' },
    });
    expect(made.result).toMatchObject({ resultType: 'task', status: 'working' });
    expect(made.result.result).toBeUndefined();
    // While the work goes on, the task says so, with no result.
    const working = (await rpc('tasks/get', { taskId: made.result.taskId })).result;
    expect(working.status).toBe('working');
    expect(working.result).toBeUndefined();
    kettle.resolve();
    const end = await untilNot(rpc, made.result.taskId);
    expect(end.status).toBe('completed');
    expect(end.result.structuredContent).toMatchObject({ brewed: 'tea' });
    // Another principal does not see it.
    const other = await rawTransport({ Authorization: `Bearer ${OTHER_TOKEN}` });
    const stranger = await other('tasks/get', { taskId: made.result.taskId });
    expect(stranger.error).toMatchObject({ code: -32602, data: { code: 'MCP_UNKNOWN_TASK' } });
  });

  test('a 2025-11-25 client calls the same tool and gets its result at once', async () => {
    const c = new Client(
      { name: 'lume-tasks-legacy', version: '1.0.0' },
      { versionNegotiation: { mode: 'legacy' } },
    );
    await c.connect(
      new StreamableHTTPClientTransport(new URL(`${f.hubUrl}/mcp`), {
        requestInit: { headers: TEST_AUTH },
      }),
    );
    closers.push(() => c.close());
    const r = await c.callTool({ name: 'brewery_start', arguments: { kind: 'coffee' } });
    expect(r.isError).toBeFalsy();
    expect(r.structuredContent).toMatchObject({ brewed: 'coffee' });
  });

  test("delegate follows its hub task: its input-required is the MCP task's input_required, the reply continues it, cancel ends both", async () => {
    const rpc = await rawTransport();
    const made = await rpc('tools/call', { name: 'delegate', arguments: {} });
    expect(made.result.resultType).toBe('task');
    const waiting = await untilNot(rpc, made.result.taskId);
    expect(waiting.status).toBe('input_required');
    const [key, request] = Object.entries(waiting.inputRequests as Record<string, any>)[0]!;
    expect(key.startsWith('reply')).toBe(true);
    expect(request.method).toBe('elicitation/create');
    expect(request.params._meta[A2A_STATE_META]).toBe('TASK_STATE_INPUT_REQUIRED');
    expect(waiting.statusMessage).toContain('input-required');
    // The reply goes to the hub task as its next message and the delegation is tried: this fleet
    // has no executor, so the hub task is rejected, and the MCP task ends with that as a tool error.
    const ack = await rpc('tasks/update', {
      taskId: made.result.taskId,
      inputResponses: { [key]: { action: 'accept', content: { reply: 'Write a haiku' } } },
    });
    expect(ack.result).toEqual(expect.objectContaining({ resultType: 'complete' }));
    let end = (await rpc('tasks/get', { taskId: made.result.taskId })).result;
    for (let i = 0; i < 2_000 && !['completed', 'failed', 'cancelled'].includes(end.status); i++)
      end = (await rpc('tasks/get', { taskId: made.result.taskId })).result;
    expect(end.status).toBe('completed');
    expect(end.result.isError).toBe(true);
    expect(end.result.structuredContent.task.status.state).toBe('TASK_STATE_REJECTED');
    expect(JSON.stringify(end.result)).toContain('DELEGATE_UNKNOWN_EXECUTOR');
  });

  test('delegate cancelled while it waits for input: the MCP task is cancelled, the hub task too', async () => {
    const rpc = await rawTransport();
    const made = await rpc('tools/call', { name: 'delegate', arguments: {} });
    const waiting = await untilNot(rpc, made.result.taskId);
    expect(waiting.status).toBe('input_required');
    expect((await rpc('tasks/cancel', { taskId: made.result.taskId })).result).toEqual(
      expect.objectContaining({ resultType: 'complete' }),
    );
    expect((await rpc('tasks/get', { taskId: made.result.taskId })).result.status).toBe(
      'cancelled',
    );
    const hubTask = JSON.parse(
      (await rpc('tools/call', { name: 'get_task', arguments: { id: hubTaskOf(waiting) } })).result
        .content[0].text,
    );
    let state = hubTask.task.status.state;
    for (let i = 0; i < 2_000 && state !== 'TASK_STATE_CANCELED'; i++)
      state = JSON.parse(
        (await rpc('tools/call', { name: 'get_task', arguments: { id: hubTaskOf(waiting) } }))
          .result.content[0].text,
      ).task.status.state;
    expect(state).toBe('TASK_STATE_CANCELED');
  });
});

describe('the tasks extension over stdio (bun run mcp)', () => {
  test('a task made and read through the relay: the lines carry their task ids as Mcp-Name', async () => {
    const proc = Bun.spawn([process.execPath, resolve(import.meta.dir, '../hub/cli/mcp.ts')], {
      env: { ...process.env, LUME_HUB_URL: f.hubUrl, LUME_TOKEN: TEST_TOKEN },
      stdin: 'pipe',
      stdout: 'pipe',
      stderr: 'ignore',
    });
    closers.push(async () => proc.kill());
    const lines = proc.stdout.pipeThrough(new TextDecoderStream()).getReader();
    let buffered = '';
    const answer = async (): Promise<Record<string, any>> => {
      while (!buffered.includes('\n')) {
        const { value, done } = await lines.read();
        if (done) throw new Error('the relay ended');
        buffered += value;
      }
      const at = buffered.indexOf('\n');
      const line = buffered.slice(0, at);
      buffered = buffered.slice(at + 1);
      return JSON.parse(line);
    };
    let id = 0;
    const send = (method: string, params: Record<string, unknown>) => {
      proc.stdin.write(
        `${JSON.stringify({
          jsonrpc: '2.0',
          id: ++id,
          method,
          params: {
            ...params,
            _meta: {
              'io.modelcontextprotocol/protocolVersion': '2026-07-28',
              'io.modelcontextprotocol/clientCapabilities': { extensions: { [TASKS]: {} } },
            },
          },
        })}\n`,
      );
      proc.stdin.flush();
      return answer();
    };
    const made = await send('tools/call', { name: 'brewery_start', arguments: { kind: 'water' } });
    expect(made.result.resultType).toBe('task');
    let got = (await send('tasks/get', { taskId: made.result.taskId })).result;
    for (let i = 0; i < 2_000 && got.status === 'working'; i++)
      got = (await send('tasks/get', { taskId: made.result.taskId })).result;
    expect(got.status).toBe('completed');
    expect(got.result.structuredContent).toMatchObject({ brewed: 'water' });
    proc.stdin.end();
    await proc.exited;
  });
});

describe('an A2A interruption as an MCP input request', () => {
  const task = (state: Task['status']['state'], parts: Task['history'][number]['parts']): Task => ({
    id: 't-1',
    contextId: 'c-1',
    artifacts: [],
    history: [],
    status: {
      state,
      timestamp: new Date().toISOString(),
      message: { messageId: 'm', role: 'agent', parts },
    },
  });

  test('auth-required is its own kind: a URL-mode elicitation to the address the agent gave', () => {
    const asks = interruption(
      task('auth-required', [
        { text: 'Sign in to the CRM' },
        { url: 'https://crm.test/authorize' },
      ]),
    )!;
    expect(asks.key).toBe('authorize');
    expect(asks.statusMessage).toBe('auth-required: Sign in to the CRM');
    expect(asks.request.params).toMatchObject({
      mode: 'url',
      url: 'https://crm.test/authorize',
      _meta: { [A2A_STATE_META]: 'TASK_STATE_AUTH_REQUIRED' },
    });
  });

  test('auth-required without an address is a form that says what to authorize; input-required asks for a reply', () => {
    const auth = interruption(task('auth-required', [{ text: 'Grant access to the ledger' }]))!;
    expect(auth.key).toBe('authorize');
    expect(auth.request.params.mode).toBeUndefined();
    expect(String(auth.request.params.message)).toStartWith('Authorization required:');
    const input = interruption(task('input-required', [{ text: 'Which branch?' }]))!;
    expect(input.key).toBe('reply');
    expect(input.request.params._meta).toEqual({
      [A2A_STATE_META]: 'TASK_STATE_INPUT_REQUIRED',
      [A2A_TASK_META]: 't-1',
    });
    expect(interruption(task('working', []))).toBeUndefined();
  });
});
