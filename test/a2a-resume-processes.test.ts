/**
 * Resume across processes and crashes: two processes of one node on one PostgreSQL, a task
 * running on A followed by a stream on B; B is killed with SIGKILL mid-stream and the client
 * resumes on A with `Last-Event-ID`, seeing each generation once, in order, to the end. And one
 * node on its own data folder killed with SIGKILL mid-task: after the restart the client resumes
 * and gets what the node stored after its cursor and the task's final (failed) state.
 */

import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import { rmSync } from 'node:fs';
import { startCounterNode } from './support/counter-node.ts';
import { msgV1, sseEvents, TEST_AUTH } from './support/node.ts';
import { type FilePostgres, sharedPostgres } from './support/postgres.ts';

setDefaultTimeout(60_000); // per file (Bun scopes it so): real processes and a database on a busy machine

const COUNT = 150;
const LAST = COUNT + 3;

let pg: FilePostgres;
beforeAll(async () => {
  pg = await sharedPostgres();
}, 60_000);
afterAll(async () => {
  await pg?.release();
});

const post = (url: string, method: string, params: unknown, headers: Record<string, string> = {}) =>
  fetch(`${url}/a2a`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'A2A-Version': '1.1', ...TEST_AUTH, ...headers },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });

/**
 * Reads an SSE stream, noting each event's generation (from its id) and state; `onEvent` may
 * answer true to stop reading. Ends quietly when the connection breaks.
 */
async function follow(
  res: Response,
  seen: { generation: number; state?: string }[],
  onEvent: () => boolean | Promise<boolean> = () => false,
): Promise<void> {
  try {
    for await (const { id, data } of sseEvents(res)) {
      if (!id) continue;
      seen.push({
        generation: Number(id.slice(id.lastIndexOf(':') + 1)),
        state: (data.result.statusUpdate ?? data.result.task)?.status?.state,
      });
      if (await onEvent()) break;
    }
    await res.body!.cancel();
  } catch {
    // the process went away mid-stream
  }
}

test('PostgreSQL: the subscriber’s process killed with -9 mid-stream, the client resumes on the other', async () => {
  const url = await pg.createDatabase(`resume_${crypto.randomUUID().slice(0, 8)}`);
  const env = { TASKS_DATABASE_URL: url, COUNT: String(COUNT), EVERY_MS: '15' };
  const a = await startCounterNode(env);
  const b = await startCounterNode(env);
  try {
    const started = await post(a.url, 'SendMessage', {
      message: msgV1('count'),
      configuration: { returnImmediately: true },
    });
    const id = ((await started.json()) as any).result.task.id;
    const seen: { generation: number; state?: string }[] = [];
    // The stream on B, fed by A's turn through the database; B dies after 20 events.
    let killed: Promise<void> | undefined;
    await follow(await post(b.url, 'SubscribeToTask', { id }), seen, () => {
      if (seen.length === 20) killed = b.kill();
      return false;
    });
    await killed;
    expect(seen.length).toBeGreaterThanOrEqual(20);
    const cut = seen.at(-1)!.generation;
    // Resumed on A: exactly the rest.
    await follow(
      await post(a.url, 'SubscribeToTask', { id }, { 'Last-Event-ID': `${id}:${cut}` }),
      seen,
    );
    const generations = seen.map((s) => s.generation);
    const first = generations[0]!;
    expect(generations).toEqual(Array.from({ length: LAST - first + 1 }, (_, i) => first + i));
    expect(seen.at(-1)!.state).toBe('TASK_STATE_COMPLETED');
    console.log(
      `PostgreSQL: B killed after generation ${cut}; resumed on A: generations ${first}..${LAST}, each once`,
    );
  } finally {
    await a.stop();
    await b.stop().catch(() => {});
    rmSync(b.dataDir, { recursive: true, force: true });
  }
});

test('one node killed with -9 mid-task: after the restart the client resumes to the final state', async () => {
  const env = { COUNT: String(COUNT), EVERY_MS: '15' };
  let node = await startCounterNode(env);
  const dataDir = node.dataDir;
  try {
    const seen: { generation: number; state?: string }[] = [];
    let killed: Promise<void> | undefined;
    await follow(
      await post(node.url, 'SendStreamingMessage', { message: msgV1('count') }),
      seen,
      () => {
        if (seen.length === 30) killed = node.kill();
        return false;
      },
    );
    await killed;
    const cut = seen.at(-1)!.generation;
    node = await startCounterNode(env, dataDir);
    const tasks = (await (await post(node.url, 'ListTasks', {})).json()) as any;
    const taskId = tasks.result.tasks[0].id;
    const before = seen.length;
    await follow(
      await post(
        node.url,
        'SubscribeToTask',
        { id: taskId },
        { 'Last-Event-ID': `${taskId}:${cut}` },
      ),
      seen,
    );
    const resumed = seen.slice(before);
    // The last event is the failure the restart wrote; what was stored after the cursor comes first,
    // each once, in order. (Events a crash lost before their write: the final Task instead.)
    expect(resumed.at(-1)!.state).toBe('TASK_STATE_FAILED');
    const generations = resumed.map((s) => s.generation);
    if (generations.length > 1 || generations[0]! > cut)
      expect(generations).toEqual(
        Array.from({ length: generations.length }, (_, i) => cut + 1 + i),
      );
    console.log(
      `one node: killed after generation ${cut}; after the restart: ${generations.join(', ')} (failed)`,
    );
  } finally {
    await node.stop();
  }
});
