/**
 * A task's bounded event log (lib/a2a/store/event-log.ts): every status and artifact event is
 * written with the task, in the same write, on each store (the task log, PostgreSQL);
 * a restart keeps it; past its bound the oldest events go and the newest stays; a replay after a
 * generation is exactly the events after it, or nothing usable (undefined) when some were dropped.
 * On PostgreSQL a cancel made under the row lock joins the log, and another process reads it.
 */

import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Agent } from '../lib/a2a/agent.ts';
import { isA2AError } from '../lib/a2a/errors.ts';
import { TaskEngine, type SendContext } from '../lib/a2a/engine/engine.ts';
import { appendEvent, eventsAfter, type LoggedEvent } from '../lib/a2a/store/event-log.ts';
import { LogTaskStore } from '../lib/a2a/store/log-store.ts';
import { PostgresTaskStore } from '../lib/a2a/store/postgres-store.ts';
import type { TaskStore } from '../lib/a2a/store/task-store.ts';
import type { Task, TaskEvent } from '../lib/a2a/types.ts';
import { ANONYMOUS } from '../lib/auth/principal.ts';
import { silentLog } from '../lib/log.ts';
import { tempDir } from './support/node.ts';
import { type FilePostgres, sharedPostgres } from './support/postgres.ts';

setDefaultTimeout(30_000); // per file (Bun scopes it so): real stores and a database on a busy machine

const CHUNKS = 12;
/** `go`: working, CHUNKS artifact chunks, then input-required (generations 2..CHUNKS + 3). */
const agent: Agent = {
  handle(ctx) {
    ctx.working();
    for (let i = 0; i < CHUNKS; i++)
      ctx.artifact(
        { artifactId: 'a', parts: [{ text: `chunk ${i}` }] },
        { append: i > 0, lastChunk: i === CHUNKS - 1 },
      );
    ctx.requireInput('and then?');
  },
};
const LAST = CHUNKS + 3;

let pg: FilePostgres;
beforeAll(async () => {
  pg = await sharedPostgres();
}, 60_000);
afterAll(async () => {
  await pg?.release();
});

let n = 0;
interface StoreCase {
  name: string;
  opener(): Promise<{ open(): Promise<TaskStore>; remove(): void }>;
}
const stores: StoreCase[] = [
  {
    name: 'the task log',
    async opener() {
      const root = tempDir();
      return {
        open: async () => LogTaskStore.open({ dir: join(root, 'tasks'), log: silentLog }),
        remove: () => rmSync(root, { recursive: true, force: true }),
      };
    },
  },
  {
    name: 'PostgreSQL',
    async opener() {
      const url = await pg.createDatabase(`event_log_${++n}`);
      return {
        async open() {
          const s = new PostgresTaskStore({ url, node: 'unit', log: silentLog });
          await s.open();
          return s;
        },
        remove: () => {},
      };
    },
  },
];

const engineOn = (store: TaskStore, keep: number) =>
  new TaskEngine({
    store,
    agent,
    log: silentLog,
    inputModes: ['text/plain'],
    outputModes: ['text/plain'],
    limits: { eventLogEvents: keep },
    mayAct: () => true,
  });

const sendCtx = (text: string): SendContext => ({
  params: {
    message: { messageId: crypto.randomUUID(), role: 'user', parts: [{ text }] },
    configuration: { returnImmediately: false },
  },
  version: '1.0',
  caller: ANONYMOUS,
});

const generations = (log: readonly LoggedEvent[] | undefined) =>
  (log ?? []).map((e) => e.generation);
const range = (from: number, to: number) =>
  Array.from({ length: to - from + 1 }, (_, i) => from + i);

for (const kind of stores) {
  describe(`on ${kind.name}`, () => {
    test('the newest events are stored with the task and survive a restart; a cancel joins them', async () => {
      const { open, remove } = await kind.opener();
      let store = await open();
      let engine = engineOn(store, 5);
      try {
        const sent = await engine.send(sendCtx('go'));
        if (isA2AError(sent) || !('task' in sent)) throw new Error('no task');
        const id = sent.task.id;
        expect(sent.task.generation).toBe(LAST);
        await engine.close();
        await store.close();

        store = await open();
        engine = engineOn(store, 5);
        const rec = await store.get(id);
        expect(generations(rec?.events)).toEqual(range(LAST - 4, LAST));
        const last = rec!.events!.at(-1)!;
        expect(last.kind === 'status' && last.status.state).toBe('input-required');
        // Replays: exactly what follows a kept generation; nothing usable before what is kept.
        expect(generations(eventsAfter(rec!.task, rec!.events, LAST - 3))).toEqual([
          LAST - 2,
          LAST - 1,
          LAST,
        ]);
        expect(eventsAfter(rec!.task, rec!.events, LAST)).toEqual([]);
        expect(eventsAfter(rec!.task, rec!.events, LAST - 6)).toBeUndefined();

        const canceled = await engine.cancel(id, ANONYMOUS);
        expect(isA2AError(canceled) ? canceled : canceled.generation).toBe(LAST + 1);
        await engine.close();
        await store.close();
        store = await open();
        const after = await store.get(id);
        expect(generations(after?.events)).toEqual(range(LAST - 3, LAST + 1));
        const final = after!.events!.at(-1)!;
        expect(final.kind === 'status' && final.status.state).toBe('canceled');
      } finally {
        await engine.close();
        await store.close();
        remove();
      }
    });
  });
}

test('on PostgreSQL another process reads the log the first one wrote', async () => {
  const url = await pg.createDatabase(`event_log_${++n}`);
  const a = new PostgresTaskStore({ url, node: 'unit', log: silentLog });
  const b = new PostgresTaskStore({ url, node: 'unit', log: silentLog });
  await a.open();
  await b.open();
  const engine = engineOn(a, 100);
  try {
    const sent = await engine.send(sendCtx('go'));
    if (isA2AError(sent) || !('task' in sent)) throw new Error('no task');
    const rec = await b.get(sent.task.id);
    expect(generations(rec?.events)).toEqual(range(2, LAST));
  } finally {
    await engine.close();
    await a.close();
    await b.close();
  }
});

describe('the bound', () => {
  const task = (generation: number): Task => ({
    id: 't',
    contextId: 'c',
    status: { state: 'working', timestamp: '' },
    artifacts: [],
    history: [],
    generation,
  });
  const event = (generation: number, text = 'x'): TaskEvent => ({
    kind: 'artifact',
    taskId: 't',
    contextId: 'c',
    artifact: { artifactId: 'a', parts: [{ text }] },
    append: false,
    lastChunk: false,
    generation,
  });

  test('bytes: the oldest go first, the newest always stays even when alone it is larger', () => {
    const rec: { events?: LoggedEvent[] } = {};
    for (let g = 2; g <= 6; g++) appendEvent(rec, event(g), { events: 100, bytes: 400 });
    const one = JSON.stringify(event(2)).length;
    expect(rec.events!.length).toBe(Math.floor(400 / one));
    expect(rec.events!.at(-1)!.generation).toBe(6);
    appendEvent(rec, event(7, 'y'.repeat(1000)), { events: 100, bytes: 400 });
    expect(generations(rec.events)).toEqual([7]);
  });

  test('a message, a task snapshot or a repeated generation is not logged', () => {
    const rec: { events?: LoggedEvent[] } = {};
    const bound = { events: 10, bytes: 1 << 20 };
    appendEvent(rec, { kind: 'task', task: task(1) }, bound);
    appendEvent(
      rec,
      { kind: 'message', message: { messageId: 'm', role: 'agent', parts: [] } },
      bound,
    );
    appendEvent(rec, event(2), bound);
    appendEvent(rec, event(2), bound);
    expect(generations(rec.events)).toEqual([2]);
    // A log with a hole replays nothing: the reader gets the task instead.
    appendEvent(rec, event(4), bound);
    expect(eventsAfter(task(4), rec.events, 1)).toBeUndefined();
    expect(generations(eventsAfter(task(4), rec.events, 3))).toEqual([4]);
  });
});
