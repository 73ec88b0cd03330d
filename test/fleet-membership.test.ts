/**
 * An app that joins is a member everywhere, without a restart of anything: three apps made from
 * the packed tarball join a running fleet (a hub and its catalog node resolve, real processes)
 * one after another with `bunx lume-node --join`, and one is removed with `bun run fleet remove`,
 * while an official MCP client (it hears `notifications/tools/list_changed` and lists again), Ask
 * Agent, resolve's catalog, the AI Catalog, the hub's fleet view, the console's Fleet page open
 * in Chromium and `bun run fleet verify` watch. Each sees each change.
 */

import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import type { Browser, Page } from 'playwright-core';
import { launchBrowser, releaseBrowser } from './support/browser.ts';
import { bunCommand } from './support/bundle.ts';
import { tempDir } from './support/node.ts';
import { freshApp, outsideRepository, packedTarball, run } from './support/packed-app.ts';
import { freePorts, ROOT, spawnReading, waitFor } from './support/processes.ts';

setDefaultTimeout(20_000); // per file (Bun scopes it so): real servers and processes are slow on a busy machine

const work = tempDir('lume-a2a-membership-');
const appDir = join(work, 'apps');
const hubData = join(work, 'hub-data');
const fleetFile = join(work, 'fleet.json');
const [hubPort, resolvePort, ...appPorts] = freePorts(5) as number[];
const hubUrl = `http://127.0.0.1:${hubPort}`;
const procs = new Map<string, Bun.Subprocess<'ignore', 'pipe', 'pipe'>>();
let token = '';
let mcp: Client;
let listChanged = 0;
let browser: Browser;
let page: Page;

/** Three small apps, each one read-only capability with its own keywords. */
const APPS = [
  {
    name: 'weather',
    id: 'weather.now',
    words: ['temperature', 'weather'],
    answer: '{ celsius: 19 }',
  },
  { name: 'tides', id: 'tides.next', words: ['tide', 'tides'], answer: "{ high: '14:05' }" },
  { name: 'quakes', id: 'quakes.recent', words: ['earthquake', 'quakes'], answer: '{ count: 2 }' },
] as const;

function appSource(a: (typeof APPS)[number]): string {
  return `import { capability, defineNode } from 'lume-a2a';
export default defineNode(() => ({
  name: '${a.name}',
  description: 'The ${a.name} app.',
  capabilities: [
    capability({
      id: '${a.id}',
      name: '${a.name} now',
      description: 'What ${a.name} says now',
      tags: ['${a.name}'],
      keywords: ${JSON.stringify(a.words)},
      readOnly: true,
      args: {},
      run: () => (${a.answer}),
    }),
  ],
}));
`;
}

function spawn(name: string, cmd: string[], cwd: string, env: Record<string, string | undefined>) {
  const p = spawnReading(cmd, cwd, env);
  procs.set(name, p.proc);
  return p;
}
const fleetEnv = { DATA_DIR: hubData, FLEET_FILE: fleetFile };

const fleetNames = async (): Promise<string[]> =>
  ((await (await fetch(`${hubUrl}/api/fleet`)).json()).nodes as { name: string }[])
    .map((n) => n.name)
    .sort();
const mcpTools = async (): Promise<string[]> =>
  (await mcp.listTools()).tools
    .map((t) => t.name)
    .filter((n) => APPS.some((a) => n.startsWith(a.name)));
const resolveNodes = async (): Promise<string[]> => {
  const res = await fetch(`${hubUrl}/api/local-invoke`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({ target: 'resolve', capability: 'resolve.nodes', args: {} }),
  });
  const body = (await res.json()) as {
    result?: { nodes?: { node: string; capabilities: number }[] };
  };
  return (body.result?.nodes ?? []).filter((n) => n.capabilities > 0).map((n) => n.node);
};
const ask = async (question: string) =>
  (await (
    await fetch(`${hubUrl}/api/ask`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ question }),
    })
  ).json()) as { answered: boolean; tried: { node: string; tool: string; outcome: string }[] };
const catalogNames = async (): Promise<string[]> =>
  (
    (await (await fetch(`${hubUrl}/.well-known/ai-catalog.json`)).json()).entries as {
      displayName: string;
      type: string;
    }[]
  )
    .filter((e) => e.type !== 'application/ai-registry+json')
    .map((e) => e.displayName)
    .sort();

beforeAll(async () => {
  expect(outsideRepository(work)).toBe(true);
  await freshApp(appDir, await packedTarball());
  for (const a of APPS) writeFileSync(join(appDir, `${a.name}.ts`), appSource(a));
  writeFileSync(
    fleetFile,
    JSON.stringify({
      hub: { name: 'a2a', port: hubPort, role: 'hub', file: 'hub/main.ts' },
      nodes: [
        { name: 'resolve', port: resolvePort, role: 'catalog', file: 'node/resolve/index.ts' },
      ],
    }),
  );
  const made = await run(bunCommand(['hub/cli/keys.ts', 'token', 'add', 'apps']), ROOT, {
    DATA_DIR: hubData,
  });
  expect(made.code).toBe(0);
  token = made.out.trim().split('\n').at(-1)!;
  const hub = spawn('hub', bunCommand(['hub/main.ts']), ROOT, fleetEnv);
  await hub.out.until(/listening on /);
  // The one-time console URL the hub prints at start signs the browser in.
  const consoleUrl = /console: (\S+)/.exec(await hub.out.until(/console: /))![1]!;
  const resolve = spawn(
    'resolve',
    bunCommand(['node/main.ts', '--name', 'resolve']),
    ROOT,
    fleetEnv,
  );
  await resolve.out.until(/listening on /);
  mcp = new Client({ name: 'membership-test', version: '1.0.0' });
  mcp.setNotificationHandler(ToolListChangedNotificationSchema, async () => {
    listChanged++;
  });
  await mcp.connect(
    new StreamableHTTPClientTransport(new URL(`${hubUrl}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${token}` } },
    }),
  );
  // The client's stream of server messages is open once the hub can reach it.
  await waitFor('the MCP client listens', async () => (await mcp.listTools()).tools.length > 0);
  // The console's Fleet page stays open the whole time, on its live stream.
  browser = await launchBrowser();
  page = await browser.newPage();
  await page.goto(consoleUrl);
  await page.waitForURL(`${hubUrl}/`);
  await page.goto(`${hubUrl}/#/fleet`);
  await page.waitForSelector('table.fleet tr[data-node="resolve"]');
}, 120_000);

/** Who the open Fleet page shows, as it draws them. */
const consoleRows = () =>
  page.$$eval('table.fleet tbody tr', (trs) => trs.map((tr) => tr.getAttribute('data-node')));
/** `bun run fleet verify <name>` on the hub's machine, without a token (loopback). */
const verify = (name: string) =>
  run(bunCommand(['hub/cli/fleet.ts', 'verify', name]), ROOT, {
    ...fleetEnv,
    LUME_TOKEN: undefined,
  });

afterAll(async () => {
  await releaseBrowser();
  await mcp?.close().catch(() => {});
  for (const p of procs.values()) p.kill();
  await Promise.all([...procs.values()].map((p) => p.exited));
  rmSync(work, { recursive: true, force: true });
});

test('the fleet starts with the hub and resolve only', async () => {
  expect(await fleetNames()).toEqual(['resolve']);
  expect(await mcpTools()).toEqual([]);
  expect((await ask('what is the temperature now?')).answered).toBe(false);
});

test('three apps join one after another: each is in the fleet view, resolve, MCP, Ask and the AI Catalog', async () => {
  for (const [i, a] of APPS.entries()) {
    const heard = listChanged;
    const p = spawn(
      a.name,
      [
        'bunx',
        'lume-node',
        '--file',
        `./${a.name}.ts`,
        '--port',
        String(appPorts[i]),
        '--join',
        hubUrl,
      ],
      appDir,
      { LUME_TOKEN: token },
    );
    const joined = await Promise.race([
      p.err.until(/joined a2a at /),
      p.proc.exited.then((code) => `exited with ${code}: ${p.err.lines.join('\n')}`),
      Bun.sleep(15000).then(
        () => `DEBUG out=${p.out.lines.join('|')} err=${p.err.lines.join('|')}`,
      ),
    ]);
    expect(joined).toContain(`as ${a.name} (added)`);
    await waitFor(`the hub lists ${a.name}`, async () => (await fleetNames()).includes(a.name));
    // The MCP client is told, and its next listing has the app's tool.
    await waitFor(`MCP hears that ${a.name} joined`, () => listChanged > heard);
    await waitFor(`MCP lists ${a.name}'s tool`, async () =>
      (await mcpTools()).some((t) => t.startsWith(a.name)),
    );
    expect(await resolveNodes()).toContain(a.name);
    const answer = await ask(`${a.words[0]} now?`);
    expect(answer.answered).toBe(true);
    expect(answer.tried).toContainEqual(
      expect.objectContaining({ node: a.name, tool: a.id, outcome: 'ok' }),
    );
    expect((await catalogNames()).join(' ')).toContain(a.name);
    // The open console page draws it from its live stream; fleet verify checks it.
    await page.waitForSelector(`table.fleet tr[data-node="${a.name}"]`);
    const checked = await verify(a.name);
    expect(checked.code).toBe(0);
    expect(checked.out).toContain(a.name);
  }
  expect((await consoleRows()).sort()).toEqual(['quakes', 'resolve', 'tides', 'weather']);
  expect(await fleetNames()).toEqual(['quakes', 'resolve', 'tides', 'weather']);
}, 120_000);

test('bun run fleet remove: the member leaves the view, MCP, Ask and resolve, the others stay', async () => {
  const heard = listChanged;
  const removed = await run(bunCommand(['hub/cli/fleet.ts', 'remove', 'tides']), ROOT, fleetEnv);
  expect(removed.code).toBe(0);
  await waitFor('the hub drops tides', async () => !(await fleetNames()).includes('tides'));
  await waitFor('MCP hears that tides left', () => listChanged > heard);
  await waitFor(
    'MCP no longer lists tides',
    async () => !(await mcpTools()).some((t) => t.startsWith('tides')),
  );
  expect(await resolveNodes()).not.toContain('tides');
  expect((await ask('tide now?')).tried.some((t) => t.node === 'tides')).toBe(false);
  expect(await fleetNames()).toEqual(['quakes', 'resolve', 'weather']);
  expect((await ask('earthquake now?')).answered).toBe(true);
  await page.waitForSelector('table.fleet tr[data-node="tides"]', { state: 'detached' });
  expect((await consoleRows()).sort()).toEqual(['quakes', 'resolve', 'weather']);
  const gone = await verify('tides');
  expect(gone.code).toBe(2);
  expect(gone.err).toContain('fleet verify: not in the fleet: tides');
}, 60_000);
