/**
 * The official @a2a-js/sdk gRPC client (`@a2a-js/sdk/client/grpc` on `@grpc/grpc-js`), unchanged,
 * against a node: it reads the card, picks the GRPC interface, and sends, streams, gets, lists,
 * cancels, subscribes and manages push configs, with the bearer token
 * as `authorization` metadata (the SDK's service parameters).
 */

import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { Role, TaskState } from '@a2a-js/sdk';
import { ClientFactory, ClientFactoryOptions } from '@a2a-js/sdk/client';
import { GrpcTransportFactory } from '@a2a-js/sdk/client/grpc';
import conformance from '../node/conformance.ts';
import { grpcAddressOf } from './support/grpc.ts';
import { parsePrometheus, valueOf as metricValue } from './support/prometheus.ts';
import { startNode, TEST_TOKEN, type TestNode } from './support/node.ts';

setDefaultTimeout(20_000); // per file (Bun scopes it so): real servers and processes are slow on a busy machine

const auth = { serviceParameters: { authorization: `Bearer ${TEST_TOKEN}` } };
const textPart = (t: string) => ({
  content: { $case: 'text' as const, value: t },
  filename: '',
  mediaType: 'text/plain',
  metadata: undefined,
});
const message = (text: string, messageId: string, taskId = '') =>
  ({
    messageId: `${messageId}-${crypto.randomUUID()}`,
    role: Role.ROLE_USER,
    parts: [textPart(text)],
    contextId: '',
    taskId,
    extensions: [],
    referenceTaskIds: [],
    metadata: undefined,
  }) as any;

/** A client factory with the gRPC transport alone (the default one also has JSON-RPC and REST). */
const grpcOnly = () =>
  new ClientFactory({ ...ClientFactoryOptions.default, transports: [new GrpcTransportFactory()] });

let tck: TestNode;
/** The SDK's request types want every proto field; these tests send what a caller would. */
let client: any;

beforeAll(async () => {
  tck = await startNode(conformance());
  client = await grpcOnly().createFromUrl(tck.url);
});
afterAll(() => tck.dispose());

const caught = async (p: Promise<unknown>) => {
  try {
    await p;
  } catch (e) {
    return e as Error;
  }
  throw new Error('expected the call to fail');
};

describe('official SDK gRPC client', () => {
  test('picks the card’s GRPC interface: host:port of the binding’s own port', async () => {
    const address = grpcAddressOf(tck.node.card())!;
    expect(address).toMatch(/^127\.0\.0\.1:\d+$/);
    expect(address).not.toBe(new URL(tck.url).host);
    // With only the gRPC transport, a card without the interface leaves the SDK nothing to use.
    const plain = await startNode(conformance(), { grpc: false });
    try {
      expect(grpcAddressOf(plain.node.card())).toBeUndefined();
      await expect(grpcOnly().createFromUrl(plain.url)).rejects.toThrow();
    } finally {
      await plain.dispose();
    }
  });

  test('sends a message and gets the completed task with its agent message', async () => {
    const r: any = await client.sendMessage({ message: message('hi', 'tck-complete-task') }, auth);
    expect(r.status.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(r.status.message.parts[0].content).toEqual({ $case: 'text', value: 'Hello from TCK' });
    expect(r.history[0].role).toBe(Role.ROLE_USER);
    expect(Date.parse(r.status.timestamp)).toBeGreaterThan(0);
    // It went over gRPC: the node counted a gRPC call and no JSON-RPC or HTTP+JSON one.
    const metrics = parsePrometheus(await (await fetch(`${tck.url}/metrics`)).text());
    expect(
      metricValue(metrics, 'lume_grpc_requests_total', { method: 'SendMessage', status: 'OK' }),
    ).toBeGreaterThanOrEqual(1);
    for (const route of ['/a2a', '/message:send'])
      expect(
        metricValue(metrics, 'lume_http_requests_total', { route, method: 'POST', status: '200' }),
      ).toBe(0);
  });

  test('a Message answer comes back as a Message', async () => {
    const r: any = await client.sendMessage(
      { message: message('hi', 'tck-message-response') },
      auth,
    );
    expect(r.role).toBe(Role.ROLE_AGENT);
    expect(r.parts[0].content.value).toBe('Direct message response');
  });

  test('streams the task, working, the artifact and completed, in order', async () => {
    const events: any[] = [];
    for await (const ev of client.sendMessageStream(
      { message: message('go', 'tck-stream-001') },
      auth,
    ))
      events.push(ev);
    expect(events.map((e) => e.payload.$case)).toEqual([
      'task',
      'statusUpdate',
      'artifactUpdate',
      'statusUpdate',
    ]);
    expect(events[2].payload.value.artifact.parts[0].content.value).toBe(
      'Streaming artifact from TCK',
    );
    expect(events[3].payload.value.status.state).toBe(TaskState.TASK_STATE_COMPLETED);
  });

  test('gets, lists and cancels; a completed task is not cancelable; an unknown one not found', async () => {
    const done: any = await client.sendMessage(
      { message: message('x', 'tck-complete-task') },
      auth,
    );
    const got: any = await client.getTask({ id: done.id, historyLength: 1 } as any, auth);
    expect([got.id, got.history.length]).toEqual([done.id, 1]);
    const open: any = await client.sendMessage(
      {
        message: message('wait', 'tck-input-required'),
        configuration: { returnImmediately: true } as any,
      },
      auth,
    );
    expect(open.status.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    const listed: any = await client.listTasks(
      { tenant: '', contextId: open.contextId, status: 0, pageToken: '' } as any,
      auth,
    );
    expect(listed.tasks.map((t: any) => t.id)).toEqual([open.id]);
    const canceled: any = await client.cancelTask({ id: open.id } as any, auth);
    expect(canceled.status.state).toBe(TaskState.TASK_STATE_CANCELED);
    expect(
      (await caught(client.cancelTask({ id: done.id } as any, auth))).constructor.name,
    ).toMatch(/TaskNotCancelable/);
    expect(
      (await caught(client.getTask({ id: 'no-such-task' } as any, auth))).constructor.name,
    ).toMatch(/TaskNotFound/);
  });

  test('subscribes to an open task: the task first, then its updates as a follow-up completes it', async () => {
    const open: any = await client.sendMessage(
      {
        message: message('wait', 'tck-input-required'),
        configuration: { returnImmediately: true } as any,
      },
      auth,
    );
    const events: any[] = [];
    for await (const ev of client.resubscribeTask({ id: open.id } as any, auth)) {
      events.push(ev);
      if (events.length === 1)
        await client.sendMessage(
          {
            message: {
              ...message('done', 'tck-complete-task', open.id),
              contextId: open.contextId,
            },
          },
          auth,
        );
    }
    expect(events[0].payload.$case).toBe('task');
    expect(events.at(-1).payload.value.status.state).toBe(TaskState.TASK_STATE_COMPLETED);
  });

  test('creates, gets, lists and deletes a push config', async () => {
    const open: any = await client.sendMessage(
      {
        message: message('wait', 'tck-input-required'),
        configuration: { returnImmediately: true } as any,
      },
      auth,
    );
    const created: any = await client.createTaskPushNotificationConfig(
      { taskId: open.id, url: 'https://example.com/hook', token: 'tok', tenant: '', id: '' } as any,
      auth,
    );
    expect([created.taskId, created.url, created.token]).toEqual([
      open.id,
      'https://example.com/hook',
      'tok',
    ]);
    const got: any = await client.getTaskPushNotificationConfig(
      { taskId: open.id, id: created.id, tenant: '' } as any,
      auth,
    );
    expect(got.id).toBe(created.id);
    const listed: any = await client.listTaskPushNotificationConfig(
      { taskId: open.id, tenant: '', pageSize: 0, pageToken: '' } as any,
      auth,
    );
    expect(listed.configs.map((c: any) => c.id)).toEqual([created.id]);
    await client.deleteTaskPushNotificationConfig(
      { taskId: open.id, id: created.id, tenant: '' } as any,
      auth,
    );
    const after: any = await client.listTaskPushNotificationConfig(
      { taskId: open.id, tenant: '', pageSize: 0, pageToken: '' } as any,
      auth,
    );
    expect(after.configs).toEqual([]);
  });
});
