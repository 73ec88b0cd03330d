/** Test harness for the mesh: a real hub on port 0 and raw WebSocket clients that record every frame. */

import { expect } from 'bun:test';
import { Database } from 'bun:sqlite';
import type { Server } from 'bun';
import { memoryLog } from '../../lib/log.ts';
import type { MeshLimits } from '../../lib/mesh/limits.ts';
import { createSqliteMeshStore } from '../../lib/mesh/sqlite-store.ts';
import type { MeshStore } from '../../lib/mesh/store.ts';
import { createMeshServer, type MeshServer, type MeshSocketData } from '../../hub/mesh/server.ts';
import type { Timers } from '../../hub/mesh/timers.ts';
import type { MeshCluster } from '../../hub/mesh/cluster.ts';

export interface TestHub {
  url: string;
  port: number;
  store: MeshStore;
  mesh: MeshServer;
  server: Server<MeshSocketData>;
  log: ReturnType<typeof memoryLog>;
  /** Resolves at the next pong the hub receives. */
  nextPong(): Promise<void>;
  /** Shuts the mesh down (hub_shutdown), stops the server; `keepStore` leaves the database open. */
  stop(keepStore?: boolean): Promise<void>;
}

export interface HubOptions {
  db?: Database;
  store?: MeshStore;
  token?: string;
  limits?: Partial<MeshLimits>;
  timers?: Timers;
  port?: number;
  /** Group-commit scheduler (tests hold commits with it). */
  schedule?: (fn: () => void) => void;
  now?: () => number;
  /** The other hubs on a shared database (PostgreSQL tests). */
  cluster?: MeshCluster;
}

/** Timers whose intervals never fire by themselves (heartbeat is driven by `mesh.realtime.tick()`). */
const MANUAL_INTERVALS: Timers = {
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (t) => clearTimeout(t),
  setInterval: () => 0 as unknown as ReturnType<typeof setInterval>,
  clearInterval: () => {},
};

export function startHub(o: HubOptions = {}): TestHub {
  const log = memoryLog();
  const store =
    o.store ??
    createSqliteMeshStore({
      db: o.db ?? new Database(':memory:', { strict: true }),
      log,
      schedule: o.schedule,
      now: o.now,
    });
  const mesh = createMeshServer({
    store,
    log,
    token: o.token,
    limits: o.limits,
    timers: o.timers ?? MANUAL_INTERVALS,
    now: o.now,
    ...(o.cluster ? { cluster: o.cluster } : {}),
  });
  let pongWaiters: (() => void)[] = [];
  const server = Bun.serve<MeshSocketData>({
    hostname: '127.0.0.1',
    port: o.port ?? 0,
    fetch: (req, srv) =>
      mesh.fetch(req, srv) ??
      Response.json({ error: { code: 'not-found', message: 'no route' } }, { status: 404 }),
    websocket: {
      ...mesh.websocket,
      pong(ws, data) {
        mesh.websocket.pong!(ws, data);
        const w = pongWaiters;
        pongWaiters = [];
        for (const f of w) f();
      },
    },
  });
  return {
    url: server.url.origin,
    port: server.port!,
    store,
    mesh,
    server,
    log,
    nextPong: () => new Promise((r) => pongWaiters.push(r)),
    async stop(keepStore = false) {
      mesh.close();
      await server.stop(true);
      if (!keepStore) await store.close();
    },
  };
}

export type Frame = Record<string, any>;

/** A WebSocket that queues every frame; `next()` takes them in order. */
export class RawClient {
  ws: WebSocket;
  frames: Frame[] = [];
  private waiters: ((f: Frame) => void)[] = [];
  opened: Promise<void>;
  closed: Promise<{ code: number; reason: string }>;

  constructor(hub: { url: string }) {
    this.ws = new WebSocket(`${hub.url.replace(/^http/, 'ws')}/v1/connect`);
    this.opened = new Promise((r) => this.ws.addEventListener('open', () => r(), { once: true }));
    this.closed = new Promise((r) =>
      this.ws.addEventListener('close', (e) => r({ code: e.code, reason: e.reason }), {
        once: true,
      }),
    );
    this.ws.addEventListener('message', (e) => {
      const f = JSON.parse(String(e.data)) as Frame;
      const w = this.waiters.shift();
      if (w) w(f);
      else this.frames.push(f);
    });
  }

  /** The next frame not yet taken. */
  next(): Promise<Frame> {
    const f = this.frames.shift();
    return f ? Promise.resolve(f) : new Promise((r) => this.waiters.push(r));
  }

  async take(n: number): Promise<Frame[]> {
    const out: Frame[] = [];
    for (let i = 0; i < n; i++) out.push(await this.next());
    return out;
  }

  async send(f: unknown): Promise<void> {
    await this.opened;
    this.ws.send(
      typeof f === 'string' || f instanceof Uint8Array ? (f as string) : JSON.stringify(f),
    );
  }

  /** Says hello and returns the first answer (claimed or error). */
  async hello(project: string, name: string, extra: Record<string, unknown> = {}): Promise<Frame> {
    await this.send({ type: 'hello', protocolVersion: 3, project, name, ...extra });
    return this.next();
  }

  close(): Promise<{ code: number; reason: string }> {
    this.ws.close(1000, 'bye');
    return this.closed;
  }
}

/** Claims `name` in `project` and returns the client with its claimed frame. */
export async function join(
  hub: { url: string },
  project: string,
  name: string,
): Promise<{ c: RawClient; claimed: Frame; self: { name: string; presenceId: string } }> {
  const c = new RawClient(hub);
  const claimed = await c.hello(project, name);
  if (claimed.type !== 'claimed') throw new Error(`claim failed: ${JSON.stringify(claimed)}`);
  return { c, claimed, self: claimed.self };
}

export const text = (s: string) => ({
  encoding: 'identity',
  data: s,
  uncompressedBytes: Buffer.byteLength(s),
});

export function msg(
  requestId: string,
  messageId: string,
  target: unknown,
  body: string,
  extra: Record<string, unknown> = {},
) {
  return {
    type: 'message',
    requestId,
    messageId,
    target,
    payload: text(body),
    attachments: [],
    ...extra,
  };
}

export const UUID = expect.stringMatching(
  /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/,
);

export async function createProject(hub: TestHub, name: string): Promise<void> {
  const r = await hub.store.createProject({ name });
  if (!r.ok) throw new Error(r.error.message);
}

/** A group-commit scheduler that holds each commit until the test releases it. */
export function heldCommits() {
  const queued: (() => void)[] = [];
  const waiters: ((release: () => void) => void)[] = [];
  return {
    schedule(fn: () => void): void {
      const w = waiters.shift();
      if (w) w(fn);
      else queued.push(fn);
    },
    /** Resolves with the release function of the next commit the store schedules. */
    next(): Promise<() => void> {
      const f = queued.shift();
      return f ? Promise.resolve(f) : new Promise((r) => waiters.push(r));
    },
  };
}
