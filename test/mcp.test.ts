/**
 * The hub's MCP endpoint through the official MCP client (`@modelcontextprotocol/sdk`, Streamable
 * HTTP and stdio): it lists the fleet's capabilities as tools (read-only ones marked), calls a
 * read-only one anonymously and a state-changing one with and without a principal, speaks in the
 * mesh as its principal (a message sent through MCP reaches a mesh client, one sent back reaches
 * the MCP client), asks the Ask Agent, delegates a job and follows it to completion; every call
 * is in the hub's trace. The fleet's AI Catalog lists the members and finds a skill.
 */

import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { LoggingMessageNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { memoryLog } from '../lib/log.ts';
import { createMeshClient, type InboundMessage } from '../lib/mesh/client.ts';
import { realNodeDefs, startFleet, type RunningFleet } from './support/fleet.ts';
import { TEST_AUTH, TEST_TOKEN } from './support/node.ts';

setDefaultTimeout(20_000); // per file (Bun scopes it so): real servers and processes are slow on a busy machine

let f: RunningFleet;
const clients: Client[] = [];

beforeAll(async () => {
  f = await startFleet(await realNodeDefs(['scanner', 'crm', 'resolve', 'tsm-hub']));
  // The mesh project MCP presences join (the hub's process makes it at its first start).
  const made = await fetch(`${f.hubUrl}/api/projects.create`, {
    method: 'POST',
    headers: { ...TEST_AUTH, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'main', description: 'the default project' }),
  });
  expect(made.status).toBe(200);
});
afterAll(async () => {
  for (const c of clients) await c.close().catch(() => {});
  await f.stop();
});

/** An official MCP client on the hub's /mcp, as the test principal (`tester`) or anonymously. */
async function connect(authenticated: boolean): Promise<Client> {
  const client = new Client({ name: 'lume-test', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(`${f.hubUrl}/mcp`), {
    requestInit: { headers: authenticated ? TEST_AUTH : {} },
  });
  await client.connect(transport);
  clients.push(client);
  return client;
}

const traced = async (q: string) =>
  (await (await fetch(`${f.hubUrl}/api/trace?${q}&limit=500`)).json()).records as {
    id: number;
    from: string;
    to: string;
    capability: string;
    outcome: string;
  }[];

describe('tools', () => {
  test('the fleet capabilities, the work tools and the mesh tools are listed; anonymous callers get the read-only ones', async () => {
    const user = await connect(true);
    expect(user.getServerVersion()?.name).toBe('lume-a2a-hub');
    const { tools } = await user.listTools();
    const byName = new Map(tools.map((t) => [t.name, t]));
    for (const name of ['scanner_sector_movement', 'crm_industries', 'resolve_exec_submit'])
      expect(byName.has(name)).toBe(true);
    // The node is named once: no `crm_crm_…`, `resolve_resolve_…`, `tsm-hub_tsm_…`.
    expect(tools.filter((t) => /^([a-z-]+)_\1_/.test(t.name)).map((t) => t.name)).toEqual([]);
    expect(byName.has('resolve_catalog')).toBe(true);
    expect(byName.has('tsm-hub_health')).toBe(true);
    for (const name of ['ask', 'delegate', 'get_task', 'a2a_peers', 'a2a_message', 'a2a_history'])
      expect(byName.has(name)).toBe(true);
    expect(byName.get('scanner_sector_movement')!.annotations?.readOnlyHint).toBe(true);
    expect(byName.get('resolve_exec_submit')!.annotations?.readOnlyHint).toBe(false);
    expect(byName.get('resolve_exec_submit')!.inputSchema.required).toEqual(['prompt']);
    // Only nodes of this fleet: the catalog also names members this fleet does not run.
    expect(tools.some((t) => t.name.startsWith('lan_'))).toBe(false);
    expect(tools.some((t) => t.name.startsWith('tsm-hub_'))).toBe(true);

    const anonymous = await connect(false);
    const open = (await anonymous.listTools()).tools;
    expect(open.length).toBeGreaterThan(0);
    expect(open.every((t) => t.annotations?.readOnlyHint === true)).toBe(true);
    expect(open.map((t) => t.name)).toContain('scanner_sector_movement');
    expect(open.map((t) => t.name)).not.toContain('delegate');
    expect(open.map((t) => t.name)).not.toContain('a2a_message');
    expect(open.map((t) => t.name)).toContain('a2a_peers');
  });

  test('a read-only capability answers an anonymous client, through fleet.invoke (traced)', async () => {
    const anonymous = await connect(false);
    const before = (await traced('to=scanner&capability=sector.movement')).length;
    const r = await anonymous.callTool({ name: 'scanner_sector_movement', arguments: {} });
    expect(r.isError).toBeFalsy();
    const result = r.structuredContent as { sectors: { sector: string }[] };
    expect(result.sectors.length).toBeGreaterThan(0);
    expect(JSON.parse((r.content as { text: string }[])[0]!.text)).toEqual(result);
    const rows = await traced('to=scanner&capability=sector.movement');
    expect(rows.length).toBe(before + 1);
    expect([rows[0]!.from, rows[0]!.outcome]).toEqual(['a2a', 'ok']);
    // The result names its trace record, as the console's Agent Process page lists it.
    expect(r._meta).toEqual({ 'dev.lume-a2a/trace': { record: rows[0]!.id } });
  });

  test('a state-changing capability needs a principal: refused anonymously (nothing runs), run for a token', async () => {
    const anonymous = await connect(false);
    const refused = await anonymous.callTool({
      name: 'resolve_exec_submit',
      arguments: { prompt: 'give me a report of the fleet nodes' },
    });
    expect(refused.isError).toBe(true);
    expect((refused.structuredContent as any).error.code).toBe('UNAUTHENTICATED');
    expect(await traced('to=resolve&capability=exec.submit')).toEqual([]);

    const user = await connect(true);
    const ran = await user.callTool({
      name: 'resolve_exec_submit',
      arguments: { prompt: 'give me a report of the fleet nodes' },
    });
    expect(ran.isError).toBeFalsy();
    expect((ran.structuredContent as any).job_id).toEqual(expect.any(String));
    expect((await traced('to=resolve&capability=exec.submit')).map((r) => r.outcome)).toEqual([
      'ok',
    ]);
  });

  test('wrong argument types come back as a tool error the model can read', async () => {
    const user = await connect(true);
    const r = await user.callTool({ name: 'crm_industries', arguments: { nope: 1 } });
    expect(r.isError).toBe(true);
    expect((r.structuredContent as any).error.code).toBe('BAD_ARGS');
  });
});

describe('the mesh tools act as the MCP principal', () => {
  test('a message sent through MCP reaches a mesh client from the principal, and its reply reaches the MCP client', async () => {
    const inbox: InboundMessage[] = [];
    let arrived: () => void = () => {};
    const got = new Promise<void>((r) => (arrived = r));
    const bob = createMeshClient({
      hubUrl: f.hubUrl,
      token: TEST_TOKEN,
      log: memoryLog(),
      onInbound: (m) => {
        inbox.push(m);
        arrived();
      },
    });
    expect((await bob.connect('bob', 'main', 'bob')).state).toBe('connected');
    try {
      const user = await connect(true);
      const heard: unknown[] = [];
      let notified: () => void = () => {};
      const note = new Promise<void>((r) => (notified = r));
      user.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
        heard.push(n.params.data);
        notified();
      });
      const peers = await user.callTool({ name: 'a2a_peers', arguments: {} });
      expect(peers.structuredContent).toEqual({ project: 'main', self: 'tester', peers: ['bob'] });
      // Anonymous callers read the roster as nobody (a loopback hub shows it) and cannot speak.
      const anonymous = await connect(false);
      const seen = await anonymous.callTool({ name: 'a2a_peers', arguments: {} });
      expect((seen.structuredContent as any).peers.sort()).toEqual(['bob', 'tester']);
      const mute = await anonymous.callTool({
        name: 'a2a_message',
        arguments: { target: { type: 'project' }, text: 'anyone?' },
      });
      expect((mute.structuredContent as any).error.code).toBe('UNAUTHENTICATED');

      const sent = await user.callTool({
        name: 'a2a_message',
        arguments: { target: { type: 'agent', name: 'bob' }, text: 'hello from a harness' },
      });
      expect(sent.isError).toBeFalsy();
      await got;
      expect([inbox[0]!.message.from.name, inbox[0]!.text]).toEqual([
        'tester',
        'hello from a harness',
      ]);

      const back = await bob.send('bob', {
        target: { type: 'agent', name: 'tester' },
        text: 'heard you',
        replyTo: inbox[0]!.message.messageRef,
      });
      expect(back.ok).toBe(true);
      await note;
      expect(heard[0]).toMatchObject({ from: 'bob', to: 'tester', text: 'heard you' });

      const history = await user.callTool({ name: 'a2a_history', arguments: { limit: 10 } });
      const texts = (history.structuredContent as any).messages.map((m: any) => [m.from, m.text]);
      expect(texts).toEqual([
        ['tester', 'hello from a harness'],
        ['bob', 'heard you'],
      ]);
      // The harness goes away (its session's stream ends): its presence leaves the roster.
      let left: () => void = () => {};
      const gone = new Promise<void>((r) => (left = r));
      bob.on('change', () => {
        if (!bob.peers('bob').includes('tester')) left();
      });
      await user.close();
      await gone;
      expect(bob.peers('bob')).toEqual([]);
    } finally {
      await bob.close();
    }
  });
});

describe('the work tools', () => {
  test('ask answers from the fleet, and its calls are in the trace', async () => {
    const user = await connect(true);
    const before = (await traced('from=a2a')).length;
    const r = await user.callTool({
      name: 'ask',
      arguments: { question: 'which sectors moved today?' },
    });
    expect(r.isError).toBeFalsy();
    const answer = r.structuredContent as {
      answered: boolean;
      tried: { node: string; tool: string }[];
    };
    expect(answer.answered).toBe(true);
    expect(answer.tried.some((t) => t.tool === 'sector.movement')).toBe(true);
    expect((await traced('from=a2a')).length).toBeGreaterThan(before);
  });

  test('delegate answers with the hub task; get_task follows it to completion; another principal cannot read it', async () => {
    const user = await connect(true);
    const r = await user.callTool({
      name: 'delegate',
      arguments: { prompt: 'give me a report of the fleet nodes' },
    });
    expect(r.isError).toBeFalsy();
    const { task, read } = r.structuredContent as any;
    expect(task.status.state).toBe('TASK_STATE_WORKING');
    expect(read).toEqual({ name: 'get_task', arguments: { id: task.id } });
    // Each read is a real GetTask that advances the delegation; bounded by time on a loaded machine.
    const deadline = performance.now() + 15_000;
    let state = task.status.state;
    let last: any;
    while (state === 'TASK_STATE_WORKING' && performance.now() < deadline) {
      last = ((await user.callTool(read)).structuredContent as any).task;
      state = last.status.state;
    }
    expect(state).toBe('TASK_STATE_COMPLETED');
    expect(last.artifacts[0].parts[0].text).toContain('scanner');
    expect((await traced('to=resolve&capability=exec.status')).length).toBeGreaterThan(0);

    const anonymous = await connect(false);
    const foreign = await anonymous.callTool(read);
    expect(foreign.isError).toBe(true);
    expect((foreign.structuredContent as any).error.code).toBe('TASK_NOT_FOUND');
    const refused = await anonymous.callTool({ name: 'delegate', arguments: { prompt: 'x' } });
    expect((refused.structuredContent as any).error.code).toBe('UNAUTHENTICATED');
  });
});

describe('resources', () => {
  test('every member card and the recent trace can be read', async () => {
    const user = await connect(true);
    const { resources } = await user.listResources();
    const uris = resources.map((r) => r.uri);
    for (const n of ['a2a', 'scanner', 'crm', 'resolve'])
      expect(uris).toContain(`lume://card/${n}`);
    expect(uris).toContain('lume://trace');
    const card = await user.readResource({ uri: 'lume://card/scanner' });
    expect(JSON.parse((card.contents[0] as { text: string }).text).name).toBe('scanner');
    await user.callTool({ name: 'scanner_sector_movement', arguments: {} });
    const trace = await user.readResource({ uri: 'lume://trace' });
    const rows = JSON.parse((trace.contents[0] as { text: string }).text).records;
    expect(rows[0]).toMatchObject({ from: 'a2a', to: 'scanner', capability: 'sector.movement' });
    await expect(user.readResource({ uri: 'lume://card/nobody' })).rejects.toThrow(
      'Resource not found',
    );
  });
});

describe('the AI Catalog', () => {
  test('lists every member with its card URL, skills and signature state, and finds a skill', async () => {
    const res = await fetch(`${f.hubUrl}/.well-known/ai-catalog.json`);
    expect(res.status).toBe(200);
    const catalog = await res.json();
    expect(catalog.specVersion).toBe('1.0');
    const names = catalog.entries.map((e: any) => e.metadata['dev.lume-a2a.node']);
    expect(names).toEqual([undefined, 'a2a', ...f.fleet.nodes.map((n) => n.name)]);
    const scanner = catalog.entries.find((e: any) => e.displayName === 'scanner');
    expect(scanner.type).toBe('application/a2a-agent-card+json');
    expect(scanner.url).toBe(`${f.nodes.get('scanner')!.url}/.well-known/agent-card.json`);
    expect(scanner.capabilities).toContain('sector.movement');
    // The hub checked the signed card against the key it pinned for scanner.
    const card = await (await fetch(scanner.url)).json();
    expect(card.signatures).toHaveLength(1);
    expect(scanner.metadata['dev.lume-a2a.signature']).toBe('verified');

    // A member of the signed channel only serves no card: its entry is its public /capabilities.
    const tsm = catalog.entries.find((e: any) => e.displayName === 'tsm-hub');
    expect([tsm.type, tsm.url, tsm.metadata['dev.lume-a2a.transport']]).toEqual([
      'application/json',
      `${f.nodes.get('tsm-hub')!.url}/capabilities`,
      'peer',
    ]);
    expect(tsm.metadata['dev.lume-a2a.online']).toBe(true);
    expect(tsm.capabilities.length).toBeGreaterThan(0);
    expect(scanner.metadata['dev.lume-a2a.transport']).toBe('a2a');

    const bySkill = await (
      await fetch(`${f.hubUrl}/.well-known/ai-catalog.json?skill=exec.submit`)
    ).json();
    expect(bySkill.entries.map((e: any) => e.displayName)).toEqual(['resolve']);
    const byWords = await (
      await fetch(`${f.hubUrl}/.well-known/ai-catalog.json?q=customer%20follow-up`)
    ).json();
    expect(byWords.entries.map((e: any) => e.displayName)).toEqual(['crm']);
    const bad = await fetch(`${f.hubUrl}/.well-known/ai-catalog.json?skill=../x`);
    expect([bad.status, (await bad.json()).error.code]).toEqual([400, 'BAD_QUERY']);
  });
});

describe('bun run mcp (stdio)', () => {
  test('the official stdio client lists the tools and calls one through the relay, as LUME_TOKEN', async () => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [resolve(import.meta.dir, '../hub/cli/mcp.ts')],
      env: {
        ...(process.env as Record<string, string>),
        LUME_HUB_URL: f.hubUrl,
        LUME_TOKEN: TEST_TOKEN,
      },
      stderr: 'pipe',
    });
    const client = new Client({ name: 'lume-stdio-test', version: '1.0.0' });
    await client.connect(transport);
    clients.push(client);
    const names = (await client.listTools()).tools.map((t) => t.name);
    expect(names).toContain('delegate');
    expect(names).toContain('scanner_sector_movement');
    // The principal's name, suffixed while earlier sessions of this file are still present.
    const r = await client.callTool({ name: 'a2a_peers', arguments: {} });
    expect((r.structuredContent as any).self).toMatch(/^tester(-[2-9])?$/);
    const bad = await client
      .callTool({ name: 'no_such_tool', arguments: {} })
      .catch((e: Error) => e);
    expect(String(bad)).toContain('Unknown tool');
  });
});

describe("the README's harness snippets", () => {
  const readme = readFileSync(resolve(import.meta.dir, '../README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('## Use the fleet from a model harness'));
  const snippets = [
    ...section.slice(0, section.indexOf('\n## ', 5)).matchAll(/```json\n([\s\S]*?)```/g),
  ].map((m) => JSON.parse(m[1]!));
  /** The snippet as a user on this fleet would fill it in: this hub's port and the test token. */
  const fill = (v: string) =>
    v
      .replace('http://127.0.0.1:4100', f.hubUrl)
      .replace('lume_YOUR_TOKEN', TEST_TOKEN)
      .replace('/path/to/lume-a2a', resolve(import.meta.dir, '..'));

  test('are valid JSON, and the HTTP one (URL plus token header) reaches the fleet with the principal', async () => {
    expect(snippets.length).toBe(3);
    const http = snippets[0].mcpServers['lume-fleet'];
    const client = new Client({ name: 'readme-http', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(fill(http.url)), {
        requestInit: { headers: { Authorization: fill(http.headers.Authorization) } },
      }),
    );
    clients.push(client);
    expect((await client.listTools()).tools.map((t) => t.name)).toContain('delegate');
    expect(snippets[1].servers['lume-fleet'].url).toBe(http.url);
  });

  test('the stdio one starts the relay as written', async () => {
    const stdio = snippets[2].mcpServers['lume-fleet'];
    const env = Object.fromEntries(
      Object.entries(stdio.env as Record<string, string>).map(([k, v]) => [k, fill(v)]),
    );
    const client = new Client({ name: 'readme-stdio', version: '1.0.0' });
    await client.connect(
      new StdioClientTransport({
        command: stdio.command === 'bun' ? process.execPath : stdio.command,
        args: stdio.args.map(fill),
        env: { ...(process.env as Record<string, string>), ...env },
        stderr: 'pipe',
      }),
    );
    clients.push(client);
    expect((await client.listTools()).tools.map((t) => t.name)).toContain('delegate');
  });
});
