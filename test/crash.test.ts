/**
 * No request can stop a process: a body nested tens of thousands of levels deep is refused before
 * it is parsed, on every surface, by a real node and a real hub, which then answer a valid request;
 * a task the store cannot write is answered as an error without an unhandled rejection; and the
 * last-resort guard of a serving process logs an unexpected error and keeps serving.
 */

import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { MAX_JSON_DEPTH, nestsDeeperThan, parseJsonBody } from '../lib/body.ts';
import { agentNode, rawPost, rpc, startNode, tempDir, TEST_AUTH } from './support/node.ts';
import { startProcess, type ServingProcess } from './support/process.ts';

setDefaultTimeout(20_000); // per file (Bun scopes it so): real servers and processes are slow on a busy machine

const nested = (depth: number, inner = '1') => '{"a":'.repeat(depth) + inner + '}'.repeat(depth);
/** The attack: a data part nested 40,000 levels deep, about 240 KB. */
const attack = (method = 'message/send') =>
  `{"jsonrpc":"2.0","id":1,"method":"${method}","params":{"message":{"messageId":"m1","role":"user","kind":"message","parts":[{"kind":"data","data":${nested(40_000)}}]}}}`;
const hello = {
  message: {
    messageId: crypto.randomUUID(),
    role: 'user',
    kind: 'message',
    parts: [{ kind: 'text', text: 'hello' }],
  },
};

describe('the depth limit', () => {
  test('counts objects and arrays, not brackets inside strings', () => {
    expect(nestsDeeperThan(nested(MAX_JSON_DEPTH))).toBe(false);
    expect(nestsDeeperThan(nested(MAX_JSON_DEPTH + 1))).toBe(true);
    expect(nestsDeeperThan('['.repeat(MAX_JSON_DEPTH + 1))).toBe(true);
    expect(nestsDeeperThan(JSON.stringify({ s: '{['.repeat(1000) }))).toBe(false);
    expect(nestsDeeperThan(JSON.stringify({ s: `\\"{{{{${'['.repeat(100)}` }))).toBe(false);
    expect(nestsDeeperThan(JSON.stringify(Array.from({ length: 1000 }, () => [[{}]])))).toBe(false);
  });

  test('parseJsonBody names why it refused', () => {
    expect(parseJsonBody(nested(100))).toEqual({
      ok: false,
      error: { code: 'BODY_TOO_DEEP', message: `JSON nests deeper than ${MAX_JSON_DEPTH} levels` },
    });
    expect(parseJsonBody('{"a":')).toMatchObject({ ok: false, error: { code: 'BAD_JSON' } });
    expect(parseJsonBody('{"a":[1]}')).toEqual({ ok: true, result: { a: [1] } });
  });
});

describe('a write the task store cannot make', () => {
  test('is answered as an internal error and rejects no promise unhandled', async () => {
    const caught: unknown[] = [];
    const onRejection = (e: unknown) => caught.push(e);
    process.on('unhandledRejection', onRejection);
    // The task log with segments of one byte: every append begins a new segment file, which
    // cannot be created once the segments folder is a file (ENOTDIR).
    const n = await startNode(agentNode('failing', { handle: (ctx) => ctx.complete('done') }), {
      limits: { taskLogSegmentBytes: 1 },
    });
    try {
      const ok = await rpc(n.url, 'message/send', hello, '0.3');
      expect(ok.result.status.state).toBe('completed');
      const dir = join(n.dataDir, 'failing', 'tasks', 'segments');
      rmSync(dir, { recursive: true, force: true });
      writeFileSync(dir, 'not a folder');
      for (let i = 0; i < 3; i++) {
        const r = await rpc(
          n.url,
          'message/send',
          { message: { ...hello.message, messageId: crypto.randomUUID() } },
          '0.3',
        );
        expect(r.error.code).toBe(-32603);
      }
      await new Promise((r) => setImmediate(r));
      expect(caught).toEqual([]);
      expect(n.log.lines.some((l) => l.includes('task write failed'))).toBe(true);
      // Still serving.
      expect((await fetch(`${n.url}/health`)).status).toBe(200);
    } finally {
      process.off('unhandledRejection', onRejection);
      await n.dispose();
    }
  });
});

describe.each([
  ['node', 'node/main.ts', ['--name', 'scanner']],
  ['hub', 'hub/main.ts', []],
] as const)('a real %s process', (_kind, entry, args) => {
  let p: ServingProcess;
  beforeAll(async () => {
    p = await startProcess(entry, [...args]);
  });
  afterAll(() => p.stop());

  test('refuses the deep body on /a2a (both versions) and answers a valid request afterwards', async () => {
    for (let i = 0; i < 4; i++) {
      const v03 = await rawPost(p.url, attack('message/send'));
      expect(v03.status).toBe(200);
      expect(v03.json.error).toMatchObject({
        code: -32600,
        message: `The request nests JSON deeper than ${MAX_JSON_DEPTH} levels`,
      });
      const v1 = await rawPost(p.url, attack('SendMessage'), { 'A2A-Version': '1.0' });
      expect(v1.json.error.code).toBe(-32600);
    }
    expect(p.alive()).toBe(true);
    const ok = await rpc(p.url, 'message/send', hello, '0.3');
    expect(ok.result.kind).toBe('task');
  });

  test('refuses it on the HTTP+JSON binding', async () => {
    const body = `{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"data":${nested(40_000)}}]}}`;
    const res = await fetch(`${p.url}/message:send`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'A2A-Version': '1.0' },
      body,
    });
    expect(res.status).toBe(400);
    expect((await res.json()).error).toMatchObject({
      status: 'INVALID_ARGUMENT',
      message: `The request nests JSON deeper than ${MAX_JSON_DEPTH} levels`,
    });
    const tasks = await (
      await fetch(`${p.url}/tasks`, { headers: { 'A2A-Version': '1.0' } })
    ).json();
    expect(tasks.tasks.every((t: any) => t.history?.[0]?.parts?.[0]?.data === undefined)).toBe(
      true,
    ); // nothing was stored
    expect(p.alive()).toBe(true);
  });

  test('refuses it on /peer/invoke (the signature is checked first) and keeps serving', async () => {
    const res = await fetch(`${p.url}/peer/invoke`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: `{"capability":"x","args":${nested(40_000)}}`,
    });
    expect(res.status).toBe(401);
    expect(p.alive()).toBe(true);
    expect((await rpc(p.url, 'message/send', hello, '0.3')).result.kind).toBe('task');
  });
});

describe('the hub API and the mesh', () => {
  let p: ServingProcess;
  beforeAll(async () => {
    p = await startProcess('hub/main.ts');
  });
  afterAll(() => p.stop());

  test('/api/local-invoke answers BODY_TOO_DEEP, /api/projects.create bad-json, and both keep serving', async () => {
    const api = await fetch(`${p.url}/api/local-invoke`, {
      method: 'POST',
      headers: { Origin: p.url, 'Content-Type': 'application/json', ...TEST_AUTH },
      body: `{"target":"scanner","capability":"sector.movement","args":${nested(5_000)}}`,
    });
    expect(api.status).toBe(400);
    expect((await api.json()).error).toEqual({
      code: 'BODY_TOO_DEEP',
      message: `JSON nests deeper than ${MAX_JSON_DEPTH} levels`,
    });
    const mesh = await fetch(`${p.url}/api/projects.create`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: `{"name":"deep","meta":${nested(40_000)}}`,
    });
    expect((await mesh.json()).error.code).toBe('bad-json');
    const list = await (
      await fetch(`${p.url}/api/projects.list`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: '{}',
      })
    ).json();
    expect(list.result.projects.map((x: any) => x.name)).not.toContain('deep');
    expect(p.alive()).toBe(true);
  });
});

describe('the last-resort guard', () => {
  test('logs an unhandled rejection and an uncaught exception and keeps serving', async () => {
    const dir = tempDir('lume-a2a-guard-');
    const script = join(dir, 'serve.ts');
    writeFileSync(
      script,
      `
      import { installCrashGuard } from ${JSON.stringify(resolve(import.meta.dir, '../lib/crash-guard.ts'))};
      import { consoleLog } from ${JSON.stringify(resolve(import.meta.dir, '../lib/log.ts'))};
      installCrashGuard(consoleLog('guarded'));
      const server = Bun.serve({ port: 0, fetch(req) {
        const path = new URL(req.url).pathname;
        if (path === '/reject') void Promise.reject(new TypeError('secret-in-message'));
        if (path === '/throw') setImmediate(() => { throw new RangeError('secret-in-message'); });
        return new Response(path);
      } });
      console.log('listening on ' + server.url.origin);
    `,
    );
    const proc = Bun.spawn(['bun', script], { stdin: 'ignore', stdout: 'pipe', stderr: 'pipe' });
    try {
      const out = proc.stdout.getReader();
      let text = '';
      while (!/listening on (\S+)/.test(text))
        text += new TextDecoder().decode((await out.read()).value);
      const url = /listening on (\S+)/.exec(text)![1]!;
      expect(await (await fetch(`${url}/reject`)).text()).toBe('/reject');
      expect(await (await fetch(`${url}/throw`)).text()).toBe('/throw');
      const err = proc.stderr.getReader();
      let log = '';
      while ((log.match(/unexpected error; still serving/g) ?? []).length < 2)
        log += new TextDecoder().decode((await err.read()).value);
      expect(log).toContain('kind="unhandledRejection" error="TypeError"');
      expect(log).toContain('kind="uncaughtException" error="RangeError"');
      expect(log).not.toContain('secret-in-message');
      expect(await (await fetch(`${url}/after`)).text()).toBe('/after');
    } finally {
      proc.kill();
      await proc.exited;
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
