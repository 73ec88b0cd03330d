/**
 * Webhooks cannot reach the local network: loopback, private, link-local, shared, multicast,
 * reserved and metadata addresses are refused in every spelling unless the allow-list names them;
 * names are resolved and the address connected to is the one checked; deliveries carry only the
 * protocol's headers; and 300 deliveries hanging on a receiver that never answers slow neither
 * a fleet call nor a task.
 */

import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import net from 'node:net';
import { WebhookSender } from '../lib/a2a/push/delivery.ts';
import type { PushConfig, TaskEvent } from '../lib/a2a/types.ts';
import { memoryLog } from '../lib/log.ts';
import { createGate } from '../lib/net/gate.ts';
import { createOutboundPolicy } from '../lib/net/outbound-policy.ts';
import { createPoster } from '../lib/net/post.ts';
import { localInvoke, realNodeDefs, startFleet, type RunningFleet } from './support/fleet.ts';
import { agentNode, msgV1, rpc, startNode, type TestNode } from './support/node.ts';

setDefaultTimeout(20_000); // per file (Bun scopes it so): real servers and processes are slow on a busy machine

const REFUSED_URLS = [
  'http://127.0.0.1/h',
  'http://2130706433/h',
  'http://0177.0.0.1/h',
  'http://0x7f.0.0.1/h',
  'http://0x7f000001/h',
  'http://017700000001/h',
  'http://127.1/h',
  'http://127.0.1/h',
  'http://127.255.255.254:8080/h',
  'http://[::1]/h',
  'http://[0:0:0:0:0:0:0:1]/h',
  'http://[::ffff:127.0.0.1]/h',
  'http://[::ffff:7f00:1]/h',
  'http://[::127.0.0.1]/h',
  'http://0.0.0.0/h',
  'http://0/h',
  'http://[::]/h',
  'http://localhost:9/h',
  'http://LOCALHOST./h',
  'http://api.localhost/h',
  'http://10.0.0.1/h',
  'http://172.16.5.4/h',
  'http://192.168.1.1/h',
  'http://100.64.0.1/h',
  'http://169.254.169.254/latest/meta-data',
  'http://[::ffff:169.254.169.254]/h',
  'http://[fd00:ec2::254]/h',
  'http://192.0.0.192/h',
  'http://169.254.1.1/h',
  'http://[fe80::1]/h',
  'http://[fd12:3456::1]/h',
  'http://224.0.0.1/h',
  'http://255.255.255.255/h',
  'http://198.18.0.1/h',
  'http://[ff02::1]/h',
  'http://[64:ff9b::a00:1]/h',
  'http://[2002:7f00:1::]/h',
  'https://0xa9.0xfe.0xa9.0xfe/h',
];

describe('addresses refused by default', () => {
  let node: TestNode;
  beforeAll(async () => {
    node = await startNode(agentNode('guarded', { handle: (ctx) => ctx.requireInput('more?') }), {
      pushAllowHosts: [],
    });
  });
  afterAll(() => node.dispose());

  test('every spelling of a non-public address is -32602 when the config is created, and nothing is stored', async () => {
    const task = (await rpc(node.url, 'SendMessage', { message: msgV1('x') })).result.task;
    const answers = [];
    for (const url of REFUSED_URLS) {
      const r = await rpc(node.url, 'CreateTaskPushNotificationConfig', { taskId: task.id, url });
      answers.push([
        url,
        r.error?.code,
        /only public addresses are allowed unless PUSH_ALLOW_HOSTS lists it$/.test(
          r.error?.message ?? '',
        ),
      ]);
    }
    expect(answers).toEqual(REFUSED_URLS.map((u) => [u, -32602, true]));
    const viaSend = await rpc(node.url, 'SendMessage', {
      message: msgV1('x'),
      configuration: { taskPushNotificationConfig: { url: 'http://2130706433:9/x' } },
    });
    expect(viaSend.error.code).toBe(-32602);
    expect(
      (await rpc(node.url, 'ListTaskPushNotificationConfigs', { taskId: task.id })).result.configs,
    ).toEqual([]);
  });

  test('public addresses and names pass the first check; the allow-list admits names, addresses and ranges', () => {
    const open = new WebhookSender({ allowHosts: [], log: memoryLog() });
    expect(
      [
        'https://8.8.8.8/h',
        'https://[2606:4700::1111]/h',
        'https://hooks.example/h',
        'http://172.32.0.1/h',
      ].map((u) => open.refuse(u)),
    ).toEqual([undefined, undefined, undefined, undefined]);
    const dev = new WebhookSender({
      allowHosts: ['localhost', '10.0.0.0/8', '::1', ' Hooks.LAN '],
      log: memoryLog(),
    });
    expect(
      ['http://localhost:9/h', 'http://10.9.8.7/h', 'http://[::1]/h', 'http://hooks.lan/h'].map(
        (u) => dev.refuse(u),
      ),
    ).toEqual([undefined, undefined, undefined, undefined]);
    const policyRefusal = (kind: string, host: string) => ({
      code: 'ADDRESS_REFUSED' as const,
      message: `webhook host ${host} is a ${kind} address; only public addresses are allowed unless PUSH_ALLOW_HOSTS lists it`,
      field: 'url',
    });
    expect(dev.refuse('http://127.0.0.1/h')).toEqual(policyRefusal('loopback', '127.0.0.1'));
    expect(dev.refuse('http://11.0.0.1/h')).toBeUndefined();
    expect(dev.refuse('http://192.168.0.1/h')).toEqual(policyRefusal('private', '192.168.0.1'));
  });

  test('a URL that is not an http(s) address without credentials is refused with its code', () => {
    const open = new WebhookSender({ allowHosts: [], log: memoryLog() });
    expect(
      ['not a url', 'ftp://hooks.example/h', 'https://user:pw@hooks.example/h'].map((u) =>
        open.refuse(u),
      ),
    ).toEqual([
      { code: 'WEBHOOK_URL_INVALID', message: 'webhook URL is not a valid URL', field: 'url' },
      {
        code: 'WEBHOOK_URL_SCHEME',
        message: 'webhook URL must use http or https, not ftp',
        field: 'url',
      },
      {
        code: 'WEBHOOK_URL_CREDENTIALS',
        message: 'webhook URL must not carry credentials; use the authentication field',
        field: 'url',
      },
    ]);
  });
});

describe('names are resolved, and the address checked is the address connected to', () => {
  test('a name that resolves to loopback is refused at delivery; one resolving to an allowed address is delivered there, with its Host', async () => {
    const hits: { host: string | null }[] = [];
    let arrived: () => void = () => {};
    const receiver = Bun.serve({
      hostname: '127.0.0.2',
      port: 0,
      fetch: (req) => {
        hits.push({ host: req.headers.get('host') });
        arrived();
        return new Response(null, { status: 204 });
      },
    });
    // These names exist only in this table: a connection that reaches the receiver used the
    // address the policy checked, since no other resolver knows the name.
    const table: Record<string, string[]> = {
      'rebind.test': ['127.0.0.1'],
      'mixed.test': ['127.0.0.2', '10.0.0.1'],
      'hook.test': ['127.0.0.2'],
    };
    let lookups = 0;
    const log = memoryLog();
    const sender = new WebhookSender({
      allowHosts: ['127.0.0.2/32'],
      log,
      retryDelaysMs: [],
      resolveName: async (h) => {
        lookups++;
        return (table[h] ?? []).map((address) => ({ address, family: 4 }));
      },
    });
    try {
      const port = receiver.port;
      const cfgs = ['rebind.test', 'mixed.test'].map((h, i) =>
        config(`http://${h}:${port}/in`, `c${i}`),
      );
      // Registered under an older rule (the check at creation now refuses them): delivery refuses again.
      expect(cfgs.map((c) => sender.refuse(c.url))).toEqual([undefined, undefined]);
      sender.notify(cfgs, statusEvent());
      await sender.idle();
      expect(hits).toEqual([]);
      expect(log.lines.filter((l) => l.includes('webhook delivery refused')).length).toBe(2);
      expect(log.lines.join('\n')).toContain('rebind.test is a loopback address');
      expect(log.lines.join('\n')).toContain('mixed.test is a private address');

      const got = new Promise<void>((r) => (arrived = r));
      sender.notify([config(`http://hook.test:${port}/in`, 'ok')], statusEvent());
      await got;
      await sender.idle();
      expect(hits).toEqual([{ host: `hook.test:${port}` }]);
      expect(lookups).toBe(3);
      expect(
        (await Promise.all(cfgs.map((c) => sender.refuseResolved(c.url)))).map((r) => r?.code),
      ).toEqual(['ADDRESS_REFUSED', 'ADDRESS_REFUSED']);
    } finally {
      receiver.stop(true);
    }
  });

  test('a literal address is checked at delivery too', async () => {
    const log = memoryLog();
    const sender = new WebhookSender({ allowHosts: [], log, retryDelaysMs: [] });
    // Created by an older rule (the check at creation would refuse it): delivery refuses again.
    sender.notify([config('http://127.0.0.1:9/in', 'old')], statusEvent());
    await sender.idle();
    expect(log.lines.join('\n')).toContain('webhook delivery refused: not a public address');
  });
});

describe('a name is resolved when the webhook is registered', () => {
  // Only this table resolves: nothing leaves the machine.
  const table: Record<string, string[]> = {
    'metadata.google.internal': ['169.254.169.254'],
    'intranet.test': ['10.1.2.3'],
    'allowed.test': ['10.1.2.4'],
    'public.test': ['93.184.216.34'],
  };
  let node: TestNode;
  beforeAll(async () => {
    node = await startNode(agentNode('named', { handle: (ctx) => ctx.requireInput('more?') }), {
      pushAllowHosts: ['allowed.test'],
      pushResolveName: async (h) => (table[h] ?? []).map((address) => ({ address, family: 4 })),
    });
  });
  afterAll(() => node.dispose());

  test('a name for a non-public address is -32602 on create and on send, and nothing is stored; allowed and public names are kept', async () => {
    const task = (await rpc(node.url, 'SendMessage', { message: msgV1('x') })).result.task;
    const create = (url: string) =>
      rpc(node.url, 'CreateTaskPushNotificationConfig', { taskId: task.id, url });
    const refused = [];
    for (const url of ['http://metadata.google.internal/x', 'https://intranet.test:8443/h']) {
      const r = await create(url);
      refused.push([r.error?.code, violatedField(r), r.error?.message]);
    }
    expect(refused).toEqual([
      [
        -32602,
        'url',
        'webhook host metadata.google.internal resolves to a metadata address; only public addresses are allowed unless PUSH_ALLOW_HOSTS lists it',
      ],
      [
        -32602,
        'url',
        'webhook host intranet.test resolves to a private address; only public addresses are allowed unless PUSH_ALLOW_HOSTS lists it',
      ],
    ]);
    const viaSend = await rpc(node.url, 'SendMessage', {
      message: msgV1('y'),
      configuration: { taskPushNotificationConfig: { url: 'http://metadata.google.internal/' } },
    });
    expect([viaSend.error?.code, viaSend.result]).toEqual([-32602, undefined]);
    expect(
      (await rpc(node.url, 'ListTaskPushNotificationConfigs', { taskId: task.id })).result.configs,
    ).toEqual([]);
    for (const url of ['http://allowed.test/h', 'https://public.test/h'])
      expect((await create(url)).result?.url).toBe(url);
  });
});

/** The field a JSON-RPC INVALID_PARAMS answer names (google.rpc.BadRequest). */
const violatedField = (r: any): unknown => r.error?.data?.[0]?.fieldViolations?.[0]?.field;

describe('what a delivery carries', () => {
  test('only Bearer or Basic with token68 credentials, and a visible-ASCII token', async () => {
    const node = await startNode(
      agentNode('authcheck', { handle: (ctx) => ctx.requireInput('more?') }),
    );
    try {
      const task = (await rpc(node.url, 'SendMessage', { message: msgV1('x') })).result.task;
      const bad = [
        { scheme: 'X-Internal-Admin', credentials: 'yes' },
        { scheme: 'Bearer', credentials: 'a b' },
        { scheme: 'Bearer', credentials: 'a\r\nX-Forwarded-For: 10.0.0.1' },
        { scheme: 'Basic realm="x"', credentials: 'abc' },
        { scheme: 'Digest', credentials: 'abc' },
      ];
      for (const authentication of bad) {
        const r = await rpc(node.url, 'CreateTaskPushNotificationConfig', {
          taskId: task.id,
          url: 'http://127.0.0.1:9/h',
          authentication,
        });
        expect([authentication.scheme, r.error?.code, violatedField(r)]).toEqual([
          authentication.scheme,
          -32602,
          'params.authentication',
        ]);
      }
      const badToken = await rpc(node.url, 'CreateTaskPushNotificationConfig', {
        taskId: task.id,
        url: 'http://127.0.0.1:9/h',
        token: 'a b',
      });
      expect([badToken.error.code, violatedField(badToken)]).toEqual([-32602, 'params.token']);
      const v03 = await rpc(
        node.url,
        'tasks/pushNotificationConfig/set',
        {
          taskId: task.id,
          pushNotificationConfig: {
            url: 'http://127.0.0.1:9/h',
            authentication: { schemes: ['Cookie'] },
          },
        },
        null,
      );
      expect(v03.error.code).toBe(-32602);
      expect(
        (await rpc(node.url, 'ListTaskPushNotificationConfigs', { taskId: task.id })).result
          .configs,
      ).toEqual([]);
      const ok = await rpc(node.url, 'CreateTaskPushNotificationConfig', {
        taskId: task.id,
        url: 'http://127.0.0.1:9/h',
        authentication: { scheme: 'bearer', credentials: 'abc.DEF-123~+/=' },
      });
      expect(ok.result.authentication).toEqual({ scheme: 'bearer' });
    } finally {
      await node.dispose();
    }
  });

  test('the scheme is sent in its standard spelling', async () => {
    let seen = null as string | null;
    let arrived: () => void = () => {};
    const receiver = Bun.serve({
      port: 0,
      hostname: '127.0.0.1',
      fetch: (req) => {
        seen = req.headers.get('authorization');
        arrived();
        return new Response(null, { status: 204 });
      },
    });
    const sender = new WebhookSender({ allowHosts: ['127.0.0.1'], log: memoryLog() });
    try {
      const got = new Promise<void>((r) => (arrived = r));
      sender.notify(
        [
          {
            ...config(`http://127.0.0.1:${receiver.port}/h`, 'a'),
            authentication: { scheme: 'bearer', credentials: 'tok' },
          },
        ],
        statusEvent(),
      );
      await got;
      await sender.idle();
      expect(seen).toBe('Bearer tok');
    } finally {
      receiver.stop(true);
    }
  });
});

describe('a receiver that accepts and never answers', () => {
  let fleet: RunningFleet;
  let hang: net.Server;
  const sockets = new Set<net.Socket>();
  let accepted = 0;
  let onAccept: () => void = () => {};
  beforeAll(async () => {
    fleet = await startFleet(await realNodeDefs(['scanner']));
    hang = net.createServer((s) => {
      accepted++;
      sockets.add(s);
      s.on('error', () => {});
      s.on('data', () => {}); // read the request, never answer
      onAccept();
    });
    await new Promise<void>((r) => hang.listen(0, '127.0.0.1', r));
  });
  afterAll(async () => {
    for (const s of sockets) s.destroy();
    hang.close();
    await fleet.stop();
  });

  test('300 hanging deliveries hold their own 16 sockets; fleet calls and tasks go on meanwhile', async () => {
    const hookUrl = `http://127.0.0.1:${(hang.address() as net.AddressInfo).port}/hook`;
    const sender = new WebhookSender({
      allowHosts: ['127.0.0.1'],
      log: memoryLog(),
      timeoutMs: 120_000,
      retryDelaysMs: [],
    });
    const full = new Promise<void>((r) => (onAccept = () => accepted >= 16 && r()));
    sender.notify(
      Array.from({ length: 300 }, (_, i) => config(hookUrl, `hook-${i}`, `task-${i}`)),
      statusEvent(),
    );
    await full;
    expect(sender.stats()).toEqual({ pending: 300, inFlight: 16 });

    // A node whose tasks each have a webhook on the same receiver: the tasks still complete.
    const node = await startNode(agentNode('busy', { handle: (ctx) => ctx.complete('done') }));
    try {
      for (let i = 0; i < 5; i++) {
        const r = await rpc(node.url, 'SendMessage', {
          message: msgV1(`t${i}`),
          configuration: { taskPushNotificationConfig: { url: hookUrl } },
        });
        expect(r.result.task.status.state).toBe('TASK_STATE_COMPLETED');
      }
      // Fleet calls through the hub, while every delivery is still hanging.
      for (let i = 0; i < 20; i++) {
        const r = await localInvoke(fleet.hubUrl, {
          target: 'scanner',
          capability: 'sector.movement',
          args: {},
        });
        expect([r.status, r.json.ok]).toEqual([200, true]);
      }
    } finally {
      await node.dispose();
    }
    // The hang was still going on when the calls above finished: nothing was answered or released.
    expect(sender.stats().pending).toBe(300);
    expect(accepted).toBeLessThanOrEqual(16 + 16); // this sender's 16, and at most the node's own 16
    for (const s of sockets) s.destroy();
    hang.close();
    await sender.idle();
    expect(sender.stats()).toEqual({ pending: 0, inFlight: 0 });
  }, 30_000);

  test('the waiting line is bounded: past it, updates are dropped with one log line per webhook', async () => {
    const log = memoryLog();
    const blocker = net.createServer((s) => s.on('error', () => {}));
    await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(blocker.address() as net.AddressInfo).port}/h`;
    const sender = new WebhookSender({
      allowHosts: ['127.0.0.1'],
      log,
      timeoutMs: 50,
      retryDelaysMs: [],
      maxConcurrent: 2,
      maxPending: 5,
    });
    const cfg = config(url, 'one');
    for (let i = 0; i < 8; i++) sender.notify([cfg], statusEvent());
    expect(sender.stats().pending).toBe(5);
    expect(log.lines.filter((l) => l.includes('webhook update dropped')).length).toBe(1);
    await sender.idle();
    blocker.close();
  });
});

describe('the gate', () => {
  test('never runs more than its limit, and hands a finished turn to the next in line', async () => {
    const gate = createGate(2, 3);
    let running = 0;
    let most = 0;
    const releases: (() => void)[] = [];
    const task = () =>
      new Promise<void>((r) => {
        running++;
        most = Math.max(most, running);
        releases.push(() => {
          running--;
          r();
        });
      });
    const runs = Array.from({ length: 5 }, () => gate.run(task));
    expect(runs.filter((r) => r === undefined).length).toBe(0);
    expect(gate.run(task)).toBeUndefined(); // 2 running, 3 waiting: full
    let finished = 0;
    while (finished < 5) {
      releases.shift()!();
      finished++;
      await new Promise((r) => setImmediate(r)); // let the next in line start
      expect(running).toBe(Math.min(2, 5 - finished));
    }
    await Promise.all(runs);
    expect(most).toBe(2);
    expect([gate.active, gate.waiting]).toEqual([0, 0]);
  });
});

describe('the outbound policy', () => {
  test('refuses names whose resolution fails or is empty', async () => {
    const policy = createOutboundPolicy([], async () => []);
    await expect(policy.resolve('nothing.test')).rejects.toThrow(
      'nothing.test is a reserved address',
    );
  });
});

describe('one POST', () => {
  test('each outcome is a Result: the 2xx status, or a coded failure', async () => {
    let release: () => void = () => {};
    const receiver = Bun.serve({
      hostname: '127.0.0.1',
      port: 0,
      fetch: (req) => {
        const path = new URL(req.url).pathname;
        if (path === '/ok') return new Response(null, { status: 204 });
        if (path === '/busy') return new Response('busy', { status: 503 });
        return new Promise<Response>((r) => (release = () => r(new Response())));
      },
    });
    const gone = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response() });
    const gonePort = gone.port;
    gone.stop(true);
    const policy = createOutboundPolicy(['127.0.0.1']);
    // A generous deadline where an answer comes (a loaded machine is slow), a short one where none does.
    const poster = createPoster({ policy, maxSockets: 4, timeoutMs: 15_000 });
    const impatient = createPoster({ policy, maxSockets: 1, timeoutMs: 200 });
    try {
      const at = (url: string) => poster.post(new URL(url), {}, '{}');
      const base = `http://127.0.0.1:${receiver.port}`;
      expect(await at(`${base}/ok`)).toEqual({ ok: true, result: { status: 204 } });
      expect(await at(`${base}/busy`)).toEqual({
        ok: false,
        error: { code: 'WEBHOOK_REJECTED', message: 'the webhook answered HTTP 503', status: 503 },
      });
      expect(await impatient.post(new URL(`${base}/hang`), {}, '{}')).toEqual({
        ok: false,
        error: { code: 'WEBHOOK_TIMEOUT', message: 'no answer within 200 ms' },
      });
      expect(await at(`http://127.0.0.1:${gonePort}/in`)).toEqual({
        ok: false,
        error: { code: 'WEBHOOK_UNREACHABLE', message: 'the webhook could not be reached' },
      });
      expect(await at('http://10.0.0.1/in')).toEqual({
        ok: false,
        error: { code: 'ADDRESS_REFUSED', message: '10.0.0.1 is a private address' },
      });
    } finally {
      release();
      poster.close();
      impatient.close();
      receiver.stop(true);
    }
  });
});

function config(url: string, id: string, taskId = 'task-1'): PushConfig {
  return { id, taskId, url, version: '1.0' };
}

function statusEvent(): TaskEvent {
  return {
    kind: 'status',
    taskId: 'task-1',
    contextId: 'ctx-1',
    status: { state: 'working', timestamp: new Date().toISOString() },
    final: false,
  };
}
