/**
 * Delegation while watched: a client subscribed to a delegated hub task (the official
 * @a2a-js/sdk client's `resubscribeTask`, `SubscribeToTask` on the wire) sees the job on the real
 * executor (`resolve`) complete, with its output, without any `GetTask`: the hub advances a task
 * while somebody watches it. And a delegation that waits for its prompt takes the next text as it.
 */

import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import { Role, TaskState } from '@a2a-js/sdk';
import {
  ClientFactory,
  ClientFactoryOptions,
  createAuthenticatingFetchWithRetry,
  JsonRpcTransportFactory,
} from '@a2a-js/sdk/client';
import { realNodeDefs, startFleet, type RunningFleet } from './support/fleet.ts';
import { msgV1, rpc, TEST_TOKEN } from './support/node.ts';

setDefaultTimeout(20_000); // per file (Bun scopes it so): real servers and processes are slow on a busy machine

let f: RunningFleet;
/** Every A2A method the hub was asked, in order (the hub's own requests to nodes are not in it). */
const methods: string[] = [];
const countingFetch: typeof fetch = Object.assign(
  async (input: RequestInfo | URL, init?: RequestInit) => {
    if (typeof init?.body === 'string') methods.push(JSON.parse(init.body).method);
    return fetch(input, init);
  },
  { preconnect: fetch.preconnect },
);
beforeAll(async () => {
  f = await startFleet(await realNodeDefs(['scanner', 'resolve']));
});
afterAll(() => f.stop());

const client = () =>
  new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports: [
        new JsonRpcTransportFactory({
          fetchImpl: createAuthenticatingFetchWithRetry(countingFetch, {
            headers: async () => ({ Authorization: `Bearer ${TEST_TOKEN}` }),
            shouldRetryWithHeaders: async () => undefined,
          }),
        }),
      ],
    }),
  ).createFromUrl(f.hubUrl);

const dataPart = (d: Record<string, unknown>) => ({
  content: { $case: 'data' as const, value: d },
  filename: '',
  mediaType: 'application/json',
  metadata: undefined,
});
const message = (parts: any[]) =>
  ({
    messageId: crypto.randomUUID(),
    role: Role.ROLE_USER,
    parts,
    contextId: '',
    taskId: '',
    extensions: [],
    referenceTaskIds: [],
    metadata: undefined,
  }) as any;

test('a subscriber sees a delegated job complete without any GetTask', async () => {
  const c = await client();
  const started: any = await c.sendMessage({
    message: message([
      dataPart({ skill: 'task.delegate', args: { prompt: 'give me a report of the fleet nodes' } }),
    ]),
  } as any);
  expect(started.status.state).toBe(TaskState.TASK_STATE_WORKING);
  const events: any[] = [];
  for await (const ev of c.resubscribeTask({ id: started.id } as any)) events.push(ev);
  expect(events[0].payload.$case).toBe('task');
  expect(events.at(-1)!.payload.value.status.state).toBe(TaskState.TASK_STATE_COMPLETED);
  // The job's output arrived on the stream as the task's artifact.
  const artifacts = events
    .filter((e) => e.payload.$case === 'artifactUpdate')
    .map((e) => e.payload.value.artifact);
  expect(artifacts.map((a) => a.name)).toEqual(['job-output']);
  expect(artifacts[0].parts[0].content.value).toContain('scanner');
  expect(methods.filter((m) => m !== 'SendMessage' && m !== 'SubscribeToTask')).toEqual([]);
  expect(methods).toContain('SubscribeToTask');
});

test('a delegation waiting for its prompt takes the next text as the prompt', async () => {
  const asked = (
    await rpc(f.hubUrl, 'SendMessage', {
      message: { ...msgV1(''), parts: [{ data: { skill: 'task.delegate', args: {} } }] },
    })
  ).result.task;
  expect(asked.status.state).toBe('TASK_STATE_INPUT_REQUIRED');
  expect(asked.status.message.parts[0].text).toContain('needs a prompt');
  const continued = (
    await rpc(f.hubUrl, 'SendMessage', {
      message: msgV1('give me a report of the fleet nodes', { taskId: asked.id }),
    })
  ).result.task;
  expect(continued.status.state).toBe('TASK_STATE_WORKING');
  expect(continued.metadata.delegation.prompt).toBe('give me a report of the fleet nodes');
  expect(continued.metadata.delegation.recipe).toBe('fleet-report');
});
