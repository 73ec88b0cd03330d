/**
 * The operations pages as a user meets them, in a real headless Chromium against a real fleet
 * (scanner and the executor resolve) whose hub hosts the mesh: Agent Process shows calls made
 * through the hub, live, with failures marked and a linked record highlighted; Tasks (an A2A client
 * of the hub's HTTP+JSON binding) offers the executor's recipes, delegates a fleet report to
 * completion and cancels a demo job; Projects & History creates a project and
 * shows a message a real WebSocket client sent; Mesh lists that client in its roster.
 */

import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import type { Browser, Page } from 'playwright-core';
import { launchBrowser, releaseBrowser, pageCollectingErrors } from './support/browser.ts';
import { localInvoke, realNodeDefs, startFleet, type RunningFleet } from './support/fleet.ts';
import { join, msg, type RawClient } from './support/mesh.ts';
import { FIXTURES } from './support/node.ts';

setDefaultTimeout(20_000); // per file (Bun scopes it so): real servers and processes are slow on a busy machine

let f: RunningFleet;
let browser: Browser;
let page: Page;
let client: RawClient | undefined;
const errors: string[] = [];
const shot = (name: string) =>
  process.env.CONSOLE_SCREENSHOTS
    ? page.screenshot({ path: `/tmp/console-${name}.png`, fullPage: true })
    : Promise.resolve();

beforeAll(async () => {
  f = await startFleet(await realNodeDefs(['scanner', 'resolve']));
  browser = await launchBrowser();
  page = await pageCollectingErrors(browser, errors, { width: 1200, height: 900 }, f.hub);
});
afterAll(async () => {
  if (client) await client.close();
  await releaseBrowser();
  await f.stop();
});

describe('Agent Process', () => {
  test('shows calls made through the hub, a new one live, a failure marked, and a linked record highlighted', async () => {
    const ok = await localInvoke(f.hubUrl, { target: 'scanner', capability: 'sector.movement' });
    expect(ok.status).toBe(200);
    const first = (await (await fetch(`${f.hubUrl}/api/trace?limit=1`)).json()).records[0];
    await page.goto(`${f.hubUrl}/#/trace`);
    await page.waitForSelector(`table.trace tr[data-trace-id="${first.id}"][data-outcome="ok"]`);
    expect(await page.textContent(`tr[data-trace-id="${first.id}"]`)).toContain('sector.movement');
    await page.waitForSelector('[data-live="on"]');

    // A failing call while the page is open arrives over the stream, marked failed.
    const bad = await localInvoke(f.hubUrl, {
      target: 'scanner',
      capability: 'scanner.no-such-tool',
    });
    expect(bad.status).toBe(404);
    const failed = await page.waitForSelector('table.trace tr[data-outcome="failed"]');
    expect(await failed.textContent()).toContain('scanner.no-such-tool');
    expect(await page.$eval('table.trace tbody tr', (tr) => tr.getAttribute('data-outcome'))).toBe(
      'failed',
    );

    // The outcome filter shows only failures.
    await page.selectOption('select[name="outcome"]', 'failed');
    await page.waitForFunction(
      () =>
        Array.from(document.querySelectorAll('table.trace tbody tr')).every(
          (tr) => tr.getAttribute('data-outcome') === 'failed',
        ) && !!document.querySelector('table.trace tbody tr'),
    );
    await shot('trace');

    // A link to one record (as Ask Agent's facts make) highlights it.
    // From another page, shown first, as a person following such a link would be.
    await page.goto(`${f.hubUrl}/#/fleet`);
    await page.waitForSelector('main[data-page="fleet"] table.fleet');
    await page.goto(`${f.hubUrl}/#/trace?id=${first.id}`);
    await page.waitForSelector(`table.trace tr.highlight[data-trace-id="${first.id}"]`);
    expect(await page.$$eval('table.trace tr.highlight', (trs) => trs.length)).toBe(1);
    expect(errors).toEqual([]);
  }, 20_000);
});

describe('Tasks', () => {
  test('a fleet report delegated from the page reaches completed with its output', async () => {
    await page.goto(`${f.hubUrl}/#/tasks`);
    await page.waitForSelector('form.delegate');
    // The page offers exactly the executor's recipes.
    const recipes = (await Bun.file(`${FIXTURES}/resolve/recipes.json`).json()).recipes.map(
      (r: { name: string }) => r.name,
    );
    expect(
      await page.$$eval('select[name="recipe"] option', (os) =>
        os.map((o) => (o as HTMLOptionElement).value).filter(Boolean),
      ),
    ).toEqual(recipes);
    await page.fill('input[name="prompt"]', 'fleet report');
    await page.click('form.delegate button[type="submit"]');
    const done = await page.waitForSelector('.task[data-state="TASK_STATE_COMPLETED"] pre.output', {
      timeout: 20_000,
    });
    expect(await done.textContent()).toContain('scanner');
    const card = await page.textContent('.task[data-state="TASK_STATE_COMPLETED"]');
    expect(card).toContain('fleet-report');
    expect(card).toContain('resolve');
    expect(errors).toEqual([]);
  }, 20_000);

  test('the demo recipe delegated from the page is canceled from the page', async () => {
    await page.fill('input[name="prompt"]', 'run the demo');
    await page.selectOption('select[name="recipe"]', 'demo');
    await page.click('form.delegate button[type="submit"]');
    const working = await page.waitForSelector('.task[data-state="TASK_STATE_WORKING"]');
    const id = await working.getAttribute('data-task-id');
    expect(await working.textContent()).toContain('demo');
    await shot('tasks');
    await page.click(`.task[data-task-id="${id}"] button.cancel`);
    await page.waitForSelector(`.task[data-task-id="${id}"][data-state="TASK_STATE_CANCELED"]`);
    expect(await page.$(`.task[data-task-id="${id}"] button.cancel`)).toBeNull();
    expect(errors).toEqual([]);
  }, 20_000);
});

describe('Projects & History, Mesh', () => {
  test('a project created from the page is listed; a message sent by a client shows in its history', async () => {
    await page.goto(`${f.hubUrl}/#/history`);
    await page.waitForSelector('form.create-project');
    await page.fill('form.create-project input[name="name"]', 'ops-demo');
    await page.fill('form.create-project input[name="displayName"]', 'Ops demo');
    await page.click('form.create-project button[type="submit"]');
    await page.waitForSelector('table.projects tr[data-project="ops-demo"]');
    expect(await page.textContent('tr[data-project="ops-demo"]')).toContain('Ops demo');

    const joined = await join({ url: f.hubUrl }, 'ops-demo', 'alice');
    client = joined.c;
    await client.send(msg('r1', crypto.randomUUID(), { type: 'project' }, 'the build is green'));
    let frame = await client.next();
    while (frame.type !== 'accepted') frame = await client.next();

    // Deletion is refused while alice is present, with the hub's code.
    await page.click('tr[data-project="ops-demo"] button.delete');
    await page.waitForSelector('.error[data-error-code="project-conflict"]');

    await page.click('tr[data-project="ops-demo"] button.show-history');
    const row = await page.waitForSelector('.history table.messages tr[data-ref="ops-demo:1"]');
    expect(await row.textContent()).toContain('the build is green');
    expect(await row.textContent()).toContain('alice');
    await shot('history');
    expect(errors).toEqual([]);
  }, 20_000);

  test('the Mesh roster of the project lists the connected client, with a topology hidden on narrow layouts', async () => {
    await page.goto(`${f.hubUrl}/#/mesh`);
    await page.waitForSelector('select[name="project"] option[value="ops-demo"]', {
      state: 'attached',
    });
    await page.selectOption('select[name="project"]', 'ops-demo');
    await page.waitForSelector('table.roster tr[data-peer="alice"]');
    expect(await page.isVisible('svg.topology[data-layout="orbit"] g[data-peer="alice"]')).toBe(
      true,
    );
    await shot('mesh');
    await page.setViewportSize({ width: 600, height: 900 });
    expect(await page.isVisible('svg.topology')).toBe(false);
    expect(await page.isVisible('table.roster tr[data-peer="alice"]')).toBe(true);
    await page.setViewportSize({ width: 1200, height: 900 });

    // Once alice leaves, the roster empties and the project can be deleted from Projects & History.
    await client!.close();
    client = undefined;
    await page.waitForSelector('table.roster tr[data-peer="alice"]', { state: 'detached' });
    await page.goto(`${f.hubUrl}/#/history`);
    await page.click('tr[data-project="ops-demo"] button.delete');
    await page.waitForSelector('tr[data-project="ops-demo"]', { state: 'detached' });
    expect(errors).toEqual([]);
  }, 20_000);
});
