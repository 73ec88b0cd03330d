/**
 * Sending from the console's mesh panel, in a real headless Chromium against a real fleet on port
 * 0 whose hub wants a sign-in: the signed-in visitor `dora` sends a direct message from the quick
 * panel and a real mesh client receives it from the roster name the hub's presence for dora uses;
 * the panel shows that identity (project, roster name, hub). A POST from another site, a form body
 * and an anonymous caller send nothing (the route is `POST /api/mesh/send`, hub/http/mesh-send.ts).
 */

import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import { rmSync } from 'node:fs';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { newSecret } from '../lib/auth/secret.ts';
import { memoryLog } from '../lib/log.ts';
import { createMeshClient, type InboundMessage, type MeshClient } from '../lib/mesh/client.ts';
import { launchBrowser, releaseBrowser } from './support/browser.ts';
import { realNodeDefs, startFleet, type RunningFleet } from './support/fleet.ts';
import { TEST_AUTH, TEST_TOKEN, tempDir } from './support/node.ts';

/** CONSOLE_SCREENSHOTS=1 keeps a picture of each width in /tmp, to look at. */
const SHOTS = process.env.CONSOLE_SCREENSHOTS === '1';

setDefaultTimeout(20_000); // per file (Bun scopes it so): real servers and processes are slow on a busy machine

const TOKEN = newSecret();
let f: RunningFleet;
let browser: Browser;
let context: BrowserContext;
let erin: MeshClient;
const files = tempDir();
const heard: InboundMessage[] = [];
let onHeard: (() => void) | undefined;
/** Resolves once erin has heard `n` messages. */
const heardCount = (n: number) =>
  new Promise<void>((resolve) => {
    onHeard = () => heard.length >= n && resolve();
    onHeard();
  });

beforeAll(async () => {
  f = await startFleet(await realNodeDefs(['scanner']), {
    tokens: { dora: TOKEN },
    hub: { requireLogin: true },
  });
  browser = await launchBrowser();
  context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  await fetch(`${f.hubUrl}/api/projects.create`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...TEST_AUTH },
    body: JSON.stringify({ name: 'main' }),
  });
  erin = createMeshClient({
    hubUrl: f.hubUrl,
    token: TEST_TOKEN,
    log: memoryLog(),
    attachmentsDir: files,
    onInbound: (m) => {
      heard.push(m);
      onHeard?.();
    },
  });
  expect((await erin.connect('erin', 'main')).state).toBe('connected');
});
afterAll(async () => {
  await erin?.close();
  await releaseBrowser();
  await f?.stop();
  rmSync(files, { recursive: true, force: true });
});

async function signedIn(page: Page): Promise<void> {
  await page.goto(`${f.hubUrl}/login`);
  await page.fill('#token', TOKEN);
  await Promise.all([page.waitForURL(`${f.hubUrl}/`), page.click('button[type=submit]')]);
}

test('a signed-in visitor sends a direct message from the panel; a mesh client hears it from dora', async () => {
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await signedIn(page);
  await page.goto(`${f.hubUrl}/#/fleet`);
  await page.locator('.mesh-badge[data-state="live"]').waitFor();
  await page.locator('.mesh-badge').click();
  const panel = page.locator('#mesh-panel');
  await panel.locator('.mesh-name', { hasText: 'dora' }).waitFor();
  expect(await panel.locator('.mesh-identity dd').allTextContents()).toEqual([
    'main',
    'dora (joins with your first message)',
    `a2a at ${f.hubUrl}`,
    'watching',
  ]);
  await panel.locator('select[name=to] option', { hasText: 'erin' }).waitFor({ state: 'attached' });
  await panel.locator('select[name=to]').selectOption('erin');
  await panel.locator('input[name=text]').fill('hello erin, from the console');
  await panel.locator('button[type=submit]').click();
  await panel
    .locator('.mesh-send [role=status]', { hasText: 'sent as dora to 1 present' })
    .waitFor();
  await heardCount(1);
  const m = heard[0]!;
  expect(m.message.from.name).toBe('dora');
  expect(m.message.target).toMatchObject({ type: 'agent', name: 'erin' });
  expect(m.text).toBe('hello erin, from the console');
  // The presence is held now: the panel says so, the roster has dora, and the form is empty again.
  await panel.locator('.mesh-name', { hasText: 'dora (present through the hub)' }).waitFor();
  await panel.locator('.mesh-peers li', { hasText: 'dora' }).waitFor();
  expect(await panel.locator('input[name=text]').inputValue()).toBe('');
  // The sender reads its own direct message whole in the last messages.
  await panel.locator('.mesh-last li', { hasText: 'hello erin, from the console' }).waitFor();
  if (SHOTS) await page.screenshot({ path: '/tmp/console-mesh-send-1280.png' });
  await page.setViewportSize({ width: 390, height: 844 });
  const box = await panel.boundingBox();
  expect(box!.x).toBeGreaterThanOrEqual(0);
  expect(box!.x + box!.width).toBeLessThanOrEqual(390);
  if (SHOTS) await page.screenshot({ path: '/tmp/console-mesh-send-390.png' });
  expect(errors).toEqual([]);
  await page.close();
});

test('a POST from another site, a form body and an anonymous caller send nothing', async () => {
  const page = await context.newPage();
  await signedIn(page);
  const url = `${f.hubUrl}/api/mesh/send`;
  const body = JSON.stringify({ project: 'main', to: 'erin', text: 'forged' });
  const codeOf = async (r: { status(): number; json(): Promise<any> }) =>
    `${r.status()} ${(await r.json()).error?.code}`;
  // The page's cookies go with these requests, as a browser would send them.
  const crossOrigin = await page.request.post(url, {
    headers: { 'content-type': 'application/json', origin: 'http://evil.example' },
    data: body,
  });
  expect(await codeOf(crossOrigin)).toBe('403 FORBIDDEN_ORIGIN');
  const crossSite = await page.request.post(url, {
    headers: { 'content-type': 'application/json', 'sec-fetch-site': 'cross-site' },
    data: body,
  });
  expect(await codeOf(crossSite)).toBe('403 FORBIDDEN_CROSS_SITE');
  const form = await page.request.post(url, {
    headers: { 'content-type': 'text/plain', origin: f.hubUrl },
    data: body,
  });
  expect(await codeOf(form)).toBe('415 NOT_JSON');
  const anonymous = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body,
  });
  expect(anonymous.status).toBe(401);
  expect((await anonymous.json()).error.code).toBe('UNAUTHENTICATED');
  // Malformed input (here from a bearer token, which sends as `tester`) is refused with a code.
  for (const [bad, code] of [
    [{ project: 'main', to: '../x', text: 'hi' }, '400 BAD_REQUEST'],
    [{ project: 'main', text: '' }, '400 BAD_REQUEST'],
    [{ project: 'main', text: 'x'.repeat(40_000) }, '413 TOO_LARGE'],
    [[1, 2], '400 BAD_REQUEST'],
  ] as const) {
    const r = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...TEST_AUTH },
      body: JSON.stringify(bad),
    });
    expect(`${r.status} ${(await r.json()).error?.code}`).toBe(code);
  }
  // The same message sent by the console's own code on its page goes through: erin hears it next.
  const own = await page.evaluate(async () => {
    const module = '/api.js'; // the console's own module, served by the hub
    const api = await import(module);
    return api.meshSend('main', 'erin', 'from the hub page');
  });
  expect(own).toMatchObject({ ok: true, result: { name: 'dora', recipients: ['erin'] } });
  await heardCount(2);
  expect(heard.map((m) => m.text)).toEqual(['hello erin, from the console', 'from the hub page']);
  await page.close();
});
