/**
 * The task engine in process, over a task store in memory (test/support/memory-task-store.ts): its
 * pure rules (lib/a2a/engine/task-rules.ts), its live-task scope (lib/a2a/engine/live-tasks.ts)
 * and its public operations (lib/a2a/engine/engine.ts) with what each stores. No server, no port: the
 * real-server suites (a2a-*.test.ts) check the same operations through the bindings.
 */

import { describe, expect, setDefaultTimeout, test } from 'bun:test';
import type { Agent } from '../lib/a2a/agent.ts';
import { TaskEngine, type SendContext, type Subscription } from '../lib/a2a/engine/engine.ts';
import { LiveTasks } from '../lib/a2a/engine/live-tasks.ts';
import {
  artifactFit,
  continuationProblem,
  mediaMatches,
  setStatus,
  trimHistory,
  withPush,
} from '../lib/a2a/engine/task-rules.ts';
import { isA2AError } from '../lib/a2a/errors.ts';
import type { Message, PushConfig, Task, TaskEvent } from '../lib/a2a/types.ts';
import type { Principal } from '../lib/auth/principal.ts';
import { memoryLog } from '../lib/log.ts';
import { MemoryTaskStore } from './support/memory-task-store.ts';
import { gate } from './support/node.ts';

setDefaultTimeout(20_000); // per file (Bun scopes it so)

const alice: Principal = { kind: 'token', name: 'alice' };
const bob: Principal = { kind: 'token', name: 'bob' };
const anonymous: Principal = { kind: 'anonymous' };
const LIMITS = {
  historyMessages: 50,
  historyBytes: 1 << 20,
  artifacts: 10,
  artifactBytes: 1 << 20,
  eventLogEvents: 256,
  eventLogBytes: 1 << 18,
};

let n = 0;
function message(text: string, extra: Partial<Message> = {}): Message {
  return { messageId: `m${++n}`, role: 'user', parts: [{ text }], ...extra };
}
function send(
  text: string,
  o: { caller?: Principal; taskId?: string; immediate?: boolean; push?: string } = {},
): SendContext {
  return {
    params: {
      message: message(text, o.taskId ? { taskId: o.taskId } : {}),
      configuration: {
        returnImmediately: !!o.immediate,
        ...(o.push ? { pushConfig: { url: o.push, token: 'secret' } } : {}),
      },
    },
    version: '1.0',
    caller: o.caller ?? alice,
  };
}

/** An agent that works, adds one artifact and completes; "ask" asks for input first; "hi" replies. */
const workingAgent: Agent = {
  handle(ctx) {
    if (ctx.text === 'hi') return ctx.reply('hello');
    if (ctx.text === 'ask' && !ctx.continued) return ctx.requireInput('which one?');
    ctx.working();
    ctx.artifact({ artifactId: 'a1', parts: [{ text: `answer to ${ctx.text}` }] });
    ctx.complete();
  },
};

function setup(
  agent: Agent = workingAgent,
  extra: Partial<ConstructorParameters<typeof TaskEngine>[0]> = {},
) {
  const store = new MemoryTaskStore();
  const pushed: { configs: string[]; event: TaskEvent['kind'] }[] = [];
  const engine = new TaskEngine({
    store,
    agent,
    log: memoryLog(),
    inputModes: ['text/plain'],
    outputModes: ['text/plain'],
    push: {
      refuse: (url) =>
        url.startsWith('http://10.')
          ? { code: 'ADDRESS_REFUSED', message: 'private address', field: 'url' }
          : undefined,
      notify: (configs, event) =>
        pushed.push({ configs: configs.map((c) => c.url), event: event.kind }),
    },
    maxPushConfigs: 2,
    ...extra,
  });
  return { store, engine, pushed };
}

async function events(sub: Subscription): Promise<string[]> {
  const out: string[] = [];
  for await (const e of sub) out.push(e.kind === 'status' ? `status ${e.status.state}` : e.kind);
  return out;
}

function taskOf(r: unknown): Task {
  if (isA2AError(r) || !r || typeof r !== 'object' || !('task' in r))
    throw new Error(`expected a task, got ${JSON.stringify(r)}`);
  return (r as { task: Task }).task;
}

describe('task rules', () => {
  test('media types match exactly, by type/* and */*, parameters ignored', () => {
    expect(mediaMatches('text/plain; charset=utf-8', ['text/plain'])).toBe(true);
    expect(mediaMatches('text/csv', ['text/*'])).toBe(true);
    expect(mediaMatches('image/png', ['*/*'])).toBe(true);
    expect(mediaMatches('image/png', ['text/*', 'application/json'])).toBe(false);
  });

  test('a message continues a non-terminal task of the same context only', () => {
    const task: Task = {
      id: 't1',
      contextId: 'c1',
      status: { state: 'input-required', timestamp: '' },
      artifacts: [],
      history: [],
    };
    expect(continuationProblem(task, message('x'))).toBeUndefined();
    expect(continuationProblem(task, message('x', { contextId: 'c2' }))?.code).toBe(
      'INVALID_PARAMS',
    );
    task.status.state = 'completed';
    expect(continuationProblem(task, message('x'))?.code).toBe('UNSUPPORTED_OPERATION');
  });

  test('history keeps the newest messages within the count, the newest always', () => {
    const history = [message('1'), message('2'), message('3')];
    trimHistory(history, { ...LIMITS, historyMessages: 2 });
    expect(history.map((m) => m.parts[0]!.text)).toEqual(['2', '3']);
    const big = [message('x'.repeat(500))];
    trimHistory(big, { ...LIMITS, historyBytes: 10 });
    expect(big).toHaveLength(1);
  });

  test('a status change with a note adds it to the history and says whether it is final', () => {
    const task: Task = {
      id: 't1',
      contextId: 'c1',
      status: { state: 'working', timestamp: '' },
      artifacts: [],
      history: [],
    };
    const e = setStatus(task, 'completed', 'done', () => 0, LIMITS);
    expect(e).toMatchObject({ kind: 'status', final: true, status: { state: 'completed' } });
    expect(task.history.map((m) => [m.role, m.parts[0]!.text])).toEqual([['agent', 'done']]);
  });

  test('artifacts past their count or bytes are refused; a replacement counts its difference', () => {
    const task: Task = {
      id: 't1',
      contextId: 'c1',
      status: { state: 'working', timestamp: '' },
      artifacts: [{ artifactId: 'a', parts: [{ text: 'x' }] }],
      history: [],
    };
    const art = { artifactId: 'b', parts: [{ text: 'y' }] };
    expect(artifactFit(task, 0, -1, art, false, { ...LIMITS, artifacts: 1 })).toEqual({
      refused: 'A task holds at most 1 artifacts',
    });
    expect(artifactFit(task, 0, -1, art, false, { ...LIMITS, artifactBytes: 5 })).toMatchObject({
      refused: expect.stringContaining('at most 5 bytes'),
    });
    expect('bytes' in artifactFit(task, 40, 0, art, false, LIMITS)).toBe(true);
  });

  test('a push config with the id of another replaces it', () => {
    const one = withPush([], { taskId: 't', url: 'https://a', id: 'p' }, '1.0');
    const two = withPush(one.push, { taskId: 't', url: 'https://b', id: 'p' }, '1.0');
    expect(two.push.map((p) => p.url)).toEqual(['https://b']);
    expect(withPush(two.push, { taskId: 't', url: 'https://c' }, '0.3').push).toHaveLength(2);
  });
});

describe('live tasks', () => {
  test('withLive lets the entry go after its scope, also when the scope throws', async () => {
    const store = new MemoryTaskStore();
    const live = new LiveTasks({ store });
    const rec = {
      task: {
        id: 't1',
        contextId: 'c',
        status: { state: 'working' as const, timestamp: '' },
        artifacts: [],
        history: [],
      },
      push: [],
    };
    await store.save(rec);
    let inside: unknown;
    await live.withLive(
      't1',
      () => 'missing',
      (l) => {
        inside = live.get('t1');
        return l.rec.task.id;
      },
    );
    expect(inside).toBeDefined();
    await Promise.resolve(); // the entry is forgotten once its last write has settled
    expect(live.get('t1')).toBeUndefined();
    await expect(
      live.withLive(
        't1',
        () => 'missing',
        () => {
          throw new Error('boom');
        },
      ),
    ).rejects.toThrow('boom');
    await Promise.resolve();
    expect(live.get('t1')).toBeUndefined();
    expect(
      await live.withLive(
        'nope',
        () => 'missing',
        () => 'found',
      ),
    ).toBe('missing');
  });

  test('a subscription holds its entry until it closes', async () => {
    const store = new MemoryTaskStore();
    const live = new LiveTasks({ store });
    const entry = live.create({
      task: {
        id: 't2',
        contextId: 'c',
        status: { state: 'submitted', timestamp: '' },
        artifacts: [],
        history: [],
      },
      push: [],
    });
    live.materialize(entry);
    const sub = live.subscribe(entry);
    await entry.lastSave;
    expect(live.get('t2')).toBe(entry);
    sub.close();
    await entry.lastSave;
    await Promise.resolve();
    expect(live.get('t2')).toBeUndefined();
  });
});

describe('the engine operations over a store in memory', () => {
  test('a blocking send answers with the completed task; each step was stored in order', async () => {
    const { engine, store } = setup();
    const task = taskOf(await engine.send(send('q1')));
    expect(task.status.state).toBe('completed');
    expect(task.artifacts.map((a) => a.parts[0]!.text)).toEqual(['answer to q1']);
    expect(store.saves.map((s) => [s.state, s.event ?? 'none'])).toEqual([
      ['submitted', 'none'],
      ['working', 'status'],
      ['working', 'artifact'],
      ['completed', 'status'],
    ]);
    expect(store.get(task.id)?.task.status.state).toBe('completed');
  });

  test('an agent that replies with a Message makes no task at all', async () => {
    const { engine, store } = setup();
    const r = await engine.send(send('hi'));
    expect(r).toMatchObject({ message: { role: 'agent', parts: [{ text: 'hello' }] } });
    expect(store.records.size).toBe(0);
  });

  test('returnImmediately answers once the task exists, while the agent works', async () => {
    const g = gate();
    const { engine } = setup({
      async handle(ctx) {
        ctx.working();
        await g.promise;
        ctx.complete();
      },
    });
    const task = taskOf(await engine.send(send('slow', { immediate: true })));
    expect(['submitted', 'working']).toContain(task.status.state);
    const sub = await engine.resubscribe(task.id, alice);
    if (isA2AError(sub)) throw new Error(sub.message);
    g.open();
    expect(await events(sub)).toEqual(['task', 'status completed']);
  });

  test('a stream gives the task, then every event in order, and ends at the final state', async () => {
    const { engine } = setup();
    const sub = await engine.stream(send('q2'));
    if (isA2AError(sub)) throw new Error(sub.message);
    expect(await events(sub)).toEqual(['task', 'status working', 'artifact', 'status completed']);
  });

  test('only the creator continues a task; a wrong context and a terminal task are refused', async () => {
    const { engine } = setup();
    const asked = taskOf(await engine.send(send('ask')));
    expect(asked.status.state).toBe('input-required');
    expect(await engine.send(send('it', { taskId: asked.id, caller: bob }))).toMatchObject({
      code: 'TASK_NOT_FOUND',
    });
    const wrong = send('it', { taskId: asked.id });
    wrong.params.message.contextId = 'another';
    expect(await engine.send(wrong)).toMatchObject({ code: 'INVALID_PARAMS' });
    const done = taskOf(await engine.send(send('it', { taskId: asked.id })));
    expect(done.status.state).toBe('completed');
    expect(done.history.map((m) => m.parts[0]!.text)).toEqual(['ask', 'which one?', 'it']);
    expect(await engine.send(send('more', { taskId: asked.id }))).toMatchObject({
      code: 'UNSUPPORTED_OPERATION',
    });
  });

  test('cancel: an interrupted task, again, a completed one, a stranger and an anonymous caller', async () => {
    const { engine } = setup();
    const asked = taskOf(await engine.send(send('ask')));
    expect(await engine.cancel(asked.id, anonymous)).toMatchObject({ code: 'UNAUTHENTICATED' });
    expect(await engine.cancel(asked.id, bob)).toMatchObject({ code: 'TASK_NOT_FOUND' });
    expect(await engine.cancel(asked.id, alice)).toMatchObject({ status: { state: 'canceled' } });
    expect(await engine.cancel(asked.id, alice)).toMatchObject({ status: { state: 'canceled' } });
    const done = taskOf(await engine.send(send('q3')));
    expect(await engine.cancel(done.id, alice)).toMatchObject({ code: 'TASK_NOT_CANCELABLE' });
  });

  test('push configs: one path for set, list, get and delete, bounded per task', async () => {
    const { engine, pushed } = setup();
    const asked = taskOf(await engine.send(send('ask', { push: 'https://hooks.example/a' })));
    const taskId = asked.id;
    expect(await engine.setPush({ taskId, url: 'http://10.0.0.1/x' }, '1.0', alice)).toMatchObject({
      code: 'INVALID_PARAMS',
    });
    const second = await engine.setPush(
      { taskId, url: 'https://hooks.example/b', token: 't' },
      '1.0',
      alice,
    );
    if (isA2AError(second)) throw new Error(second.message);
    expect(
      await engine.setPush({ taskId, url: 'https://hooks.example/c' }, '1.0', alice),
    ).toMatchObject({
      code: 'INVALID_PARAMS',
      message: 'A task holds at most 2 push configs',
    });
    const listed = await engine.listPush(taskId, alice);
    expect((listed as PushConfig[]).map((p) => [p.url, p.token])).toEqual([
      ['https://hooks.example/a', undefined],
      ['https://hooks.example/b', undefined],
    ]);
    expect(await engine.getPush(taskId, second.id, alice)).toMatchObject({ token: 't' });
    expect(await engine.listPush(taskId, bob)).toMatchObject({ code: 'TASK_NOT_FOUND' });
    expect(await engine.deletePush(taskId, second.id, alice)).toBeNull();
    expect(await engine.deletePush(taskId, second.id, alice)).toBeNull();
    expect(((await engine.listPush(taskId, alice)) as PushConfig[]).length).toBe(1);
    // The config the send carried gets the task's events.
    await engine.send(send('it', { taskId }));
    expect(pushed.at(-1)).toEqual({ configs: ['https://hooks.example/a'], event: 'status' });
    const { engine: noPush } = setup(workingAgent, { push: undefined });
    expect(await noPush.listPush(taskId, alice)).toMatchObject({
      code: 'PUSH_NOTIFICATION_NOT_SUPPORTED',
    });
  });

  test('a write the store refuses is INTERNAL_ERROR, for a send and for a push config', async () => {
    const { engine, store } = setup();
    const asked = taskOf(await engine.send(send('ask')));
    store.failNext();
    expect(
      await engine.setPush({ taskId: asked.id, url: 'https://hooks.example/x' }, '1.0', alice),
    ).toMatchObject({ code: 'INTERNAL_ERROR' });
    store.failNext(10);
    expect(await engine.send(send('q4'))).toMatchObject({ code: 'INTERNAL_ERROR' });
  });

  test('artifacts past the cap fail the task with TASK_TOO_LARGE', async () => {
    const { engine } = setup(
      {
        handle(ctx) {
          ctx.artifact({ parts: [{ text: 'one' }] });
          ctx.artifact({ parts: [{ text: 'two' }] });
          ctx.complete();
        },
      },
      { limits: { artifacts: 1 } },
    );
    const task = taskOf(await engine.send(send('q5')));
    expect(task.status.state).toBe('failed');
    expect(task.status.message?.parts[1]).toMatchObject({
      data: { error: { code: 'TASK_TOO_LARGE' } },
    });
    expect(task.artifacts).toHaveLength(1);
  });

  test("another principal's task is answered like a missing one everywhere", async () => {
    const { engine } = setup();
    const task = taskOf(await engine.send(send('q6')));
    for (const r of [
      await engine.getTask(task.id, undefined, bob),
      await engine.resubscribe(task.id, bob),
      await engine.getPush(task.id, undefined, bob),
    ])
      expect(r).toMatchObject({ code: 'TASK_NOT_FOUND' });
    expect(await engine.listTasks({ pageSize: 10, includeArtifacts: false }, bob)).toMatchObject({
      tasks: [],
    });
  });
});
