/**
 * Two real processes of one node (`bun run node --name conformance`) on one task database, as
 * behind a load balancer: a client creates a task through one and reads, continues, cancels,
 * configures and subscribes to it through the other; a stream opened on one process gets the
 * events a turn on the other makes, and a cancel on one ends a stream and a turn on the other.
 */

import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import { msgV1, rpc, sseFrames, streamRpc } from './support/node.ts';
import { type NodeProcess, startNodeProcess } from './support/node-process.ts';
import { type FilePostgres, sharedPostgres } from './support/postgres.ts';

setDefaultTimeout(20_000); // per file (Bun scopes it so): real servers and processes are slow on a busy machine

/** `bun run node --name conformance` on a free port, on the shared database. */
const startProcess = (databaseUrl: string): Promise<NodeProcess> =>
  startNodeProcess({ TASKS_DATABASE_URL: databaseUrl, PUSH_ALLOW_HOSTS: '127.0.0.1' });

let pg: FilePostgres;
let a: NodeProcess;
let b: NodeProcess;

beforeAll(async () => {
  pg = await sharedPostgres();
  const url = await pg.createDatabase('two_processes');
  [a, b] = await Promise.all([startProcess(url), startProcess(url)]);
}, 60_000); // initdb and two process starts take a few seconds on a busy machine
afterAll(async () => {
  await Promise.all([a?.stop(), b?.stop()]);
  await pg.release();
});

const send = (
  url: string,
  messageId: string,
  extra: Record<string, unknown> = {},
  configuration: Record<string, unknown> = {},
) =>
  rpc(url, 'SendMessage', {
    message: msgV1('hello', { messageId: `${messageId}-${crypto.randomUUID()}`, ...extra }),
    configuration,
  });

test('created on A: read, continued, configured and canceled on B, and A sees it all', async () => {
  const t = (await send(a.url, 'tck-input-required')).result.task;
  expect(t.status.state).toBe('TASK_STATE_INPUT_REQUIRED');
  expect((await rpc(b.url, 'GetTask', { id: t.id })).result.status.state).toBe(
    'TASK_STATE_INPUT_REQUIRED',
  );

  const hook = 'http://127.0.0.1:9/hook';
  const made = await rpc(b.url, 'CreateTaskPushNotificationConfig', {
    taskId: t.id,
    url: hook,
    id: 'from-b',
  });
  expect(made.result?.id ?? made).toBe('from-b');
  expect(
    (await rpc(a.url, 'ListTaskPushNotificationConfigs', { taskId: t.id })).result.configs.map(
      (c: any) => c.id,
    ),
  ).toEqual(['from-b']);

  const done = (await send(b.url, 'tck-complete-task', { taskId: t.id })).result.task;
  expect(done.status.state).toBe('TASK_STATE_COMPLETED');
  const onA = (await rpc(a.url, 'GetTask', { id: t.id })).result;
  expect(onA.status.state).toBe('TASK_STATE_COMPLETED');
  expect(onA.history.map((m: any) => m.role)).toEqual([
    'ROLE_USER',
    'ROLE_AGENT',
    'ROLE_USER',
    'ROLE_AGENT',
  ]);

  const u = (await send(a.url, 'tck-input-required')).result.task;
  expect((await rpc(b.url, 'CancelTask', { id: u.id })).result.status.state).toBe(
    'TASK_STATE_CANCELED',
  );
  expect((await rpc(a.url, 'GetTask', { id: u.id })).result.status.state).toBe(
    'TASK_STATE_CANCELED',
  );
  const listed = (
    await rpc(b.url, 'ListTasks', { status: 'TASK_STATE_CANCELED' })
  ).result.tasks.map((x: any) => x.id);
  expect(listed).toEqual([u.id]);
});

test('a stream on B gets the events of a turn on A; a cancel on B ends a stream and the turn on A', async () => {
  // A runs a turn that works for a few seconds, then reports an artifact and completes.
  const running = (
    await send(a.url, 'test-resubscribe-message-id', {}, { returnImmediately: true })
  ).result.task;
  expect(running.status.state).toBe('TASK_STATE_WORKING');
  const busy = await send(b.url, 'tck-complete-task', { taskId: running.id });
  expect(busy.error.code).toBe(-32004);
  expect(busy.error.message).toContain('another process');

  const followOnB = (async () => {
    const seen: any[] = [];
    for await (const f of sseFrames(await streamRpc(b.url, 'SubscribeToTask', { id: running.id })))
      seen.push(f.result);
    return seen;
  })();

  const canceledOnB = (async () => {
    const seen: any[] = [];
    const stream = await streamRpc(a.url, 'SendStreamingMessage', {
      message: msgV1('hold', { messageId: `test-resubscribe-message-id-${crypto.randomUUID()}` }),
    });
    for await (const f of sseFrames(stream)) {
      seen.push(f.result);
      if (f.result.statusUpdate?.status.state === 'TASK_STATE_WORKING')
        expect(
          (await rpc(b.url, 'CancelTask', { id: f.result.statusUpdate.taskId })).result.status
            .state,
        ).toBe('TASK_STATE_CANCELED');
    }
    return seen;
  })();

  const [followed, canceled] = await Promise.all([followOnB, canceledOnB]);
  expect(followed.map((r) => Object.keys(r)[0])).toEqual([
    'task',
    'artifactUpdate',
    'statusUpdate',
  ]);
  expect(followed[0].task.status.state).toBe('TASK_STATE_WORKING');
  expect(followed[1].artifactUpdate.artifact.parts[0].text).toBe('Resubscribe scenario finished');
  expect(followed[2].statusUpdate.status.state).toBe('TASK_STATE_COMPLETED');

  expect(canceled.map((r) => r.statusUpdate?.status.state ?? Object.keys(r)[0])).toEqual([
    'task',
    'TASK_STATE_WORKING',
    'TASK_STATE_CANCELED',
  ]);
  const id = canceled[0].task.id;
  const onA = (await rpc(a.url, 'GetTask', { id })).result;
  expect([onA.status.state, onA.artifacts ?? []]).toEqual(['TASK_STATE_CANCELED', []]);
}, 30_000);
