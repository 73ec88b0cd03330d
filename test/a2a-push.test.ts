/**
 * Push notifications: webhook delivery of every task update in order, with the configured
 * Authorization, retried after a failure; URLs that are not http(s) or point at non-public hosts
 * the allow-list does not name are refused; a node without push says so on its card and in its answers.
 */

import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { agentNode, gate, msgV03, msgV1, rpc, startNode, type TestNode } from './support/node.ts';

setDefaultTimeout(20_000); // per file (Bun scopes it so): real servers and processes are slow on a busy machine

interface Received {
  auth: string | null;
  token: string | null;
  type: string | null;
  body: any;
}

/** A webhook receiver on port 0 that fails the first `failFirst` requests with 500. */
function webhook(failFirst = 0) {
  const received: Received[] = [];
  let waiters: (() => void)[] = [];
  let calls = 0;
  const server = Bun.serve({
    port: 0,
    async fetch(req) {
      calls++;
      const body = await req.json();
      if (calls <= failFirst) return new Response('busy', { status: 500 });
      received.push({
        auth: req.headers.get('authorization'),
        token: req.headers.get('x-a2a-notification-token'),
        type: req.headers.get('content-type'),
        body,
      });
      for (const w of waiters) w();
      waiters = [];
      return new Response(null, { status: 204 });
    },
  });
  return {
    url: `http://127.0.0.1:${server.port}/hook`,
    received,
    get calls() {
      return calls;
    },
    /** Resolves once `n` deliveries have been accepted. */
    async until(n: number) {
      while (received.length < n) await new Promise<void>((r) => waiters.push(r));
    },
    stop: () => server.stop(true),
  };
}

let node: TestNode;
const release = gate();
beforeAll(async () => {
  node = await startNode(
    agentNode('pusher', {
      async handle(ctx) {
        ctx.working();
        await release.promise;
        ctx.artifact({ name: 'out', parts: [{ text: 'result' }] }, { lastChunk: true });
        ctx.complete();
      },
    }),
  );
});
afterAll(() => node.dispose());

describe('webhook delivery', () => {
  test('every update reaches the webhook in order with its Authorization, after a retry', async () => {
    const hook = webhook(1);
    try {
      const t = (
        await rpc(node.url, 'SendMessage', {
          message: msgV1('go'),
          configuration: {
            returnImmediately: true,
            taskPushNotificationConfig: {
              url: hook.url,
              token: 'tok-1',
              authentication: { scheme: 'Bearer', credentials: 'hook-secret' },
            },
          },
        })
      ).result.task;
      release.open();
      await hook.until(4);
      expect(hook.received.map((r) => Object.keys(r.body)[0])).toEqual([
        'task',
        'statusUpdate',
        'artifactUpdate',
        'statusUpdate',
      ]);
      expect(hook.received.map((r) => r.body.statusUpdate?.status.state ?? null)).toEqual([
        null,
        'TASK_STATE_WORKING',
        null,
        'TASK_STATE_COMPLETED',
      ]);
      expect(
        hook.received.every(
          (r) =>
            r.auth === 'Bearer hook-secret' &&
            r.token === 'tok-1' &&
            r.type === 'application/a2a+json',
        ),
      ).toBe(true);
      expect(hook.received[0]!.body.task.id).toBe(t.id);
      expect(hook.calls).toBe(5); // the first attempt failed and was retried
      expect(node.log.lines.join('\n')).not.toContain('hook-secret');
    } finally {
      hook.stop();
    }
  });

  test('a config created over v0.3 delivers v0.3 bodies', async () => {
    const hook = webhook();
    const n = await startNode(
      agentNode('pusher03', { handle: (ctx) => ctx.requireInput('more?') }),
    );
    try {
      const t = (await rpc(n.url, 'message/send', { message: msgV03('go') }, null)).result;
      const set = await rpc(
        n.url,
        'tasks/pushNotificationConfig/set',
        { taskId: t.id, pushNotificationConfig: { url: hook.url } },
        null,
      );
      expect(set.result.pushNotificationConfig.url).toBe(hook.url);
      await rpc(n.url, 'tasks/cancel', { id: t.id }, null);
      await hook.until(1);
      expect(hook.received[0]!.body).toMatchObject({
        kind: 'status-update',
        taskId: t.id,
        final: true,
        status: { state: 'canceled' },
      });
    } finally {
      hook.stop();
      await n.dispose();
    }
  });
});

describe('config methods and the allow rule', () => {
  test('create, get, list, delete (idempotent), with credentials never echoed', async () => {
    const t = (
      await rpc(node.url, 'SendMessage', {
        message: msgV1('x'),
        configuration: { returnImmediately: true },
      })
    ).result.task;
    const created = (
      await rpc(node.url, 'CreateTaskPushNotificationConfig', {
        taskId: t.id,
        url: 'http://localhost:9/a',
        authentication: { scheme: 'Bearer', credentials: 'c' },
      })
    ).result;
    expect(created).toEqual({
      id: expect.any(String),
      taskId: t.id,
      url: 'http://localhost:9/a',
      authentication: { scheme: 'Bearer' },
    });
    const named = (
      await rpc(node.url, 'CreateTaskPushNotificationConfig', {
        taskId: t.id,
        id: 'mine',
        url: 'http://127.0.0.1:9/b',
      })
    ).result;
    expect(named.id).toBe('mine');
    expect(
      (await rpc(node.url, 'GetTaskPushNotificationConfig', { taskId: t.id, id: 'mine' })).result
        .url,
    ).toBe('http://127.0.0.1:9/b');
    const listed = (await rpc(node.url, 'ListTaskPushNotificationConfigs', { taskId: t.id }))
      .result;
    expect(listed.configs.map((c: any) => c.id).sort()).toEqual([created.id, 'mine'].sort());
    expect(listed.nextPageToken).toBe('');
    expect(
      (await rpc(node.url, 'DeleteTaskPushNotificationConfig', { taskId: t.id, id: 'mine' }))
        .result,
    ).toBeNull();
    expect(
      (await rpc(node.url, 'DeleteTaskPushNotificationConfig', { taskId: t.id, id: 'mine' }))
        .result,
    ).toBeNull();
    expect(
      (await rpc(node.url, 'GetTaskPushNotificationConfig', { taskId: t.id, id: 'mine' })).error
        .code,
    ).toBe(-32001);
    expect(
      (await rpc(node.url, 'ListTaskPushNotificationConfigs', { taskId: crypto.randomUUID() }))
        .error.code,
    ).toBe(-32001);
  });

  test('URLs that are not http(s) or leave the allowed hosts are refused and not stored', async () => {
    const t = (
      await rpc(node.url, 'SendMessage', {
        message: msgV1('x'),
        configuration: { returnImmediately: true },
      })
    ).result.task;
    for (const url of [
      'file:///etc/passwd',
      'ftp://127.0.0.1/x',
      'gopher://127.0.0.1:70/',
      'http://192.168.1.10/hook',
      'http://169.254.169.254/latest/meta-data',
      'http://user:pw@127.0.0.1/x',
      'not a url',
    ]) {
      const r = await rpc(node.url, 'CreateTaskPushNotificationConfig', { taskId: t.id, url });
      expect([url, r.error?.code]).toEqual([url, -32602]);
    }
    const viaSend = await rpc(node.url, 'SendMessage', {
      message: msgV1('x'),
      configuration: { taskPushNotificationConfig: { url: 'http://10.0.0.1/x' } },
    });
    expect(viaSend.error.code).toBe(-32602);
    expect(
      (await rpc(node.url, 'ListTaskPushNotificationConfigs', { taskId: t.id })).result.configs,
    ).toEqual([]);
  });

  test('an allowed fleet host is accepted', async () => {
    const n = await startNode(agentNode('fleetpush', { handle: (ctx) => ctx.working() }), {
      pushAllowHosts: ['crm.internal'],
    });
    try {
      const t = (await rpc(n.url, 'SendMessage', { message: msgV1('x') })).result.task;
      expect(
        (
          await rpc(n.url, 'CreateTaskPushNotificationConfig', {
            taskId: t.id,
            url: 'https://crm.internal/hook',
          })
        ).result.url,
      ).toBe('https://crm.internal/hook');
    } finally {
      await n.dispose();
    }
  });

  test('with push off the card says so and every push method is -32003', async () => {
    const n = await startNode(agentNode('nopush', { handle: (ctx) => ctx.working() }), {
      push: false,
    });
    try {
      const card = await (await fetch(`${n.url}/.well-known/agent-card.json`)).json();
      expect(card.capabilities.pushNotifications).toBe(false);
      const t = (await rpc(n.url, 'SendMessage', { message: msgV1('x') })).result.task;
      for (const [m, p] of [
        ['CreateTaskPushNotificationConfig', { taskId: t.id, url: 'http://127.0.0.1:9/' }],
        ['GetTaskPushNotificationConfig', { taskId: t.id, id: 'x' }],
        ['ListTaskPushNotificationConfigs', { taskId: t.id }],
        ['DeleteTaskPushNotificationConfig', { taskId: t.id, id: 'x' }],
      ] as const)
        expect([m, (await rpc(n.url, m, p)).error.code]).toEqual([m, -32003]);
      expect(
        (await rpc(n.url, 'tasks/pushNotificationConfig/list', { id: t.id }, null)).error.code,
      ).toBe(-32003);
    } finally {
      await n.dispose();
    }
  });
});
