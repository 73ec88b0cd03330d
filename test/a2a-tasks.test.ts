/**
 * The task state machine (A2A task lifecycle) through JSON-RPC: blocking and returnImmediately,
 * continuation by taskId, contextId rules, historyLength, ListTasks filters and paging, cancel
 * semantics, and tasks surviving a restart.
 */

import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import conformance from '../node/conformance.ts';
import { agentNode, gate, msgV1, rpc, startNode, tempDir, type TestNode } from './support/node.ts';

setDefaultTimeout(20_000); // per file (Bun scopes it so): real servers and processes are slow on a busy machine

let node: TestNode;
let clock = Date.parse('2026-01-01T00:00:00.000Z');
// Each reading of the clock advances it a second, so status timestamps are distinct and ordered.
const now = () => (clock += 1000);

beforeAll(async () => {
  node = await startNode(conformance(), { now });
});
afterAll(() => node.dispose());

const send = (message: Record<string, unknown>, configuration: Record<string, unknown> = {}) =>
  rpc(node.url, 'SendMessage', { message, configuration });

describe('send and continue', () => {
  test('an interrupted task continues in place by taskId; its contextId is inferred', async () => {
    const first = (await send(msgV1('start', { messageId: 'tck-input-required-a' }))).result.task;
    expect(first.status.state).toBe('TASK_STATE_INPUT_REQUIRED');
    expect(first.status.message.parts[0].text).toBe('Please provide additional input');
    const second = (await send(msgV1('more', { taskId: first.id }))).result.task;
    expect([second.id, second.contextId, second.status.state]).toEqual([
      first.id,
      first.contextId,
      'TASK_STATE_COMPLETED',
    ]);
    expect(second.history.map((m: any) => m.role)).toEqual([
      'ROLE_USER',
      'ROLE_AGENT',
      'ROLE_USER',
      'ROLE_AGENT',
    ]);
  });

  test('a contextId that does not match the task is refused', async () => {
    const t = (await send(msgV1('x', { messageId: 'tck-input-required-b' }))).result.task;
    const r = await send(msgV1('y', { taskId: t.id, contextId: 'other' }));
    expect(r.error.code).toBe(-32602);
    expect((await rpc(node.url, 'GetTask', { id: t.id })).result.status.state).toBe(
      'TASK_STATE_INPUT_REQUIRED',
    );
  });

  test('an unknown taskId is -32001; a terminal task takes no message (-32004)', async () => {
    expect((await send(msgV1('x', { taskId: crypto.randomUUID() }))).error.code).toBe(-32001);
    const done = (await send(msgV1('x', { messageId: 'tck-complete-task-c' }))).result.task;
    const r = await send(msgV1('again', { taskId: done.id }));
    expect(r.error.code).toBe(-32004);
    expect(r.error.data[0].reason).toBe('UNSUPPORTED_OPERATION');
  });

  test('a client contextId is honoured; each send makes a new task id', async () => {
    const a = (await send(msgV1('x', { contextId: 'my-ctx', messageId: 'tck-complete-task-d1' })))
      .result.task;
    const b = (await send(msgV1('x', { contextId: 'my-ctx', messageId: 'tck-complete-task-d2' })))
      .result.task;
    expect([a.contextId, b.contextId]).toEqual(['my-ctx', 'my-ctx']);
    expect(a.id).not.toBe(b.id);
    const plain = (await send(msgV1('x', { messageId: 'tck-complete-task-d3' }))).result.task;
    expect(plain.contextId).toMatch(/^[0-9a-f-]{36}$/);
  });

  test('blocking waits for the agent; returnImmediately answers while it works', async () => {
    const step = gate();
    const gated = await startNode(
      agentNode('gated', {
        async handle(ctx) {
          ctx.working('thinking');
          await step.promise;
          ctx.complete('done');
        },
      }),
    );
    try {
      const immediate = (
        await rpc(gated.url, 'SendMessage', {
          message: msgV1('x'),
          configuration: { returnImmediately: true },
        })
      ).result.task;
      expect(immediate.status.state).toBe('TASK_STATE_WORKING');
      let blockingAnswered = false;
      const blocking = rpc(gated.url, 'SendMessage', { message: msgV1('y') }).then(
        (r) => ((blockingAnswered = true), r),
      );
      // The immediate task is still working: the agent has not been released.
      expect((await rpc(gated.url, 'GetTask', { id: immediate.id })).result.status.state).toBe(
        'TASK_STATE_WORKING',
      );
      expect(blockingAnswered).toBe(false);
      step.open();
      expect((await blocking).result.task.status.state).toBe('TASK_STATE_COMPLETED');
    } finally {
      await gated.dispose();
    }
  });

  test('an agent that throws fails its task without leaking the error', async () => {
    const boom = await startNode(
      agentNode('boom', {
        handle: () => {
          throw new Error('secret-detail');
        },
      }),
    );
    try {
      const t = (await rpc(boom.url, 'SendMessage', { message: msgV1('x') })).result.task;
      expect(t.status.state).toBe('TASK_STATE_FAILED');
      expect(JSON.stringify(t)).not.toContain('secret-detail');
    } finally {
      await boom.dispose();
    }
  });
});

describe('historyLength', () => {
  test('0 omits history, n keeps the n most recent in order, absent keeps all', async () => {
    const t = (await send(msgV1('one', { messageId: 'tck-input-required-h' }))).result.task;
    await send(msgV1('two', { taskId: t.id, messageId: 'tck-complete-task-h2' }), {
      historyLength: 0,
    });
    const full = (await rpc(node.url, 'GetTask', { id: t.id })).result;
    expect(full.history.map((m: any) => m.parts[0].text)).toEqual([
      'one',
      'Please provide additional input',
      'two',
      'Hello from TCK',
    ]);
    expect(
      (await rpc(node.url, 'GetTask', { id: t.id, historyLength: 0 })).result.history,
    ).toBeUndefined();
    expect(
      (await rpc(node.url, 'GetTask', { id: t.id, historyLength: 2 })).result.history.map(
        (m: any) => m.parts[0].text,
      ),
    ).toEqual(['two', 'Hello from TCK']);
    const sent = await send(msgV1('x', { messageId: 'tck-complete-task-h' }), { historyLength: 0 });
    expect(sent.result.task.history).toBeUndefined();
  });
});

describe('ListTasks', () => {
  test('filters by context and status, pages by cursor, newest first, strips artifacts by default', async () => {
    const contextId = `list-${crypto.randomUUID()}`;
    const ids: string[] = [];
    for (let i = 0; i < 5; i++)
      ids.push(
        (await send(msgV1('x', { contextId, messageId: `tck-artifact-text-${i}` }))).result.task.id,
      );
    const waiting = (await send(msgV1('x', { contextId, messageId: 'tck-input-required-l' })))
      .result.task.id;

    const page1 = (await rpc(node.url, 'ListTasks', { contextId, pageSize: 4 })).result;
    expect(page1.tasks.map((t: any) => t.id)).toEqual([waiting, ...ids.slice(2).reverse()]);
    expect([page1.pageSize, page1.totalSize, page1.nextPageToken.length > 0]).toEqual([4, 6, true]);
    expect(page1.tasks.every((t: any) => t.artifacts === undefined)).toBe(true);
    const page2 = (
      await rpc(node.url, 'ListTasks', { contextId, pageSize: 4, pageToken: page1.nextPageToken })
    ).result;
    expect(page2.tasks.map((t: any) => t.id)).toEqual(ids.slice(0, 2).reverse());
    expect(page2.nextPageToken).toBe('');

    const completed = (
      await rpc(node.url, 'ListTasks', {
        contextId,
        status: 'TASK_STATE_COMPLETED',
        includeArtifacts: true,
      })
    ).result;
    expect(completed.tasks.map((t: any) => t.id)).toEqual([...ids].reverse());
    expect(completed.tasks[0].artifacts[0].parts[0].text).toBe('Generated text content');

    const cutoff = (await rpc(node.url, 'GetTask', { id: ids[3] })).result.status.timestamp;
    const recent = (await rpc(node.url, 'ListTasks', { contextId, statusTimestampAfter: cutoff }))
      .result;
    expect(recent.tasks.map((t: any) => t.id)).toEqual([waiting, ids[4], ids[3]]);

    const empty = (await rpc(node.url, 'ListTasks', { contextId: 'nobody' })).result;
    expect(empty).toEqual({ tasks: [], nextPageToken: '', pageSize: 50, totalSize: 0 });
  });
});

describe('CancelTask', () => {
  test('cancels an interrupted task, repeats idempotently, refuses terminal and unknown tasks', async () => {
    const t = (await send(msgV1('x', { messageId: 'tck-input-required-k' }))).result.task;
    const c1 = (await rpc(node.url, 'CancelTask', { id: t.id })).result;
    expect(c1.status.state).toBe('TASK_STATE_CANCELED');
    const c2 = (await rpc(node.url, 'CancelTask', { id: t.id })).result;
    expect(c2.status).toEqual(c1.status);
    const done = (await send(msgV1('x', { messageId: 'tck-complete-task-k' }))).result.task;
    expect((await rpc(node.url, 'CancelTask', { id: done.id })).error.code).toBe(-32002);
    expect((await rpc(node.url, 'CancelTask', { id: crypto.randomUUID() })).error.code).toBe(
      -32001,
    );
    const rejected = (await send(msgV1('x', { messageId: 'tck-reject-task-k' }))).result.task;
    expect(rejected.status.state).toBe('TASK_STATE_REJECTED');
    expect((await rpc(node.url, 'CancelTask', { id: rejected.id })).error.code).toBe(-32002);
  });

  test('canceling a running agent stops it: later reports are ignored', async () => {
    const release = gate();
    let sawAbort = false;
    const n = await startNode(
      agentNode('slow', {
        async handle(ctx) {
          ctx.working();
          await release.promise;
          sawAbort = ctx.signal.aborted;
          ctx.complete('too late');
        },
      }),
    );
    try {
      const t = (
        await rpc(n.url, 'SendMessage', {
          message: msgV1('x'),
          configuration: { returnImmediately: true },
        })
      ).result.task;
      expect((await rpc(n.url, 'CancelTask', { id: t.id })).result.status.state).toBe(
        'TASK_STATE_CANCELED',
      );
      release.open();
      const after = (await rpc(n.url, 'GetTask', { id: t.id })).result;
      expect(after.status.state).toBe('TASK_STATE_CANCELED');
      expect(sawAbort).toBe(true);
    } finally {
      await n.dispose();
    }
  });
});

describe('restart', () => {
  test('tasks written before a restart are readable and listed after it; stray files are skipped', async () => {
    const dataDir = tempDir();
    const first = await startNode(conformance(), { dataDir });
    const done = (
      await rpc(first.url, 'SendMessage', {
        message: msgV1('x', { messageId: 'tck-artifact-data-r', contextId: 'restart' }),
      })
    ).result.task;
    const open = (
      await rpc(first.url, 'SendMessage', {
        message: msgV1('x', { messageId: 'tck-input-required-r', contextId: 'restart' }),
      })
    ).result.task;
    await first.stop();

    const tasksDir = join(dataDir, 'conformance', 'tasks');
    writeFileSync(join(tasksDir, `${crypto.randomUUID()}.json`), '{ not json');
    writeFileSync(
      join(tasksDir, `${crypto.randomUUID()}.json`),
      JSON.stringify({ some: 'other format' }),
    );
    writeFileSync(join(tasksDir, 'notes.txt'), 'hello');
    mkdirSync(join(tasksDir, 'subdir'));

    const second = await startNode(conformance(), { dataDir });
    try {
      const got = (await rpc(second.url, 'GetTask', { id: done.id })).result;
      expect(got.artifacts[0].parts[0].data).toEqual({ key: 'value', count: 42 });
      const listed = (await rpc(second.url, 'ListTasks', { contextId: 'restart' })).result;
      expect(listed.tasks.map((t: any) => t.id).sort()).toEqual([done.id, open.id].sort());
      // The interrupted task continues after the restart.
      expect(
        (await rpc(second.url, 'SendMessage', { message: msgV1('more', { taskId: open.id }) }))
          .result.task.status.state,
      ).toBe('TASK_STATE_COMPLETED');
      // The two stray JSON files look like task files of the older layout: the log tries to import
      // them, names each and leaves it in place; the other strays are not its names at all.
      expect(second.log.lines.filter((l) => l.includes('not imported')).length).toBe(2);
    } finally {
      await second.dispose();
    }
  });
});
