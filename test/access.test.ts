/**
 * The trust boundary, one attack per finding, sent as the attacker sent it against real servers on
 * port 0: each is refused with its code, nothing changes, and the server keeps serving. Findings:
 * a text/plain or cross-site POST makes the hub act (2, 4); `/a2a` runs any capability unsigned
 * (3); a foreign page joins the mesh socket (5); a forged Host + Origin pair passes the same-origin
 * check (6); tasks have no owner (7); MESH_TOKEN guards only the mesh (8); anyone fills the
 * executor (11). Then the console's sign-in, and a grep of everything the tests saw for secrets.
 */

import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { readdirSync, rmSync } from 'node:fs';
import { newSecret } from '../lib/auth/secret.ts';
import { SessionTable } from '../hub/http/sessions.ts';
import { A2A_SIGNED_SCOPE } from '../lib/node/node-auth.ts';
import { loadPeerIdentity } from '../lib/peer/keys.ts';
import { createPeerClient } from '../lib/peer/client.ts';
import { parseFleet } from '../lib/config/fleet-file.ts';
import { startExecutor, type ExecutorNode } from './support/executor.ts';
import { localInvoke, realNodeDefs, startFleet, type RunningFleet } from './support/fleet.ts';
import { msgV1, TEST_AUTH, TEST_TOKEN } from './support/node.ts';
import { startProcess } from './support/process.ts';

setDefaultTimeout(20_000); // per file (Bun scopes it so): real servers and processes are slow on a busy machine

const ALICE = newSecret();
const BOB = newSecret();
const MESH = newSecret();
const as = (token: string) => ({ Authorization: `Bearer ${token}` });

/** Every answer body and header the tests received, searched for secrets at the end. */
const seen: string[] = [];
/** Session secrets handed out during the tests. */
const sessionSecrets: string[] = [];

async function call(
  url: string,
  init: RequestInit & { headers?: Record<string, string> } = {},
): Promise<{ status: number; json: any; text: string; headers: Headers }> {
  const res = await fetch(url, { redirect: 'manual', ...init });
  const text = await res.text();
  res.headers.forEach((value, name) => {
    if (name !== 'set-cookie') seen.push(`${name}: ${value}`);
  });
  seen.push(text);
  let json: any;
  try {
    json = JSON.parse(text);
  } catch {}
  return { status: res.status, json, text, headers: res.headers };
}

const rpcBody = (method: string, params: unknown) =>
  JSON.stringify({ jsonrpc: '2.0', id: 1, method, params });
const rpc = (url: string, method: string, params: unknown, headers: Record<string, string> = {}) =>
  call(`${url}/a2a`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'A2A-Version': '1.0', ...headers },
    body: rpcBody(method, params),
  });
const skillMessage = (skill: string, args: Record<string, unknown>) => ({
  message: { ...msgV1(''), parts: [{ data: { skill, args } }] },
});

describe('finding 3: /a2a runs only what the policy allows', () => {
  let ex: ExecutorNode;
  beforeAll(async () => {
    ex = await startExecutor({ tokens: { alice: ALICE, bob: BOB } });
  });
  afterAll(async () => {
    seen.push(...ex.node.log.lines);
    await ex.stop();
    rmSync(ex.dataDir, { recursive: true, force: true });
  });

  test('exec.submit, exec.status and exec.cancel without proof are refused with 401 UNAUTHENTICATED; nothing runs', async () => {
    const jobsBefore = readdirSync(ex.jobsDir).length;
    for (const [skill, args] of [
      ['exec.submit', { prompt: 'x', recipe: 'slow' }],
      ['exec.status', { job_id: `job-${'0'.repeat(32)}` }],
      ['exec.cancel', { job_id: `job-${'0'.repeat(32)}` }],
    ] as const) {
      for (const params of [
        skillMessage(skill, args),
        { ...skillMessage(skill, args), configuration: { returnImmediately: true } },
      ]) {
        const r = await rpc(ex.node.url, 'SendMessage', params);
        expect([skill, r.status, r.json.error.code, r.headers.get('www-authenticate')]).toEqual([
          skill,
          401,
          -32000,
          'Bearer realm="lume-a2a"',
        ]);
      }
      const rest = await call(`${ex.node.url}/message:send`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'A2A-Version': '1.0' },
        body: JSON.stringify(skillMessage(skill, args)),
      });
      expect([rest.status, rest.json.error.status]).toEqual([401, 'UNAUTHENTICATED']);
      // A wrong token is no better than none, and a v0.3 request is refused alike.
      const wrong = await rpc(
        ex.node.url,
        'SendMessage',
        skillMessage(skill, args),
        as(newSecret()),
      );
      expect(wrong.status).toBe(401);
    }
    expect(readdirSync(ex.jobsDir).length).toBe(jobsBefore);
    // Nothing was stored as a task either: the anonymous caller's list is empty.
    expect((await rpc(ex.node.url, 'ListTasks', {})).json.result.tasks).toEqual([]);
    // Read-only capabilities stay open on loopback, and the node keeps serving.
    const open = await rpc(ex.node.url, 'SendMessage', skillMessage('resolve.nodes', {}));
    expect(open.json.result.task.status.state).toBe('TASK_STATE_COMPLETED');
  });

  test('a token holder and a signed fleet node may run jobs; a request signed for another node is refused', async () => {
    const viaToken = await rpc(
      ex.node.url,
      'SendMessage',
      skillMessage('exec.submit', { prompt: 'x', recipe: 'demo' }),
      as(ALICE),
    );
    expect(viaToken.json.result.task.status.state).toBe('TASK_STATE_COMPLETED');
    const { signer } = await loadPeerIdentity(ex.dataDir, 'a2a');
    const body = new TextEncoder().encode(
      rpcBody('SendMessage', skillMessage('exec.submit', { prompt: 'x', recipe: 'demo' })),
    );
    const signed = async (to: string) => ({
      ...(await signer.sign({ to, route: '/a2a', scope: A2A_SIGNED_SCOPE }, body)),
      'content-type': 'application/json',
      'A2A-Version': '1.0',
    });
    const asHub = await call(`${ex.node.url}/a2a`, {
      method: 'POST',
      headers: await signed('resolve'),
      body,
    });
    expect(asHub.json.result.task.status.state).toBe('TASK_STATE_COMPLETED');
    const elsewhere = await call(`${ex.node.url}/a2a`, {
      method: 'POST',
      headers: await signed('scanner'),
      body,
    });
    expect([elsewhere.status, elsewhere.json.error.message]).toEqual([
      401,
      expect.stringContaining('PEER_WRONG_RECEIVER'),
    ]);
    const replay = await call(`${ex.node.url}/a2a`, {
      method: 'POST',
      headers: await signed('resolve').then((h) => h),
      body: new TextEncoder().encode(
        rpcBody('SendMessage', skillMessage('exec.submit', { prompt: 'y', recipe: 'demo' })),
      ),
    });
    expect([replay.status, replay.json.error.message]).toEqual([
      401,
      expect.stringContaining('PEER_BAD_SIGNATURE'),
    ]);
    // The two jobs run for ten seconds: ended here, they take none of the next tests' slots.
    for (const started of [viaToken, asHub])
      await ex.ok('exec.cancel', {
        job_id: started.json.result.task.artifacts[0].parts[0].data.job_id,
      });
  });

  test("finding 11: one caller's jobs never lock out another; the hub's users each have their own limit", async () => {
    const started: string[] = [];
    const submit = async (onBehalfOf: string) =>
      ex.call('exec.submit', { prompt: 'x', recipe: 'slow' }, onBehalfOf);
    for (let i = 0; i < 3; i++) {
      const r = await submit('user:alice');
      expect(r.ok ? true : r.error).toBe(true); // the error says why when it fails
      if (r.ok) started.push((r.result as { job_id: string }).job_id);
    }
    const fourth = await submit('user:alice');
    expect(fourth.ok ? 'ran' : fourth.error.code).toBe('CALLER_BUSY');
    // Another user behind the same hub, and a token holder calling directly, still get jobs.
    const bob = await submit('user:bob');
    expect(bob.ok).toBe(true);
    if (bob.ok) started.push((bob.result as { job_id: string }).job_id);
    const direct = await rpc(
      ex.node.url,
      'SendMessage',
      skillMessage('exec.submit', { prompt: 'x', recipe: 'slow' }),
      as(BOB),
    );
    const job = direct.json.result.task.artifacts[0].parts[0].data;
    expect(job.state).toBe('running');
    started.push(job.job_id);
    // A malformed on-behalf-of is a bad request, not a way around the limit.
    const odd = await submit('alice');
    expect(odd.ok ? 'ran' : odd.error.code).toBe('PEER_BAD_REQUEST');
    for (const id of started) await ex.ok('exec.cancel', { job_id: id });
  });

  test('second review: a principal’s slots are counted once across every path, and only the hub (or a relay) names one', async () => {
    const started: string[] = [];
    const viaHub = () => ex.call('exec.submit', { prompt: 'x', recipe: 'slow' }, 'user:alice');
    const direct = async () => {
      const r = await rpc(
        ex.node.url,
        'SendMessage',
        skillMessage('exec.submit', { prompt: 'x', recipe: 'slow' }),
        as(ALICE),
      );
      return r.json.result?.task?.artifacts?.[0]?.parts?.[0]?.data ?? r.json;
    };
    for (const r of [await viaHub(), await viaHub()]) {
      expect(r.ok).toBe(true);
      if (r.ok) started.push((r.result as { job_id: string }).job_id);
    }
    const third = await direct();
    expect(third.state).toBe('running');
    started.push(third.job_id);
    // Her three slots are taken, by whichever path: before, 3 direct + 3 through the hub ran.
    const fourth = await viaHub();
    expect(fourth.ok ? 'ran' : fourth.error.code).toBe('CALLER_BUSY');
    expect(JSON.stringify(await direct())).toContain('CALLER_BUSY');
    // A fleet node that is not the hub naming someone else is refused (it could name anyone).
    const other = createPeerClient({
      signer: (await loadPeerIdentity(ex.dataDir, 'resolve')).signer,
      fleet: parseFleet({
        hub: { name: 'a2a', port: 1, role: 'hub', file: 'hub/main.ts' },
        nodes: [{ name: 'resolve', port: 1, role: 'r', file: 'x.ts', url: ex.node.url }],
      }),
    });
    const forged = await other.peerFetch(
      'resolve',
      'exec.submit',
      { prompt: 'x', recipe: 'slow' },
      {
        onBehalfOf: 'user:carol',
      },
    );
    expect(forged.ok ? 'ran' : forged.error.code).toBe('PEER_NOT_DELEGATE');
    for (const id of started) await ex.ok('exec.cancel', { job_id: id });
  });
});

describe('finding 7: tasks belong to whoever created them', () => {
  let ex: ExecutorNode;
  beforeAll(async () => {
    ex = await startExecutor({ tokens: { alice: ALICE, bob: BOB } });
  });
  afterAll(async () => {
    seen.push(...ex.node.log.lines);
    await ex.stop();
    rmSync(ex.dataDir, { recursive: true, force: true });
  });

  test("another principal's get, list, cancel, subscribe and push configs see TaskNotFound; the owner sees the webhook token only by id", async () => {
    const url = ex.node.url;
    const hook = {
      url: 'http://127.0.0.1:9/hook',
      token: 'hook-secret-7',
      authentication: { scheme: 'Bearer', credentials: 'cred-secret-7' },
    };
    const mine = (
      await rpc(
        url,
        'SendMessage',
        { ...skillMessage('resolve.nodes', {}), configuration: { returnImmediately: true } },
        as(ALICE),
      )
    ).json.result.task;
    // A text no keyword matches leaves the task waiting for input: open, so it can be canceled.
    const open = (
      await rpc(
        url,
        'SendMessage',
        { message: msgV1('hello there'), configuration: { returnImmediately: true } },
        as(ALICE),
      )
    ).json.result.task;
    expect(open.status.state).toBe('TASK_STATE_INPUT_REQUIRED');
    const created = await call(`${url}/tasks/${mine.id}/pushNotificationConfigs`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'A2A-Version': '1.0', ...as(ALICE) },
      body: JSON.stringify(hook),
    });
    expect(created.status).toBe(201);
    const configId = created.json.id;

    for (const [who, headers] of [
      ['bob', as(BOB)],
      ['anonymous', {}],
    ] as const) {
      const v1 = { 'A2A-Version': '1.0', ...headers };
      const answers = [
        await rpc(url, 'GetTask', { id: mine.id }, headers),
        await rpc(url, 'SubscribeToTask', { id: open.id }, headers),
        await rpc(url, 'GetTaskPushNotificationConfig', { taskId: mine.id, id: configId }, headers),
        await rpc(url, 'ListTaskPushNotificationConfigs', { taskId: mine.id }, headers),
        await rpc(url, 'SendMessage', { message: msgV1('more', { taskId: open.id }) }, headers),
      ];
      expect([who, answers.map((a) => a.json.error?.code)]).toEqual([
        who,
        [-32001, -32001, -32001, -32001, -32001],
      ]);
      const rest = [
        await call(`${url}/tasks/${mine.id}`, { headers: v1 }),
        await call(`${url}/tasks/${mine.id}/pushNotificationConfigs/${configId}`, { headers: v1 }),
      ];
      expect(rest.map((r) => r.status)).toEqual([404, 404]);
      expect(
        (await rpc(url, 'ListTasks', {}, headers)).json.result.tasks.map((t: any) => t.id),
      ).not.toContain(mine.id);
      // Changes: bob is told the task does not exist; an anonymous caller may not change anything at all.
      const cancel = await rpc(url, 'CancelTask', { id: open.id }, headers);
      const del = await call(`${url}/tasks/${mine.id}/pushNotificationConfigs/${configId}`, {
        method: 'DELETE',
        headers: v1,
      });
      const add = await call(`${url}/tasks/${mine.id}/pushNotificationConfigs`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', ...v1 },
        body: JSON.stringify({ url: 'http://127.0.0.1:9/steal' }),
      });
      expect([who, cancel.json.error.code, del.status, add.status]).toEqual(
        who === 'bob' ? [who, -32001, 404, 404] : [who, -32000, 401, 401],
      );
    }

    // Nothing changed for alice: her task is as it was, her one webhook is there.
    const still = (await rpc(url, 'GetTask', { id: open.id }, as(ALICE))).json.result;
    expect(still.status.state).toBe(open.status.state);
    const list = (await rpc(url, 'ListTaskPushNotificationConfigs', { taskId: mine.id }, as(ALICE)))
      .json.result.configs;
    expect(list).toEqual([
      { id: configId, taskId: mine.id, url: hook.url, authentication: { scheme: 'Bearer' } },
    ]);
    const got = (
      await rpc(url, 'GetTaskPushNotificationConfig', { taskId: mine.id, id: configId }, as(ALICE))
    ).json.result;
    expect(got.token).toBe(hook.token);
    expect(JSON.stringify(got)).not.toContain('cred-secret-7');
    expect(
      (await rpc(url, 'CancelTask', { id: open.id }, as(ALICE))).json.result.status.state,
    ).toBe('TASK_STATE_CANCELED');
  });
});

describe("the hub's browser boundary (findings 2, 4, 5, 6)", () => {
  let f: RunningFleet;
  beforeAll(async () => {
    f = await startFleet(await realNodeDefs(['scanner']));
  });
  afterAll(async () => {
    seen.push(...f.log.lines);
    await f.stop();
  });

  const traceCount = async () =>
    (await call(`${f.hubUrl}/api/trace?limit=500`)).json.records.length;
  const taskCount = async () =>
    (await rpc(f.hubUrl, 'ListTasks', {}, TEST_AUTH)).json.result.totalSize;
  const projects = async () =>
    (
      await call(`${f.hubUrl}/api/projects.list`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: '{}',
      })
    ).json.result.projects.map((p: any) => p.name);

  test('finding 2: a text/plain or cross-site POST to /a2a starts nothing', async () => {
    const tasks = await taskCount();
    const traced = await traceCount();
    const body = rpcBody('SendMessage', skillMessage('task.delegate', { prompt: 'fleet report' }));
    const attempts = [
      // A form on another site (text/plain, its own Origin), a fetch from there, and one that hides its Origin.
      [{ Origin: 'http://evil.example', 'Content-Type': 'text/plain' }, 403, 'FORBIDDEN_ORIGIN'],
      [
        { Origin: 'http://evil.example', 'Content-Type': 'application/json', ...TEST_AUTH },
        403,
        'FORBIDDEN_ORIGIN',
      ],
      [
        { 'Sec-Fetch-Site': 'cross-site', 'Content-Type': 'text/plain' },
        403,
        'FORBIDDEN_CROSS_SITE',
      ],
      // Even from the hub's own page, a body that is not JSON is refused.
      [{ Origin: f.hubUrl, 'Content-Type': 'text/plain', ...TEST_AUTH }, 415, 'NOT_JSON'],
    ] as const;
    for (const [headers, status, code] of attempts) {
      const r = await call(`${f.hubUrl}/a2a`, { method: 'POST', headers: { ...headers }, body });
      expect([r.status, r.json.error.code]).toEqual([status, code]);
    }
    expect([await taskCount(), await traceCount()]).toEqual([tasks, traced]);
    expect((await call(`${f.hubUrl}/health`)).status).toBe(200);
  });

  test('finding 4: a cross-site POST /api/projects.delete deletes nothing', async () => {
    await call(`${f.hubUrl}/api/projects.create`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: '{"name":"keep-me"}',
    });
    expect(await projects()).toContain('keep-me');
    for (const [headers, status, code] of [
      [{ Origin: 'http://evil.example', 'Content-Type': 'text/plain' }, 403, 'FORBIDDEN_ORIGIN'],
      [
        { 'Sec-Fetch-Site': 'cross-site', 'Content-Type': 'text/plain' },
        403,
        'FORBIDDEN_CROSS_SITE',
      ],
      [{ Origin: f.hubUrl, 'Content-Type': 'text/plain' }, 415, 'NOT_JSON'],
    ] as const) {
      const r = await call(`${f.hubUrl}/api/projects.delete`, {
        method: 'POST',
        headers: { ...headers },
        body: '{"name":"keep-me"}',
      });
      expect([r.status, r.json.error.code]).toEqual([status, code]);
    }
    expect(await projects()).toContain('keep-me');
  });

  test("finding 5: a foreign page cannot open the mesh socket; the hub's own page and other clients can", async () => {
    await call(`${f.hubUrl}/api/projects.create`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: '{"name":"room"}',
    });
    const open = (origin?: string) =>
      new Promise<string>((resolve) => {
        const ws = new WebSocket(
          `${f.hubUrl.replace('http', 'ws')}/v1/connect`,
          (origin ? { headers: { Origin: origin } } : {}) as never,
        );
        ws.onopen = () => {
          ws.send(
            JSON.stringify({
              type: 'hello',
              protocolVersion: 3,
              project: 'room',
              name: origin ? 'page' : 'agent',
            }),
          );
        };
        ws.onmessage = (e) => {
          resolve(JSON.parse(String(e.data)).type);
          ws.close();
        };
        ws.onerror = () => resolve('refused');
      });
    expect(await open('http://evil.example')).toBe('refused');
    expect(await open(f.hubUrl)).toBe('claimed');
    expect(await open()).toBe('claimed');
    // The refusal of the upgrade itself, as the browser sees it.
    const r = await call(`${f.hubUrl}/v1/connect`, {
      headers: {
        Origin: 'http://evil.example',
        Upgrade: 'websocket',
        Connection: 'Upgrade',
        'Sec-WebSocket-Version': '13',
        'Sec-WebSocket-Key': 'dGhlIHNhbXBsZSBub25jZQ==',
      },
    });
    expect([r.status, r.json.error.code]).toEqual([403, 'FORBIDDEN_ORIGIN']);
  });

  test('finding 6: a forged Host and Origin pair (DNS rebinding) gets 403 and no call is made', async () => {
    const traced = await traceCount();
    const port = new URL(f.hubUrl).port;
    for (const path of ['/api/local-invoke', '/a2a', '/api/trace', '/']) {
      const r = await call(`${f.hubUrl}${path}`, {
        method: path === '/api/trace' || path === '/' ? 'GET' : 'POST',
        headers: {
          Host: `evil.example:${port}`,
          Origin: `http://evil.example:${port}`,
          'Content-Type': 'application/json',
          ...TEST_AUTH,
        },
        ...(path === '/api/local-invoke'
          ? { body: '{"target":"scanner","capability":"scanner.status"}' }
          : path === '/a2a'
            ? { body: rpcBody('ListTasks', {}) }
            : {}),
      });
      expect([path, r.status, r.json?.error.code]).toEqual([path, 403, 'FORBIDDEN_HOST']);
    }
    expect(await traceCount()).toBe(traced);
    // The hub's own names still work; the same call from its page succeeds.
    expect(
      (await localInvoke(f.hubUrl, { target: 'scanner', capability: 'scanner.status' })).status,
    ).toBe(200);
  });

  test('on loopback nobody is handed a session; a console URL signs in as `console`, and acts only as it', async () => {
    const page = await call(`${f.hubUrl}/`);
    expect([page.status, page.headers.get('location'), page.headers.get('set-cookie')]).toEqual([
      303,
      '/login',
      null,
    ]);
    expect((await call(`${f.hubUrl}/login`)).headers.get('set-cookie')).toBeNull();
    const signedIn = await call(f.hub.consoleUrl());
    const cookie = signedIn.headers.get('set-cookie')!;
    expect(cookie).toMatch(
      new RegExp(
        `^lume_a2a_${new URL(f.hubUrl).port}=s_[A-Za-z0-9_-]{43}; Path=/; HttpOnly; SameSite=Strict; Max-Age=\\d+$`,
      ),
    );
    const secret = cookie.split(';')[0]!;
    sessionSecrets.push(secret.split('=')[1]!);
    expect(signedIn.text).not.toContain(secret.split('=')[1]!);
    const key = /<meta name="lume-key" content="([^"]+)">/.exec(signedIn.text)![1]!;
    const own = await localInvoke(
      f.hubUrl,
      { target: 'scanner', capability: 'scanner.status' },
      { Cookie: secret, 'X-Lume-Key': key, Authorization: '' },
    );
    expect(own.status).toBe(200);
    // The cookie without its page key is nobody.
    const bare = await localInvoke(
      f.hubUrl,
      { target: 'scanner', capability: 'scanner.status' },
      { Cookie: secret, Authorization: '' },
    );
    expect([bare.status, bare.json.error.code]).toEqual([401, 'UNAUTHENTICATED']);
    // The tester's tasks are not the console's.
    expect(
      (
        await call(`${f.hubUrl}/tasks`, {
          headers: { 'A2A-Version': '1.0', Cookie: secret, 'X-Lume-Key': key },
        })
      ).json.tasks,
    ).toEqual([]);
    // A forged cookie is no session.
    const forged = await localInvoke(
      f.hubUrl,
      { target: 'scanner', capability: 'scanner.status' },
      {
        Cookie: `lume_a2a_${new URL(f.hubUrl).port}=s_forged`,
        'X-Lume-Key': key,
        Authorization: '',
      },
    );
    expect([forged.status, forged.json.error.code]).toEqual([401, 'UNAUTHENTICATED']);
  });
});

describe('finding 8: one policy, MESH_TOKEN included', () => {
  let f: RunningFleet;
  beforeAll(async () => {
    f = await startFleet(await realNodeDefs(['scanner']), { hub: { meshToken: MESH } });
  });
  afterAll(async () => {
    seen.push(...f.log.lines);
    await f.stop();
  });

  test('the mesh socket: an upgrade with a token needs none in hello; without one, hello must carry it', async () => {
    await call(`${f.hubUrl}/api/projects.create`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', ...as(MESH) },
      body: '{"name":"closed"}',
    });
    const hello = (headers: Record<string, string>, token?: string) =>
      new Promise<string>((resolve) => {
        const ws = new WebSocket(`${f.hubUrl.replace('http', 'ws')}/v1/connect`, {
          headers,
        } as never);
        ws.onopen = () =>
          ws.send(
            JSON.stringify({
              type: 'hello',
              protocolVersion: 3,
              project: 'closed',
              name: `n${Math.random().toString(36).slice(2, 8)}`,
              ...(token ? { token } : {}),
            }),
          );
        ws.onmessage = (e) => {
          const f = JSON.parse(String(e.data));
          resolve(f.type === 'error' ? f.code : f.type);
          ws.close();
        };
        ws.onerror = () => resolve('refused');
      });
    expect(await hello({})).toBe('claim_rejected');
    expect(await hello({}, 'wrong')).toBe('claim_rejected');
    expect(await hello({}, MESH)).toBe('claimed');
    expect(await hello(as(MESH))).toBe('claimed');
    expect(await hello(as('lume_wrong'))).toBe('refused');
  });

  test('with MESH_TOKEN set, /a2a, /api/trace, /api/local-invoke and the mesh all need a principal; the mesh token is one', async () => {
    const routes: [string, { method?: string; body?: string; headers?: Record<string, string> }][] =
      [
        [
          '/a2a',
          {
            method: 'POST',
            headers: { 'Content-Type': 'application/json', 'A2A-Version': '1.0' },
            body: rpcBody('ListTasks', {}),
          },
        ],
        ['/tasks', { headers: { 'A2A-Version': '1.0' } }],
        ['/api/trace', {}],
        ['/api/trace/stream', {}],
        ['/api/fleet', {}],
        [
          '/api/local-invoke',
          {
            method: 'POST',
            headers: { 'Content-Type': 'application/json', Origin: f.hubUrl },
            body: '{"target":"scanner","capability":"scanner.status"}',
          },
        ],
        ['/v1/history?project=x', {}],
        [
          '/api/projects.list',
          { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{}' },
        ],
      ];
    for (const [path, init] of routes) {
      const anonymous = await call(`${f.hubUrl}${path}`, init);
      expect([path, anonymous.status]).toEqual([path, 401]);
    }
    for (const [path, init] of routes.filter(([p]) => p !== '/api/trace/stream')) {
      const withToken = await call(`${f.hubUrl}${path}`, {
        ...init,
        headers: { ...init.headers, ...as(MESH) },
      });
      expect([path, withToken.status]).toEqual([path, path.startsWith('/v1/history') ? 404 : 200]);
    }
    // The card and health stay public; the console page asks to sign in.
    expect((await call(`${f.hubUrl}/.well-known/agent-card.json`)).status).toBe(200);
    expect((await call(`${f.hubUrl}/`)).headers.get('location')).toBe('/login');
  });

  test('a hub process started with MESH_TOKEN says so at start', async () => {
    const p = await startProcess('hub/main.ts', [], { MESH_TOKEN: MESH });
    try {
      expect(
        await p.waitForLog(
          'hub requires a principal on every route but the card, health and sign-in (MESH_TOKEN is set)',
        ),
      ).toContain('(MESH_TOKEN is set)');
      expect((await call(`${p.url}/api/trace`)).status).toBe(401);
      expect((await call(`${p.url}/api/trace`, { headers: as(MESH) })).status).toBe(200);
      seen.push(p.log());
    } finally {
      await p.stop();
    }
  });
});

describe('the console sign-in', () => {
  let f: RunningFleet;
  let clock = Date.now();
  const sessions = new SessionTable({ ttlMs: 60_000, max: 3, maxPerName: 2, now: () => clock });
  const cookieName = () => f.hub.access.cookieName();
  /** The session a sign-in answer made: its cookie and page key, as the console sends them. */
  const sessionOf = (r: { headers: Headers; text: string }) => ({
    Cookie: r.headers.get('set-cookie')!.split(';')[0]!,
    'X-Lume-Key': /<meta name="lume-key" content="([^"]+)">/.exec(r.text)![1]!,
  });
  beforeAll(async () => {
    f = await startFleet(await realNodeDefs(['scanner']), {
      tokens: { alice: ALICE, bob: BOB },
      // The throttle has its own test (console-sessions.test.ts); these sign in more often.
      hub: { requireLogin: true, sessions, signInThrottle: { burst: 1000 } },
    });
  });
  afterAll(() => f.stop());

  const signIn = (token: string, headers: Record<string, string> = { Origin: '' }) =>
    call(`${f.hubUrl}/login`, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/x-www-form-urlencoded',
        Origin: f.hubUrl,
        ...headers,
      },
      body: new URLSearchParams({ token }).toString(),
    });

  test('the page is a plain form: no script, so the token never reaches JavaScript', async () => {
    expect((await call(`${f.hubUrl}/`)).headers.get('location')).toBe('/login');
    const page = await call(`${f.hubUrl}/login`);
    expect([page.status, page.headers.get('content-type')]).toEqual([
      200,
      'text/html; charset=utf-8',
    ]);
    expect(page.text).toContain('<form method="post" action="/login">');
    expect(page.text).not.toContain('<script');
  });

  test("a wrong token, another site's form, or a form without Origin gets no session", async () => {
    const wrong = await signIn(newSecret(), {});
    expect([
      wrong.status,
      wrong.headers.get('set-cookie'),
      wrong.text.includes('not valid'),
    ]).toEqual([401, null, true]);
    const foreign = await signIn(ALICE, { Origin: 'http://evil.example' });
    expect([foreign.status, foreign.json.error.code, foreign.headers.get('set-cookie')]).toEqual([
      403,
      'FORBIDDEN_ORIGIN',
      null,
    ]);
    const bare = await call(`${f.hubUrl}/login`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: `token=${ALICE}`,
    });
    expect([bare.status, bare.headers.get('set-cookie')]).toEqual([403, null]);
  });

  test('the right token gives an HttpOnly, SameSite=Strict cookie that acts as its name, with its page key, until it expires', async () => {
    const ok = await signIn(ALICE, {});
    expect(ok.status).toBe(200);
    const cookie = ok.headers.get('set-cookie')!;
    expect(cookie).toMatch(
      new RegExp(`^${cookieName()}=s_[^;]+; Path=/; HttpOnly; SameSite=Strict; Max-Age=60$`),
    );
    const session = sessionOf(ok);
    sessionSecrets.push(session.Cookie.split('=')[1]!);
    const headers = { ...session, Origin: f.hubUrl, 'Content-Type': 'application/json' };
    expect((await call(`${f.hubUrl}/api/trace`, { headers })).status).toBe(200);
    const sent = await call(`${f.hubUrl}/message:send`, {
      method: 'POST',
      headers: { ...headers, 'A2A-Version': '1.0' },
      body: JSON.stringify({ message: msgV1('which sector moved most?') }),
    });
    expect(sent.status).toBe(200);
    // The session is alice: a task made with her token is hers through the session too.
    const byToken = (await rpc(f.hubUrl, 'SendMessage', { message: msgV1('sectors?') }, as(ALICE)))
      .json.result.task;
    expect(
      (
        await call(`${f.hubUrl}/tasks/${byToken.id}`, {
          headers: { ...headers, 'A2A-Version': '1.0' },
        })
      ).status,
    ).toBe(200);
    clock += 61_000;
    expect((await call(`${f.hubUrl}/api/trace`, { headers })).status).toBe(401);
  });

  test('after signing in the browser returns to the page it came from, never to another site', async () => {
    for (const [next, to] of [
      ['/#/tasks', '/#/tasks'],
      ['//evil.example/x', '/'],
      ['https://evil.example', '/'],
      ['/\\evil.example', '/'],
    ] as [string, string][]) {
      const r = await call(`${f.hubUrl}/login`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded', Origin: f.hubUrl },
        body: new URLSearchParams({ token: ALICE, next }).toString(),
      });
      const goesTo = /<meta name="lume-next" content="([^"]*)">/.exec(r.text)?.[1];
      expect([next, r.status, goesTo]).toEqual([next, 200, to]);
      sessionSecrets.push(r.headers.get('set-cookie')!.split(';')[0]!.split('=')[1]!);
    }
    expect((await call(`${f.hubUrl}/login?next=${encodeURIComponent('/#/ask')}`)).text).toContain(
      'name="next" value="/#/ask"',
    );
    expect(
      (await call(`${f.hubUrl}/login?next=${encodeURIComponent('"><script>')}`)).text,
    ).not.toContain('<script');
  });

  test('the table is bounded: one name’s sessions replace its own oldest, a full table refuses, sign-out ends one', async () => {
    const bobs = await signIn(BOB, {});
    const alices: ReturnType<typeof sessionOf>[] = [];
    for (let i = 0; i < 3; i++) alices.push(sessionOf(await signIn(ALICE, {})));
    sessionSecrets.push(...[sessionOf(bobs), ...alices].map((c) => c.Cookie.split('=')[1]!));
    expect(sessions.size).toBe(3);
    const status = async (h: Record<string, string>) =>
      (await call(`${f.hubUrl}/api/trace`, { headers: h })).status;
    // alice's third sign-in ended her first, never bob's.
    expect(await Promise.all([sessionOf(bobs), ...alices].map(status))).toEqual([
      200, 401, 200, 200,
    ]);
    // Full of other names' live sessions: a new name is refused rather than signing anyone out.
    const carol = await call(`${f.hubUrl}/login`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Origin: f.hubUrl },
      body: JSON.stringify({ token: TEST_TOKEN }),
    });
    expect([carol.status, carol.json.error.code, carol.headers.get('set-cookie')]).toEqual([
      503,
      'SESSIONS_FULL',
      null,
    ]);
    const out = await call(`${f.hubUrl}/logout`, {
      method: 'POST',
      headers: { ...alices[2]!, Origin: f.hubUrl },
    });
    expect([out.status, out.headers.get('set-cookie')]).toEqual([
      303,
      `${cookieName()}=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0`,
    ]);
    expect(await status(alices[2]!)).toBe(401);
    expect(await status(sessionOf(bobs))).toBe(200);
  });

  test("with sign-in required, anonymous A2A calls are refused in A2A's own shapes", async () => {
    const r = await rpc(f.hubUrl, 'SendMessage', { message: msgV1('sectors?') });
    expect([r.status, r.json.error.code]).toEqual([401, -32000]);
    const rest = await call(`${f.hubUrl}/tasks`, { headers: { 'A2A-Version': '1.0' } });
    expect([rest.status, rest.json.error.status]).toEqual([401, 'UNAUTHENTICATED']);
    const card = (await call(`${f.hubUrl}/.well-known/agent-card.json`)).json;
    expect(card.securityRequirements).toEqual([{ schemes: { bearer: { list: [] } } }]);
    expect(card.security).toEqual([{ bearer: [] }]);
  });

  afterAll(() => {
    seen.push(...f.log.lines);
  });
});

describe('a node bound beyond loopback', () => {
  test('anonymous callers get only the card and health; the card says every call needs the bearer scheme', async () => {
    const { defaultAnonymous } = await import('../lib/auth/access.ts');
    expect(
      ['127.0.0.1', 'localhost', '::1', '0.0.0.0', '192.168.1.5', '::'].map(defaultAnonymous),
    ).toEqual(['read', 'read', 'read', 'none', 'none', 'none']);
    // The policy a 0.0.0.0 node gets, served on loopback for the test.
    const ex = await startExecutor({ tokens: { alice: ALICE }, anonymous: 'none' });
    try {
      const url = ex.node.url;
      expect((await call(`${url}/.well-known/agent-card.json`)).json.securityRequirements).toEqual([
        { schemes: { bearer: { list: [] } } },
      ]);
      expect((await call(`${url}/health`)).status).toBe(200);
      const read = await rpc(url, 'SendMessage', skillMessage('resolve.nodes', {}));
      expect([read.status, read.json.error.code]).toEqual([401, -32000]);
      expect((await call(`${url}/tasks`, { headers: { 'A2A-Version': '1.0' } })).status).toBe(401);
      expect(
        (await rpc(url, 'SendMessage', skillMessage('resolve.nodes', {}), as(ALICE))).json.result
          .task.status.state,
      ).toBe('TASK_STATE_COMPLETED');
      seen.push(...ex.node.log.lines);
    } finally {
      await ex.stop();
      rmSync(ex.dataDir, { recursive: true, force: true });
    }
  });

  test('anonymous callers may act only on loopback: A2A_OPEN beyond it is refused at start', async () => {
    const { createNode } = await import('../lib/node/create-node.ts');
    const def = (await realNodeDefs(['scanner'], { dataDir: undefined }))[0]!;
    expect(() =>
      createNode(def, { dataDir: '/nonexistent', host: '0.0.0.0', access: { anonymous: 'all' } }),
    ).toThrow('anonymous callers may act only on a loopback address');
  });
});

test('no token or session secret appears in anything the tests received or logged', () => {
  const secrets = [TEST_TOKEN, ALICE, BOB, MESH, ...sessionSecrets];
  expect(sessionSecrets.length).toBeGreaterThan(4);
  const all = seen.join('\n');
  expect(all.length).toBeGreaterThan(10_000);
  expect(secrets.filter((s) => all.includes(s))).toEqual([]);
});
