/**
 * Test support: start a node on port 0 with its own temporary data folder, and small helpers to
 * speak JSON-RPC and read SSE streams from it.
 */

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Agent } from '../../lib/a2a/agent.ts';
import { hashSecret, newSecret } from '../../lib/auth/secret.ts';
import { TokenBook } from '../../lib/auth/tokens.ts';
import { Catalog } from '../../lib/catalog/catalog.ts';
import { memoryLog } from '../../lib/log.ts';
import { createNode } from '../../lib/node/create-node.ts';
import type { NodeDefinition, NodeOptions } from '../../lib/node/node-types.ts';

export const FIXTURES = resolve(import.meta.dir, '../../fixtures');

/**
 * The bearer token of the principal `tester`, made fresh for each run. Test nodes accept it, and
 * the helpers below send it unless told otherwise (`{ Authorization: '' }` sends no credentials).
 */
export const TEST_TOKEN = newSecret();
export const TEST_AUTH = { Authorization: `Bearer ${TEST_TOKEN}` } as const;
/** The token book test nodes use: `tester` only. */
export const testTokens = () => TokenBook.of({ tester: TEST_TOKEN });

/** Makes `tester` a token of a data folder, for real processes (which read DATA_DIR/keys/tokens.json). */
export function writeTestToken(dataDir: string): void {
  mkdirSync(join(dataDir, 'keys'), { recursive: true, mode: 0o700 });
  const file = {
    format: 'lume-a2a.tokens/1',
    tokens: { tester: { hash: hashSecret(TEST_TOKEN), created: new Date().toISOString() } },
  };
  writeFileSync(join(dataDir, 'keys', 'tokens.json'), JSON.stringify(file), {
    mode: 0o600,
    flag: 'wx',
  });
}

/** Headers with the test token first; a header given as '' is left out (so `Authorization: ''` means anonymous). */
export function withAuth(headers: Record<string, string> = {}): Record<string, string> {
  const all: Record<string, string> = { ...TEST_AUTH, ...headers };
  return Object.fromEntries(Object.entries(all).filter(([, v]) => v !== ''));
}

export function tempDir(prefix = 'lume-a2a-test-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

export interface TestNode {
  url: string;
  dataDir: string;
  log: ReturnType<typeof memoryLog>;
  node: ReturnType<typeof createNode>;
  stop(): Promise<void>;
  /** Stops and removes the data folder. */
  dispose(): Promise<void>;
}

export async function startNode(
  def: NodeDefinition,
  opts: Partial<NodeOptions> = {},
): Promise<TestNode> {
  const dataDir = opts.dataDir ?? tempDir();
  const log = memoryLog();
  // Test webhook receivers listen on loopback, which a node refuses unless listed (as an operator
  // would with PUSH_ALLOW_HOSTS); tests of that refusal pass their own list.
  const node = createNode(def, {
    dataDir,
    port: 0,
    log,
    pushRetryDelaysMs: [10, 20],
    pushAllowHosts: ['127.0.0.1', 'localhost'],
    access: { tokens: testTokens() },
    ...opts,
  });
  const running = await node.start();
  return {
    url: running.url,
    dataDir,
    log,
    node,
    stop: () => running.stop(),
    async dispose() {
      await running.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** A one-capability definition around a custom agent, for tests of the core. */
export function agentNode(
  name: string,
  agent: Agent,
  extra: Partial<NodeDefinition> = {},
): NodeDefinition {
  return {
    name,
    description: `Test node ${name}`,
    catalog: new Catalog([
      {
        id: 'test.echo',
        name: 'Echo',
        description: 'Echoes its args',
        tags: ['test'],
        keywords: ['echo'],
        readOnly: true,
        args: {},
        run: () => ({}),
      },
    ]),
    agent,
    ...extra,
  };
}

let nextId = 1;

export async function rpc(
  url: string,
  method: string,
  params: unknown,
  version: '1.0' | '1.1' | '0.3' | null = '1.0',
  id: unknown = nextId++,
  auth: Record<string, string> = TEST_AUTH,
): Promise<any> {
  const headers: Record<string, string> = { 'Content-Type': 'application/json', ...auth };
  if (version) headers['A2A-Version'] = version;
  const res = await fetch(`${url}/a2a`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ jsonrpc: '2.0', id, method, params }),
  });
  return res.json();
}

export async function rawPost(
  url: string,
  body: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; json: any; text: string }> {
  const res = await fetch(`${url}/a2a`, {
    method: 'POST',
    headers: withAuth({ 'Content-Type': 'application/json', ...headers }),
    body,
  });
  const text = await res.text();
  let json: any;
  try {
    json = JSON.parse(text);
  } catch {}
  return { status: res.status, json, text };
}

/** Reads an SSE response frame by frame, as the frames arrive. */
export async function* sseFrames(res: Response): AsyncGenerator<any> {
  for await (const e of sseEvents(res)) yield e.data;
}

/**
 * Each SSE event of a response, its `id:` (undefined when it has none) and its data's JSON, until
 * the body ends; a connection that breaks throws from the read.
 */
export async function* sseEvents(res: Response): AsyncGenerator<{ id?: string; data: any }> {
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  try {
    while (true) {
      const { done, value } = await reader.read();
      if (done) return;
      buffer += decoder.decode(value, { stream: true });
      let cut: number;
      while ((cut = buffer.indexOf('\n\n')) >= 0) {
        const lines = buffer.slice(0, cut).split('\n');
        buffer = buffer.slice(cut + 2);
        const id = lines.find((l) => l.startsWith('id: '))?.slice(4);
        const data = lines
          .filter((l) => l.startsWith('data: '))
          .map((l) => l.slice(6))
          .join('\n');
        if (data) yield { ...(id === undefined ? {} : { id }), data: JSON.parse(data) };
      }
    }
  } finally {
    reader.releaseLock();
  }
}

export async function streamRpc(
  url: string,
  method: string,
  params: unknown,
  version: '1.0' | '0.3' = '1.0',
  signal?: AbortSignal,
): Promise<Response> {
  const headers: Record<string, string> = {
    'Content-Type': 'application/json',
    Accept: 'text/event-stream',
    'A2A-Version': version,
    ...TEST_AUTH,
  };
  return fetch(`${url}/a2a`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ jsonrpc: '2.0', id: nextId++, method, params }),
    ...(signal ? { signal } : {}),
  });
}

export async function collect(res: Response): Promise<any[]> {
  const out: any[] = [];
  for await (const f of sseFrames(res)) out.push(f);
  return out;
}

/** A text message in v1.0 wire form. */
export function msgV1(text: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { messageId: crypto.randomUUID(), role: 'ROLE_USER', parts: [{ text }], ...extra };
}

/** A text message in v0.3 wire form. */
export function msgV03(text: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    kind: 'message',
    messageId: crypto.randomUUID(),
    role: 'user',
    parts: [{ kind: 'text', text }],
    ...extra,
  };
}

/** A promise with its resolver, for agents a test steps through. */
export function gate(): { promise: Promise<void>; open: () => void } {
  let open!: () => void;
  const promise = new Promise<void>((r) => (open = r));
  return { promise, open };
}
