/**
 * The console's mesh controls, in a real headless Chromium against a real fleet on port 0: the
 * header badge on every page says the live view's state and how many are present, the quick panel
 * shows the project, the hub, the roster and the last messages, and a direct message between two
 * mesh clients is shown to the console's loopback visitor (`console`) only as redacted, as to an
 * anonymous reader of `/v1/history`; a bearer token reads it whole (docs/security.md). A visitor
 * without a session is told to sign in before it can send (test/console-mesh-send.test.ts sends).
 */

import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import { rmSync } from 'node:fs';
import type { Browser, Page } from 'playwright-core';
import { memoryLog } from '../lib/log.ts';
import { createMeshClient, type MeshClient } from '../lib/mesh/client.ts';
import { decodeText } from '../lib/mesh/payload.ts';
import { launchBrowser, releaseBrowser, pageCollectingErrors } from './support/browser.ts';
import { realNodeDefs, startFleet, type RunningFleet } from './support/fleet.ts';
import { TEST_AUTH, tempDir } from './support/node.ts';

/** CONSOLE_SCREENSHOTS=1 keeps a picture of each width in /tmp, to look at. */
const SHOTS = process.env.CONSOLE_SCREENSHOTS === '1';

setDefaultTimeout(20_000); // per file (Bun scopes it so): real servers and processes are slow on a busy machine

let f: RunningFleet;
let browser: Browser;
const clients: MeshClient[] = [];
const errors: string[] = [];
const files = tempDir();
const SECRET = 'the deploy key rotates tonight';

beforeAll(async () => {
  f = await startFleet(await realNodeDefs(['scanner']));
  browser = await launchBrowser();
  await fetch(`${f.hubUrl}/api/projects.create`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'main' }),
  });
  for (const name of ['alice', 'bob']) {
    const c = createMeshClient({ hubUrl: f.hubUrl, log: memoryLog(), attachmentsDir: files });
    clients.push(c);
    expect((await c.connect(name, 'main')).state).toBe('connected');
  }
  const [alice] = clients;
  expect(
    (await alice!.send('alice', { target: { type: 'agent', name: 'bob' }, text: SECRET })).ok,
  ).toBe(true);
  expect((await alice!.send('alice', { target: { type: 'project' }, text: 'hello all' })).ok).toBe(
    true,
  );
});
afterAll(async () => {
  for (const c of clients) await c.close();
  await releaseBrowser();
  await f?.stop();
  rmSync(files, { recursive: true, force: true });
});

test('a direct message is redacted for readers who are not its parties; a token reads it whole', async () => {
  const read = async (headers: Record<string, string>) =>
    (await (await fetch(`${f.hubUrl}/v1/history?project=main`, { headers })).json()).messages.map(
      (m: any) =>
        `${m.from.name}>${m.target.name ?? '*'}${m.redacted ? ' (redacted)' : ''}: ${decodeText(m.payload)}`,
    );
  expect(await read(TEST_AUTH)).toEqual([`alice>bob: ${SECRET}`, 'alice>*: hello all']);
  const anonymous = await read({});
  expect(anonymous[0]).toMatch(/^alice>bob \(redacted\): /);
  expect(anonymous.join('\n')).not.toContain('deploy key');
  expect(anonymous[1]).toBe('alice>*: hello all');
});

async function open(width: number, height: number, hash: string): Promise<Page> {
  const page = await pageCollectingErrors(browser, errors, { width, height }, f.hub);
  await page.goto(`${f.hubUrl}/${hash}`);
  await page.locator('.mesh-badge[data-state="live"]').waitFor();
  return page;
}

test('the header badge and quick panel on every page: state, roster, last messages, no private text', async () => {
  const page = await open(1280, 900, '#/fleet');
  const badge = page.locator('.mesh-badge');
  await expect(badge.textContent()).resolves.toContain('Mesh main · 2 present');
  await badge.click();
  const panel = page.locator('#mesh-panel');
  await panel.waitFor();
  await panel.locator('.mesh-name', { hasText: 'console' }).waitFor();
  expect(await panel.locator('.mesh-identity dd').allTextContents()).toEqual([
    'main',
    'console (joins with your first message)',
    `a2a at ${f.hubUrl}`,
    'watching',
  ]);
  expect(await panel.locator('.mesh-peers li').allTextContents()).toEqual(['alice', 'bob']);
  await panel.locator('.mesh-last li').nth(1).waitFor();
  const last = await panel.locator('.mesh-last li').allTextContents();
  expect(last[1]).toContain('hello all');
  expect(last[0]).toContain('only its sender and recipient read it');
  expect(await page.content()).not.toContain('deploy key');
  if (SHOTS) await page.screenshot({ path: '/tmp/console-mesh-panel-1280.png' });
  await page.keyboard.press('Escape');
  await panel.waitFor({ state: 'detached' });
  // Another page has it too, and a new presence counts at once.
  await page.goto(`${f.hubUrl}/#/history`);
  const carol = createMeshClient({ hubUrl: f.hubUrl, log: memoryLog(), attachmentsDir: files });
  clients.push(carol);
  await carol.connect('carol', 'main');
  await page.locator('.mesh-badge', { hasText: '3 present' }).waitFor();
  expect(await page.content()).not.toContain('deploy key');
  await page.close();
});

test('an anonymous visitor is told to sign in, and the route refuses it with a code', async () => {
  const page = await open(1280, 900, '#/fleet');
  // The page handed its loopback visitor a session; without the cookie it is anonymous.
  await page.context().clearCookies();
  await page.locator('.mesh-badge').click();
  await page.locator('.mesh-sign-in a', { hasText: 'Sign in' }).waitFor();
  expect(await page.locator('.mesh-name').textContent()).toBe('none (not signed in)');
  expect(await page.locator('.mesh-send').count()).toBe(0);
  const r = await fetch(`${f.hubUrl}/api/mesh/send`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ project: 'main', to: 'bob', text: 'anonymous' }),
  });
  expect(r.status).toBe(403);
  expect((await r.json()).error.code).toBe('CONSOLE_MESH_SIGN_IN');
  await page.close();
});

test('the Mesh page opens on the project the badge shows, not the first one listed', async () => {
  const made = await fetch(`${f.hubUrl}/api/projects.create`, {
    method: 'POST',
    headers: { ...TEST_AUTH, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'aardvark' }),
  });
  expect(made.status).toBe(200);
  const page = await open(1280, 900, '#/mesh');
  const select = page.locator('select[name="project"]');
  await select.locator('option', { hasText: 'aardvark' }).waitFor({ state: 'attached' });
  expect(await select.locator('option').allTextContents()).toEqual(['aardvark', 'main']);
  await page.locator('main h2', { hasText: 'present in main' }).waitFor();
  expect(await select.inputValue()).toBe('main');
  await expect(page.locator('.mesh-badge').textContent()).resolves.toContain('Mesh main');
  await page.close();
});

test('on a 390 px screen the badge stays in the header and the panel fits the screen', async () => {
  const page = await open(390, 844, '#/ask');
  await page.locator('.mesh-badge').click();
  const box = await page.locator('#mesh-panel').boundingBox();
  expect(box!.x).toBeGreaterThanOrEqual(0);
  expect(box!.x + box!.width).toBeLessThanOrEqual(390);
  if (SHOTS) await page.screenshot({ path: '/tmp/console-mesh-panel-390.png' });
  await page.close();
  expect(errors).toEqual([]);
});
