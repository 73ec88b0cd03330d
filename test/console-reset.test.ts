/**
 * The console follows `event: reset` (STREAM_RESET), in a real headless Chromium against a real
 * fleet on port 0: a page's live stream drops, what happens while it is down is not sent again,
 * and its reconnect names a `Last-Event-ID` the hub cannot go on from; the hub says
 * `event: reset`, and the page reads its data afresh, so the missed message (Projects & History)
 * or call (Agent Process) shows without a reload. The drop is a route of the browser's: the first
 * stream answer ends at once, the reconnect waits until the test has acted, then goes to the hub
 * with the stale id.
 */

import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import type { Browser, Page, Route } from 'playwright-core';
import { launchBrowser, pageCollectingErrors, releaseBrowser } from './support/browser.ts';
import { realNodeDefs, startFleet, type RunningFleet } from './support/fleet.ts';
import { join, msg, type RawClient } from './support/mesh.ts';
import { TEST_AUTH } from './support/node.ts';

setDefaultTimeout(30_000); // per file (Bun scopes it so): real servers and processes are slow on a busy machine

let f: RunningFleet;
let browser: Browser;
let page: Page;
const errors: string[] = [];
const clients: RawClient[] = [];

beforeAll(async () => {
  f = await startFleet(await realNodeDefs(['scanner', 'crm']));
  browser = await launchBrowser();
  page = await pageCollectingErrors(browser, errors, { width: 1280, height: 900 }, f.hub);
});
afterAll(async () => {
  for (const c of clients) await c.close();
  await releaseBrowser();
  await f?.stop();
});

/**
 * Routes the stream at `path` (with `query` in its URL): its first answer ends at once; the
 * browser's reconnect is held until `release`, then goes to the hub naming `stale` as the last
 * event it had. `reconnected` resolves once the reconnect was seen.
 */
async function dropOnce(path: string, query: string, stale: string) {
  let release: () => void = () => {};
  const released = new Promise<void>((r) => (release = r));
  let seen: () => void = () => {};
  const reconnected = new Promise<void>((r) => (seen = r));
  let count = 0;
  const matches = (u: URL) => u.pathname === path && u.search.includes(query);
  const handler = async (route: Route) => {
    count++;
    if (count === 1)
      return route.fulfill({
        status: 200,
        headers: { 'content-type': 'text/event-stream', 'cache-control': 'no-store' },
        body: 'retry: 100\n\n',
      });
    if (count !== 2) return route.continue();
    seen();
    await released;
    // The id of an event the page had before the drop, as its reconnect names it.
    const headers = await route.request().allHeaders();
    return route.continue({ headers: { ...headers, 'last-event-id': stale } });
  };
  await page.route(matches, handler);
  return {
    release,
    reconnected,
    stop: () => page.unroute(matches, handler),
  };
}

describe('a page whose stream is reset reads its data again', () => {
  test('Projects & History: a message sent while the stream was down shows after the reset', async () => {
    const made = await fetch(`${f.hubUrl}/api/projects.create`, {
      method: 'POST',
      headers: { ...TEST_AUTH, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'reset-demo' }),
    });
    expect(made.status).toBe(200);
    const drop = await dropOnce('/v1/watch', 'project=reset-demo', 'gone-epoch:7');
    await page.goto(`${f.hubUrl}/#/history`);
    await page.click('tr[data-project="reset-demo"] button.show-history');
    await page.waitForSelector('.history >> text=No messages');
    // The browser reconnects by itself; the hub does not know the id it names.
    await drop.reconnected;
    const alice = (await join({ url: f.hubUrl }, 'reset-demo', 'alice')).c;
    clients.push(alice);
    await alice.send(msg('r1', crypto.randomUUID(), { type: 'project' }, 'sent while down'));
    drop.release();
    await page.waitForSelector('.history [data-live="on"]');
    const row = await page.waitForSelector('.history table.messages tr[data-ref="reset-demo:1"]');
    expect(await row.textContent()).toContain('sent while down');
    // After the reset the stream is live again: the next message arrives through it.
    await alice.send(msg('r2', crypto.randomUUID(), { type: 'project' }, 'live again'));
    await page.waitForSelector('.history table.messages tr[data-ref="reset-demo:2"]');
    await drop.stop();
    expect(errors).toEqual([]);
  });

  test('Agent Process: a call made while the stream was down is listed after the reset', async () => {
    const drop = await dropOnce('/api/trace/stream', '', '999999999');
    await page.goto(`${f.hubUrl}/#/trace`);
    await page.waitForSelector('table.trace, main >> text=No calls', { state: 'attached' });
    await drop.reconnected;
    const before = await page.$$eval('table.trace tr[data-trace-id]', (rows) => rows.length);
    // customer.reach calls scanner, then crm: two records the page has not read.
    const r = await fetch(`${f.hubUrl}/api/hub`, {
      method: 'POST',
      headers: { origin: f.hubUrl, 'content-type': 'application/json' },
      body: '{"skill":"customer.reach"}',
    });
    expect(r.status).toBe(200);
    const newest = (await (await fetch(`${f.hubUrl}/api/trace?limit=1`)).json()).records[0];
    drop.release();
    await page.waitForSelector(`table.trace tr[data-trace-id="${newest.id}"]`, {
      state: 'attached',
    });
    expect(
      await page.$$eval('table.trace tr[data-trace-id]', (rows) => rows.length),
    ).toBeGreaterThanOrEqual(before + 2);
    await drop.stop();
    expect(errors).toEqual([]);
  });
});
