/**
 * Test support: the fuzzed surfaces (a node's `/a2a`, its HTTP+JSON routes, `/peer/invoke` and
 * `/peer/relay` signed and unsigned, the hub's `/a2a`, `/api/*` and the mesh's HTTP routes, and the
 * mesh WebSocket), each with valid examples to bend, and the judge of an answer: a 5xx, a JSON-RPC
 * internal error or a dropped connection is a finding. Used by `bun test` (in process) and by
 * `bun run fuzz` (against real processes).
 */

import type { PeerSigner } from '../../lib/peer/signer.ts';
import { hostileBody, int, pick, seeded, type Rng } from './hostile.ts';
import { TEST_TOKEN } from './node.ts';

export interface Finding {
  target: string;
  kind: string;
  what: string;
  /** The request, shortened: method, path and the first bytes of the body. */
  sample: string;
}

export interface Target {
  name: string;
  /** The request for one hostile body (`base` is the server's origin). */
  request(
    base: string,
    body: string | Uint8Array<ArrayBuffer>,
    rng: Rng,
  ): Promise<Request> | Request;
  templates: readonly unknown[];
}

export interface FuzzReport {
  sent: number;
  statuses: Record<string, number>;
  findings: Finding[];
}

const uuid = () => crypto.randomUUID();
const msg03 = (parts: unknown[], extra: Record<string, unknown> = {}) => ({
  kind: 'message',
  messageId: 'fuzz-1',
  role: 'user',
  parts,
  ...extra,
});
const msg1 = (parts: unknown[], extra: Record<string, unknown> = {}) => ({
  messageId: 'fuzz-1',
  role: 'ROLE_USER',
  parts,
  ...extra,
});

/** JSON-RPC requests in both protocol versions, for a node whose capabilities are `skills`. */
export function rpcTemplates(
  skills: readonly { skill: string; args: Record<string, unknown> }[],
): unknown[] {
  const rpc = (method: string, params: unknown) => ({ jsonrpc: '2.0', id: 1, method, params });
  const out: unknown[] = [];
  for (const s of skills) {
    out.push(rpc('message/send', { message: msg03([{ kind: 'data', data: s }]) }));
    out.push(
      rpc('SendMessage', {
        message: msg1([{ data: s }]),
        configuration: { returnImmediately: false, historyLength: 2 },
      }),
    );
  }
  out.push(
    rpc('message/send', {
      message: msg03([{ kind: 'text', text: 'hello' }]),
      configuration: { blocking: true, acceptedOutputModes: ['text/plain'] },
    }),
    rpc('message/stream', { message: msg03([{ kind: 'text', text: 'hello' }]) }),
    rpc('tasks/get', { id: uuid(), historyLength: 1 }),
    rpc('tasks/cancel', { id: uuid() }),
    rpc('tasks/resubscribe', { id: uuid() }),
    rpc('tasks/pushNotificationConfig/set', {
      taskId: uuid(),
      pushNotificationConfig: {
        url: 'http://127.0.0.1:9/h',
        token: 't',
        authentication: { schemes: ['Bearer'], credentials: 'c' },
      },
    }),
    rpc('tasks/pushNotificationConfig/list', { id: uuid() }),
    rpc('GetTask', { id: uuid(), historyLength: 3 }),
    rpc('ListTasks', {
      pageSize: 5,
      status: 'TASK_STATE_COMPLETED',
      includeArtifacts: true,
      pageToken: '',
    }),
    rpc('CancelTask', { id: uuid() }),
    rpc('SubscribeToTask', { id: uuid() }),
    rpc('CreateTaskPushNotificationConfig', {
      taskId: uuid(),
      url: 'http://127.0.0.1:9/h',
      authentication: { scheme: 'Bearer', credentials: 'c' },
    }),
    rpc('GetExtendedAgentCard', {}),
    rpc('SendMessage', {
      message: msg1(
        [
          { text: 'hi' },
          { url: 'https://x.test/a.png', mediaType: 'image/png' },
          { raw: 'aGk=', filename: 'a.txt' },
        ],
        { contextId: 'ctx', metadata: { a: 1 } },
      ),
    }),
  );
  return out;
}

const VERSIONS = ['1.0', '1.0', '1.0', '0.3', '', '2.0', '1.0.1', 'x'.repeat(100), '\u0000'];
const TYPES = [
  'application/json',
  'application/json',
  'application/a2a+json; charset=utf-8',
  '',
  'text/plain',
  'multipart/form-data; boundary=x',
  'application/json; charset=latin1',
];

function headers(rng: Rng, extra: Record<string, string> = {}): Headers {
  const h = new Headers(extra);
  const type = pick(rng, TYPES);
  if (type) h.set('content-type', type);
  const v = pick(rng, VERSIONS);
  if (v && !v.includes('\u0000')) h.set('a2a-version', v);
  return h;
}

/** POST `/a2a` with varied versions and content types. */
export function a2aTarget(
  name: string,
  skills: readonly { skill: string; args: Record<string, unknown> }[],
): Target {
  return {
    name,
    templates: rpcTemplates(skills),
    request: (base, body, rng) =>
      new Request(`${base}/a2a`, { method: 'POST', headers: headers(rng), body }),
  };
}

/** MCP's JSON-RPC methods, as an MCP client sends them, for the hub's `/mcp`. */
function mcpTemplates(tools: readonly { skill: string; args: Record<string, unknown> }[]) {
  const rpc = (method: string, params?: unknown) => ({
    jsonrpc: '2.0',
    id: 1,
    method,
    ...(params === undefined ? {} : { params }),
  });
  return [
    rpc('initialize', {
      protocolVersion: '2025-11-25',
      capabilities: {},
      clientInfo: { name: 'fuzz', version: '0' },
    }),
    { jsonrpc: '2.0', method: 'notifications/initialized' },
    rpc('ping'),
    rpc('tools/list', { cursor: 'x' }),
    rpc('resources/list'),
    rpc('resources/read', { uri: 'lume://fleet' }),
    rpc('prompts/list'),
    ...tools.map((t) => rpc('tools/call', { name: t.skill, arguments: t.args })),
    [rpc('ping'), rpc('tools/list')],
  ];
}

/** POST `/mcp` (the hub's MCP endpoint) with MCP's headers, sometimes a session id or a version. */
export function mcpTarget(
  name: string,
  tools: readonly { skill: string; args: Record<string, unknown> }[],
): Target {
  return {
    name,
    templates: mcpTemplates(tools),
    request(base, body, rng) {
      const h = new Headers({ accept: 'application/json, text/event-stream' });
      const type = pick(rng, TYPES);
      if (type) h.set('content-type', type);
      if (rng() < 0.3) h.set('mcp-session-id', rng() < 0.5 ? uuid() : 'x'.repeat(300));
      if (rng() < 0.3) h.set('mcp-protocol-version', pick(rng, ['2025-11-25', '1999-01-01', '']));
      return new Request(`${base}/mcp`, { method: 'POST', headers: h, body });
    },
  };
}

const ODD_IDS = () => [
  uuid(),
  uuid(),
  'x',
  '',
  '..%2F..%2Fetc',
  '%ZZ',
  '%00',
  'a'.repeat(300),
  '__proto__',
  'constructor',
  '%F0%9F%98%80',
  '1:2',
  uuid().toUpperCase(),
];

/** The HTTP+JSON binding: every route, random methods, odd ids and query strings. */
export function restTarget(
  name: string,
  skills: readonly { skill: string; args: Record<string, unknown> }[],
): Target {
  const templates: unknown[] = [
    ...skills.map((s) => ({ message: msg1([{ data: s }]) })),
    {
      message: msg1([{ text: 'hello' }]),
      configuration: { returnImmediately: true, acceptedOutputModes: ['application/json'] },
    },
    {
      url: 'http://127.0.0.1:9/h',
      token: 'tok',
      authentication: { scheme: 'Bearer', credentials: 'c' },
    },
    {},
  ];
  return {
    name,
    templates,
    request(base, body, rng) {
      const id = pick(rng, ODD_IDS());
      const path = pick(rng, [
        '/message:send',
        '/message:send',
        '/message:stream',
        '/tasks',
        `/tasks?pageSize=${pick(rng, ['1', '-1', '1000', 'x', ''])}&status=${pick(rng, ['TASK_STATE_WORKING', 'x', ''])}&historyLength=${pick(rng, ['0', '-5', 'a'])}`,
        `/tasks/${id}`,
        `/tasks/${id}:cancel`,
        `/tasks/${id}:subscribe`,
        `/tasks/${id}/pushNotificationConfigs`,
        `/tasks/${id}/pushNotificationConfigs/${pick(rng, ODD_IDS())}`,
        '/extendedAgentCard',
        '/message:',
        '/message:unknown',
        `/tasks/${id}/x/y/z`,
      ]);
      const method = pick(rng, ['POST', 'POST', 'GET', 'DELETE', 'PUT', 'PATCH']);
      const canHaveBody = method !== 'GET';
      return new Request(`${base}${path}`, {
        method,
        headers: headers(rng),
        ...(canHaveBody ? { body } : {}),
      });
    },
  };
}

/** `/peer/invoke` and `/peer/relay`, most requests signed by `signer` (so the body is parsed). */
export function peerTarget(
  name: string,
  signer: PeerSigner | undefined,
  receiver: string,
  skills: readonly { skill: string; args: Record<string, unknown> }[],
  relayTo: string,
): Target {
  const templates = [
    ...skills.map((s) => ({ capability: s.skill, args: s.args })),
    ...skills.map((s) => ({ route: [relayTo], capability: s.skill, args: s.args, trail: [] })),
  ];
  return {
    name,
    templates,
    async request(base, body, rng) {
      const bytes = typeof body === 'string' ? new TextEncoder().encode(body) : body;
      let capability = 'sector.movement';
      let relay = false;
      try {
        // What to sign it for comes from the body when it is small enough to read cheaply; a
        // body of megabytes is signed for the default capability.
        if (bytes.byteLength > 64 * 1024) throw new Error('too large to read');
        const doc = JSON.parse(typeof body === 'string' ? body : new TextDecoder().decode(bytes));
        if (typeof doc?.capability === 'string' && /^[\x21-\x7e]{1,190}$/.test(doc.capability))
          capability = doc.capability;
        relay = Array.isArray(doc?.route);
      } catch {}
      const h = new Headers({ 'content-type': 'application/json' });
      const route = relay ? '/peer/relay' : '/peer/invoke';
      if (signer && rng() < 0.85)
        for (const [k, v] of Object.entries(
          await signer.sign(
            { to: receiver, route, scope: relay ? `relay:${capability}` : capability },
            bytes,
          ),
        ))
          h.set(k, v);
      const method = rng() < 0.05 ? 'GET' : 'POST';
      return new Request(`${base}${route}`, {
        method,
        headers: h,
        ...(method === 'POST' ? { body: bytes } : {}),
      });
    },
  };
}

/** The hub's own API, as the console calls it (same origin, JSON), and its read routes with odd queries. */
export function hubApiTarget(name: string): Target {
  const templates = [
    { target: 'scanner', capability: 'sector.movement', args: { sector: 'semiconductors' } },
    { target: 'crm', capability: 'crm.industries', args: {} },
    { skill: 'customer.reach', args: {} },
    { skill: 'node.capabilities', args: {} },
    { skill: 'entity.resolve', args: { query: 'Acme' } },
    { question: 'which sectors are rising today?' },
  ];
  return {
    name,
    templates,
    request(base, body, rng) {
      const route = pick(rng, [
        '/api/local-invoke',
        '/api/local-invoke',
        '/api/hub',
        '/api/ask',
        '/api/fleet',
        '/api/trace',
        '/api/trace/stream',
        '/api/negotiations',
        '/api/nothing',
      ]);
      const query = pick(rng, [
        '',
        `?limit=${pick(rng, ['10', '-1', 'x', '99999999999'])}`,
        `?to=${pick(rng, ODD_IDS())}&outcome=${pick(rng, ['ok', 'x'])}`,
        `?before=${pick(rng, ['1', '-1', 'z'])}`,
      ]);
      const negotiation = `/api/negotiations/${pick(rng, ['neg-20260101T000000000Z-deadbeef', ...ODD_IDS()])}`;
      const path =
        rng() < 0.1
          ? negotiation
          : route + (route.startsWith('/api/trace') || route === '/api/negotiations' ? query : '');
      const post = route === '/api/local-invoke' || route === '/api/hub' || route === '/api/ask';
      const h = headers(rng, { origin: rng() < 0.9 ? base : 'https://evil.test' });
      if (rng() < 0.8) h.set('content-type', 'application/json');
      // Mostly as a principal, so the bodies reach the routes that need one (local-invoke).
      if (rng() < 0.8) h.set('authorization', `Bearer ${TEST_TOKEN}`);
      const method = post ? (rng() < 0.95 ? 'POST' : 'GET') : rng() < 0.9 ? 'GET' : 'POST';
      return new Request(`${base}${path}`, {
        method,
        headers: h,
        ...(method === 'POST' ? { body } : {}),
      });
    },
  };
}

/**
 * The console's sign-in: the form and its JSON twin (tokens, console URL tickets, `next` paths
 * bent), the ticket link, sign-out and `/api/session`, with planted, forged and oversized session
 * cookies, odd page keys and every `Sec-Fetch-Site` a browser sends.
 */
export function signInTarget(name: string): Target {
  const templates = [
    { token: TEST_TOKEN, next: '/#/tasks' },
    { token: 'lume_not-a-token', next: '//evil.test/x' },
    { ticket: `ct_zzzzzz_${'A'.repeat(22)}_${'B'.repeat(43)}`, next: '/' },
    { next: '/\\evil.test' },
  ];
  const odd = (rng: Rng) =>
    pick(rng, ['', 'x', 's_forged', '%00', 'a'.repeat(5000), '"quoted"', ';;;', ...ODD_IDS()]);
  return {
    name,
    templates,
    request(base, body, rng) {
      const cookieName = `lume_a2a_${new URL(base).port}`;
      const path = pick(rng, [
        '/login',
        '/login',
        `/login?ticket=${encodeURIComponent(odd(rng))}&next=${encodeURIComponent(odd(rng))}`,
        `/login?next=${encodeURIComponent(odd(rng))}`,
        '/logout',
        '/api/session',
        '/',
      ]);
      const h = headers(rng, {
        origin: rng() < 0.85 ? base : pick(rng, ['null', 'https://evil.test']),
      });
      if (rng() < 0.5) h.set('content-type', 'application/x-www-form-urlencoded');
      else if (rng() < 0.6) h.set('content-type', 'application/json');
      if (rng() < 0.6)
        h.set(
          'cookie',
          Array.from(
            { length: int(rng, 12) + 1 },
            () => `${pick(rng, [cookieName, 'lume_session', 'x'])}=${odd(rng)}`,
          ).join('; '),
        );
      if (rng() < 0.5) h.set('x-lume-key', odd(rng).slice(0, 4000));
      if (rng() < 0.5)
        h.set('sec-fetch-site', pick(rng, ['cross-site', 'same-site', 'same-origin', 'none', 'x']));
      const method = rng() < 0.6 ? 'POST' : pick(rng, ['GET', 'HEAD', 'PUT', 'DELETE']);
      // A form body is the hostile text as sent, or fields made from it.
      const text = typeof body === 'string' ? body : new TextDecoder().decode(body);
      const form =
        h.get('content-type') === 'application/x-www-form-urlencoded' && rng() < 0.5
          ? new URLSearchParams({
              token: text.slice(0, 300),
              ticket: text.slice(0, 128),
              next: text.slice(0, 600),
            }).toString()
          : body;
      return new Request(`${base}${path}`, {
        method,
        headers: h,
        ...(method === 'POST' || method === 'PUT' ? { body: form } : {}),
      });
    },
  };
}

/** The mesh's HTTP routes: project administration and the history and presence reads. */
export function meshHttpTarget(name: string): Target {
  const templates = [
    { name: 'fuzz-a', description: 'fuzzed', retention: { days: 7 } },
    { name: 'fuzz-a' },
    {},
  ];
  return {
    name,
    templates,
    request(base, body, rng) {
      const path = pick(rng, [
        '/api/projects.create',
        '/api/projects.list',
        '/api/projects.delete',
        '/api/projects.x',
        `/v1/history?project=${pick(rng, ['fuzz-a', 'x', '', '%00', 'a'.repeat(300)])}&limit=${pick(rng, ['1', '0', '-1', '1000000', 'z'])}&since=${pick(rng, ['1', '-5', 'x'])}`,
        `/v1/presence?project=${pick(rng, ['fuzz-a', '', '..'])}`,
      ]);
      const method = path.startsWith('/api/')
        ? rng() < 0.95
          ? 'POST'
          : 'GET'
        : rng() < 0.9
          ? 'GET'
          : 'POST';
      return new Request(`${base}${path}`, {
        method,
        headers: headers(rng, rng() < 0.5 ? { authorization: 'Bearer x' } : {}),
        ...(method === 'POST' ? { body } : {}),
      });
    },
  };
}

/** The hub's mesh frames, to bend into hostile ones. */
export const MESH_FRAMES: readonly unknown[] = [
  {
    type: 'message',
    requestId: 'r1',
    messageId: 'm1',
    target: { type: 'agent', name: 'alice' },
    payload: { encoding: 'identity', data: 'hi', uncompressedBytes: 2 },
    attachments: [],
  },
  {
    type: 'message',
    requestId: 'r2',
    messageId: 'm2',
    target: { type: 'broadcast' },
    payload: { encoding: 'identity', data: 'all', uncompressedBytes: 3 },
    attachments: [
      { name: 'a.txt', mediaType: 'text/plain', encoding: 'base64', data: 'aGk=', bytes: 2 },
    ],
    replyTo: 'm1',
  },
  { type: 'delivered', messageId: 'm1' },
  { type: 'delivery_failed', messageId: 'm1', error: 'nope' },
  { type: 'hello', protocolVersion: 3, project: 'fuzz', name: 'x' },
];

/** How one answer is judged: a finding, or undefined when it is a proper answer. */
async function judge(res: Response): Promise<string | undefined> {
  if (res.status >= 500) {
    const text = await res.text().catch(() => '');
    return `HTTP ${res.status} ${text.slice(0, 160)}`;
  }
  const type = res.headers.get('content-type') ?? '';
  if (type.includes('text/event-stream')) {
    // A stream: its first frame is enough (an open subscription would never end by itself).
    const reader = res.body?.getReader();
    const first = reader ? await reader.read() : undefined;
    await reader?.cancel().catch(() => {});
    const text = first?.value ? new TextDecoder().decode(first.value) : '';
    return text.includes('"code":-32603')
      ? `stream internal error ${text.slice(0, 160)}`
      : undefined;
  }
  const text = await res.text();
  if (text.includes('"code":-32603')) return `JSON-RPC internal error ${text.slice(0, 160)}`;
  return undefined;
}

function describe(req: Request, body: string | Uint8Array<ArrayBuffer>): string {
  const text =
    typeof body === 'string' ? body : `bytes ${Buffer.from(body.subarray(0, 60)).toString('hex')}`;
  const u = new URL(req.url);
  return `${req.method} ${u.pathname}${u.search} ${text.slice(0, 160)}${text.length > 160 ? `… (${text.length} chars)` : ''}`;
}

/**
 * Sends `count` hostile requests to one target through `send` (in process or over the network)
 * and judges each answer. A thrown `send` (the connection dropped) is a finding too.
 */
export async function fuzzTarget(
  target: Target,
  base: string,
  send: (req: Request) => Promise<Response>,
  count: number,
  seed: number,
  concurrency = 8,
): Promise<FuzzReport> {
  const report: FuzzReport = { sent: 0, statuses: {}, findings: [] };
  // Each body and its request come from a generator of their own, seeded by the run's seed and
  // their number, so a seed replays whatever the concurrency; they are made when sent, so only
  // the few in flight are held (bodies reach megabytes).
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const rng = seeded(Math.imul(seed, 0x9e3779b1) ^ next++);
      const job = hostileBody(rng, target.templates);
      const req = await target.request(base, job.body, rng);
      const sample = describe(req, job.body);
      try {
        const res = await send(req);
        report.statuses[res.status] = (report.statuses[res.status] ?? 0) + 1;
        const what = await judge(res);
        if (what) report.findings.push({ target: target.name, kind: job.kind, what, sample });
      } catch (e) {
        report.findings.push({
          target: target.name,
          kind: job.kind,
          what: `no answer: ${(e as Error)?.message ?? e}`,
          sample,
        });
      }
      report.sent++;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return report;
}

/** Hostile frames for the mesh socket: text (bent frames) and binary. */
export function meshFrames(count: number, seed: number): (string | Uint8Array<ArrayBuffer>)[] {
  const rng = seeded(seed);
  return Array.from({ length: count }, () => {
    const h = hostileBody(rng, MESH_FRAMES);
    if (rng() < 0.15) return typeof h.body === 'string' ? new TextEncoder().encode(h.body) : h.body;
    return typeof h.body === 'string' ? h.body : new TextDecoder().decode(h.body);
  });
}

export { int, pick, seeded };

/** A plain WebSocket client that queues server frames (no test framework, so the CLI can use it). */
class SocketClient {
  readonly ws: WebSocket;
  private frames: Record<string, any>[] = [];
  private waiters: ((f: Record<string, any>) => void)[] = [];
  readonly opened: Promise<boolean>;
  readonly closed: Promise<number>;
  constructor(hubUrl: string) {
    this.ws = new WebSocket(`${hubUrl.replace(/^http/, 'ws')}/v1/connect`);
    this.opened = new Promise((r) => {
      this.ws.addEventListener('open', () => r(true), { once: true });
      this.ws.addEventListener('close', () => r(false), { once: true });
    });
    this.closed = new Promise((r) =>
      this.ws.addEventListener(
        'close',
        (e) => {
          r(e.code);
          for (const w of this.waiters.splice(0)) w({ type: 'closed', code: e.code });
        },
        { once: true },
      ),
    );
    this.ws.addEventListener('message', (e) => {
      let f: Record<string, any>;
      try {
        f = JSON.parse(String(e.data));
      } catch {
        f = { type: 'unparsable' };
      }
      const w = this.waiters.shift();
      if (w) w(f);
      else this.frames.push(f);
    });
  }
  next(): Promise<Record<string, any>> {
    const f = this.frames.shift();
    if (f) return Promise.resolve(f);
    if (this.ws.readyState === WebSocket.CLOSED) return Promise.resolve({ type: 'closed' });
    return new Promise((r) => this.waiters.push(r));
  }
  send(f: string | Uint8Array<ArrayBuffer> | object): void {
    this.ws.send(typeof f === 'string' || f instanceof Uint8Array ? f : JSON.stringify(f));
  }
  get open(): boolean {
    return this.ws.readyState === WebSocket.OPEN;
  }
}

async function claim(
  hubUrl: string,
  project: string,
  name: string,
  token?: string,
): Promise<SocketClient> {
  const c = new SocketClient(hubUrl);
  if (!(await c.opened)) throw new Error('the mesh socket did not open');
  c.send({ type: 'hello', protocolVersion: 3, project, name, ...(token ? { token } : {}) });
  const f = await c.next();
  if (f.type !== 'claimed') throw new Error(`claim failed: ${JSON.stringify(f).slice(0, 200)}`);
  return c;
}

const textPayload = (s: string) => ({
  encoding: 'identity',
  data: s,
  uncompressedBytes: Buffer.byteLength(s),
});

/**
 * Fuzzes the mesh socket: `count` hostile frames (text and binary) from a claimed client, each
 * answered in order; a socket the hub closes is reclaimed under a new name; then `first` hostile
 * first frames on fresh sockets. A close with 1011 (internal error) or an `internal` error frame
 * is a finding, as is a final message that does not reach the other client.
 */
export async function fuzzMeshSocket(
  hubUrl: string,
  project: string,
  count: number,
  seed: number,
  first = 100,
): Promise<FuzzReport> {
  const report: FuzzReport = { sent: 0, statuses: {}, findings: [] };
  const count1 = (key: string) => (report.statuses[key] = (report.statuses[key] ?? 0) + 1);
  let aliceName = 'alice';
  let alice = await claim(hubUrl, project, aliceName);
  let n = 0;
  let bob = await claim(hubUrl, project, 'bob');
  const drain = async (c: SocketClient, until: (f: Record<string, any>) => boolean) => {
    for (;;) {
      const f = await c.next();
      if (until(f)) return f;
      if (f.type === 'closed') return f;
      count1(f.type === 'error' ? `error ${f.code}` : f.type);
      if (f.type === 'error' && f.code === 'internal')
        report.findings.push({
          target: 'mesh socket',
          kind: 'frame',
          what: 'internal error frame',
          sample: JSON.stringify(f).slice(0, 200),
        });
    }
  };
  for (const frame of meshFrames(count, seed)) {
    if (!bob.open) {
      const code = await bob.closed;
      count1(`close ${code}`);
      if (code === 1011)
        report.findings.push({
          target: 'mesh socket',
          kind: 'frame',
          what: 'socket closed with 1011',
          sample: '',
        });
      bob = await claim(hubUrl, project, `bob-${++n}`);
    }
    bob.send(frame);
    report.sent++;
    // Let the clients read now and then, as real ones do; a client that never reads is closed
    // by the hub for backpressure, which is the hub working, not a finding.
    if (report.sent % 50 === 0) await new Promise((r) => setImmediate(r));
  }
  if (!bob.open) bob = await claim(hubUrl, project, `bob-${++n}`);
  if (!alice.open) {
    count1(`close ${await alice.closed} (receiver)`);
    aliceName = `alice-${++n}`;
    alice = await claim(hubUrl, project, aliceName);
  }
  // Frames are handled in order: once this one is accepted, every hostile one before it was handled.
  bob.send({
    type: 'message',
    requestId: 'final',
    messageId: `m-final-${seed}`,
    target: { type: 'agent', name: aliceName },
    payload: textPayload('still here'),
    attachments: [],
  });
  const accepted = await drain(bob, (f) => f.requestId === 'final');
  if (accepted.type !== 'accepted')
    report.findings.push({
      target: 'mesh socket',
      kind: 'after',
      what: 'the final message was not accepted',
      sample: JSON.stringify(accepted).slice(0, 200),
    });
  const got = await drain(
    alice,
    (f) => f.type === 'message' && f.message?.messageId === `m-final-${seed}`,
  );
  if (got.type !== 'message')
    report.findings.push({
      target: 'mesh socket',
      kind: 'after',
      what: 'the final message did not arrive',
      sample: JSON.stringify(got).slice(0, 200),
    });

  for (const frame of meshFrames(first, seed + 1)) {
    const c = new SocketClient(hubUrl);
    if (!(await c.opened)) continue;
    c.send(frame);
    const f = await c.next();
    count1(`first frame: ${f.type === 'error' ? `error ${f.code}` : f.type}`);
    if (f.type === 'closed' && (await c.closed) === 1011)
      report.findings.push({
        target: 'mesh socket',
        kind: 'first frame',
        what: 'socket closed with 1011',
        sample: String(frame).slice(0, 200),
      });
    if (c.open) c.ws.close(1000, 'done');
  }
  alice.ws.close(1000, 'done');
  bob.ws.close(1000, 'done');
  return report;
}
