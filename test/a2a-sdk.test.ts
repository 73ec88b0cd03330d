/**
 * The official @a2a-js/sdk client, unchanged, against our node: its v1.0 ClientFactory client and
 * its v0.3 compatibility transport each fetch the card, send, stream, get, list, cancel and
 * resubscribe. The bearer token reaches them through the SDK's own authentication handler
 * (`createAuthenticatingFetchWithRetry`), and both card readers accept the card's security schemes.
 */

import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { Role, TaskState } from '@a2a-js/sdk';
import {
  Client,
  ClientFactory,
  ClientFactoryOptions,
  createAuthenticatingFetchWithRetry,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
  type AuthenticationHandler,
} from '@a2a-js/sdk/client';
import { LegacyJsonRpcTransport } from '@a2a-js/sdk/compat/v0_3/client';
import conformance from '../node/conformance.ts';
import scanner from '../node/scanner/index.ts';
import { FIXTURES, startNode, TEST_TOKEN, type TestNode } from './support/node.ts';

setDefaultTimeout(20_000); // per file (Bun scopes it so): real servers and processes are slow on a busy machine

/**
 * An authentication handler as an SDK user writes one: it sends the token it holds, and answers a
 * 401 challenge (WWW-Authenticate: Bearer) by retrying with it.
 */
const challenged: string[] = [];
const bearerHandler = (token: string): AuthenticationHandler => ({
  headers: async () => ({ Authorization: `Bearer ${token}` }),
  shouldRetryWithHeaders: async (_req, res) => {
    if (res.status !== 401) return undefined;
    challenged.push(res.headers.get('www-authenticate') ?? '');
    return { Authorization: `Bearer ${token}` };
  },
});
const authFetch = createAuthenticatingFetchWithRetry(fetch, bearerHandler(TEST_TOKEN));
/** The SDK's client factory, with the token handed over through its transports' fetch. */
const sdk = () =>
  new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports: [new JsonRpcTransportFactory({ fetchImpl: authFetch })],
    }),
  );

const textPart = (t: string) => ({
  content: { $case: 'text' as const, value: t },
  filename: '',
  mediaType: 'text/plain',
  metadata: undefined,
});
const dataPart = (d: Record<string, unknown>) => ({
  content: { $case: 'data' as const, value: d },
  filename: '',
  mediaType: 'application/json',
  metadata: undefined,
});
const message = (parts: any[], messageId: string = crypto.randomUUID(), taskId = '') =>
  ({
    messageId,
    role: Role.ROLE_USER,
    parts,
    contextId: '',
    taskId,
    extensions: [],
    referenceTaskIds: [],
    metadata: undefined,
  }) as any;

let scan: TestNode;
let tck: TestNode;

beforeAll(async () => {
  scan = await startNode(scanner({ fixturesDir: FIXTURES }));
  tck = await startNode(conformance());
});
afterAll(async () => {
  await scan.dispose();
  await tck.dispose();
});

describe('official SDK, protocol 1.0 (ClientFactory)', () => {
  test('fetches the card and picks the 1.0 JSON-RPC interface', async () => {
    const client = await sdk().createFromUrl(scan.url);
    const card = await client.getAgentCard();
    expect(card.name).toBe('scanner');
    // The bearer scheme, read in its 1.0 form; anonymous callers may read, so only the skills
    // that change state or run work require it.
    expect((card.securitySchemes.bearer as any).httpAuthSecurityScheme.scheme).toBe('Bearer');
    expect(card.securityRequirements).toBeUndefined();
    const guarded = card.skills.filter((s) => s.securityRequirements?.length).map((s) => s.id);
    expect(guarded).toEqual(['negotiation.propose']);
    expect(card.skills.find((s) => s.id === 'negotiation.propose')!.securityRequirements).toEqual([
      { schemes: { bearer: { list: [] } } },
    ]);
    expect(
      card.supportedInterfaces.map((i) => `${i.protocolBinding} ${i.protocolVersion}`),
    ).toEqual(['JSONRPC 1.0', 'JSONRPC 0.3', 'HTTP+JSON 1.0', 'GRPC 1.0']);
    expect(card.skills.map((s) => s.id)).toContain('sector.movement');
  });

  test('sends a text message and gets a completed task with an artifact', async () => {
    const client = await sdk().createFromUrl(scan.url);
    const r: any = await client.sendMessage({
      message: message([textPart('which sector moved most today?')]),
    } as any);
    expect(r.status.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(r.artifacts[0].name).toBe('sector.movement');
    const data = r.artifacts[0].parts[0].content;
    expect(data.$case).toBe('data');
    expect(data.value.sectors[0].sector).toBe('robotics');
  });

  test('streams working, artifact and completed after the task', async () => {
    const client = await sdk().createFromUrl(scan.url);
    const kinds: string[] = [];
    for await (const ev of client.sendMessageStream({
      message: message([dataPart({ skill: 'stock.quote', args: { code: '688981' } })]),
    } as any))
      kinds.push((ev as any).payload.$case);
    expect(kinds).toEqual(['task', 'statusUpdate', 'artifactUpdate', 'statusUpdate']);
  });

  test('gets and lists tasks, cancels an open one, refuses to cancel a completed one', async () => {
    const client = await sdk().createFromUrl(tck.url);
    const done: any = await client.sendMessage({
      message: message([textPart('hi')], 'tck-complete-task-1'),
    } as any);
    expect(done.status.state).toBe(TaskState.TASK_STATE_COMPLETED);
    const got: any = await client.getTask({ id: done.id, historyLength: 1 } as any);
    expect(got.id).toBe(done.id);
    expect(got.history.length).toBe(1);

    const open: any = await client.sendMessage({
      message: message([textPart('stay')], 'tck-input-required-1'),
      configuration: { returnImmediately: true },
    } as any);
    expect(open.status.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    const listed: any = await client.listTasks({
      tenant: '',
      contextId: open.contextId,
      status: TaskState.TASK_STATE_UNSPECIFIED,
      pageToken: '',
    } as any);
    expect(listed.tasks.map((t: any) => t.id)).toEqual([open.id]);

    const canceled: any = await client.cancelTask({ id: open.id } as any);
    expect(canceled.status.state).toBe(TaskState.TASK_STATE_CANCELED);
    let error: unknown;
    try {
      await client.cancelTask({ id: done.id } as any);
    } catch (e) {
      error = e;
    }
    expect((error as Error)?.constructor.name).toBe('JsonRpcTaskNotCancelableError');
  });

  test('resubscribes to a running task: first the task, then its updates until it ends', async () => {
    const client = await sdk().createFromUrl(tck.url);
    const open: any = await client.sendMessage({
      message: message([textPart('wait')], 'tck-input-required-2'),
      configuration: { returnImmediately: true },
    } as any);
    const events: any[] = [];
    const reading = (async () => {
      for await (const ev of client.resubscribeTask({ id: open.id } as any)) {
        events.push(ev);
        if (events.length === 1) await client.cancelTask({ id: open.id } as any);
      }
    })();
    await reading;
    expect(events.map((e) => e.payload.$case)).toEqual(['task', 'statusUpdate']);
    expect(events[1].payload.value.status.state).toBe(TaskState.TASK_STATE_CANCELED);
  });
});

describe("the token through the SDK's authentication handler", () => {
  test('without it, canceling is refused with a 401 challenge; the handler retries with the token', async () => {
    const bare = await new ClientFactory().createFromUrl(tck.url);
    const open: any = await bare.sendMessage({
      message: message([textPart('stay')], 'tck-input-required-anon'),
      configuration: { returnImmediately: true },
    } as any);
    await expect(bare.cancelTask({ id: open.id } as any)).rejects.toThrow();
    // The anonymous task is not the token holder's: it does not exist for them.
    const before = challenged.length;
    const mine: any = await sdk()
      .createFromUrl(tck.url)
      .then((c) =>
        c.sendMessage({
          message: message([textPart('stay')], 'tck-input-required-mine'),
          configuration: { returnImmediately: true },
        } as any),
      );
    const lazy = createAuthenticatingFetchWithRetry(fetch, {
      ...bearerHandler(TEST_TOKEN),
      headers: async () => ({}),
    });
    const retrying = new ClientFactory(
      ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
        transports: [new JsonRpcTransportFactory({ fetchImpl: lazy })],
      }),
    );
    const canceled: any = await (await retrying.createFromUrl(tck.url)).cancelTask({
      id: mine.id,
    } as any);
    expect(canceled.status.state).toBe(TaskState.TASK_STATE_CANCELED);
    expect(challenged.slice(before)).toEqual(['Bearer realm="lume-a2a"']);
  });

  test('both card readers accept the security schemes: the 1.0 form and the 0.3 translation', async () => {
    const raw = await (await fetch(`${scan.url}/.well-known/agent-card.json`)).json();
    const resolver = new DefaultAgentCardResolver({ legacyCompat: { enabled: true } });
    // 1.0: the card as it is (ProtoJSON), its scheme in the oneof form.
    const v1: any = resolver.normalizeAgentCard(raw);
    expect(v1.securitySchemes.bearer.httpAuthSecurityScheme).toEqual({
      scheme: 'Bearer',
      description: expect.any(String),
    });
    // 0.3: without the 1.0 interface list, as a 0.3 server serves it, the SDK translates the
    // OpenAPI form (`type: http`) and the skills' `security`.
    const { supportedInterfaces: _drop, ...asV03 } = raw;
    const v03 = resolver.normalizeAgentCard(asV03);
    expect(v03.securitySchemes.bearer!.scheme).toEqual({
      $case: 'httpAuthSecurityScheme',
      value: { scheme: 'bearer', bearerFormat: '', description: expect.any(String) },
    });
    for (const card of [v1, v03])
      expect(
        card.skills.find((s: any) => s.id === 'negotiation.propose')!.securityRequirements,
      ).toEqual([{ schemes: { bearer: { list: [] } } }]);
    expect(v03.supportedInterfaces.map((i) => i.protocolVersion)).toEqual(['0.3.0', '0.3']);
  });
});

describe('official SDK, protocol 0.3 (compatibility transport)', () => {
  const legacy = async (node: TestNode) => {
    const card = await (await fetch(`${node.url}/.well-known/agent-card.json`)).json();
    return new Client(
      new LegacyJsonRpcTransport({ endpoint: card.url, fetchImpl: authFetch }),
      card,
    );
  };

  test('the card works as a v0.3 card too', async () => {
    const card = await (await fetch(`${scan.url}/.well-known/agent-card.json`)).json();
    expect(card.protocolVersion).toBe('0.3.0');
    expect(card.url).toBe(`${scan.url}/a2a`);
    // A v0.3-only SDK setup picks the 0.3 interface from the same card.
    const factory = new ClientFactory(
      ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
        transports: [new JsonRpcTransportFactory({ legacyCompat: { enabled: true } } as any)],
      }),
    );
    const client = await factory.createFromAgentCard({
      ...card,
      supportedInterfaces: card.supportedInterfaces.filter((i: any) => i.protocolVersion === '0.3'),
    });
    const r: any = await client.sendMessage({
      message: message([textPart('scanner status')]),
    } as any);
    expect(r.status.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(r.artifacts[0].name).toBe('scanner.status');
  });

  test('send, stream, get, cancel, resubscribe over message/send and friends', async () => {
    const client = await legacy(tck);
    const done: any = await client.sendMessage({
      message: message([textPart('hi')], 'tck-artifact-data-1'),
    } as any);
    expect(done.status.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(done.artifacts[0].parts[0].content.value).toEqual({ key: 'value', count: 42 });

    const kinds: string[] = [];
    for await (const ev of client.sendMessageStream({
      message: message([textPart('s')], 'tck-stream-001-x'),
    } as any))
      kinds.push((ev as any).payload.$case);
    expect(kinds).toEqual(['task', 'statusUpdate', 'artifactUpdate', 'statusUpdate']);

    const got: any = await client.getTask({ id: done.id, historyLength: 0 } as any);
    expect(got.id).toBe(done.id);
    expect(got.history).toEqual([]);

    const open: any = await client.sendMessage({
      message: message([textPart('stay')], 'plain-3'),
    } as any);
    expect(open.status.state).toBe(TaskState.TASK_STATE_WORKING);
    const events: any[] = [];
    for await (const ev of client.resubscribeTask({ id: open.id } as any)) {
      events.push(ev);
      if (events.length === 1) {
        const c: any = await client.cancelTask({ id: open.id } as any);
        expect(c.status.state).toBe(TaskState.TASK_STATE_CANCELED);
      }
    }
    expect(events.map((e) => e.payload.$case)).toEqual(['task', 'statusUpdate']);
  });

  test('listing has no v0.3 JSON-RPC method: the transport says so', async () => {
    const client = await legacy(tck);
    await expect(client.listTasks({} as any)).rejects.toThrow();
  });
});
