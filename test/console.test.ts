/**
 * The console as a user meets it: the hub serves it at `/` with its import map's modules from an
 * allow-list (nothing else under node_modules), and in a real headless Chromium the Fleet page
 * shows every node of a real fleet on port 0.
 */

import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import type { Browser, Page } from 'playwright-core';
import { launchBrowser, releaseBrowser, pageCollectingErrors } from './support/browser.ts';
import { consoleSession } from './support/console-session.ts';
import { fixtureFleet, realNodeDefs, startFleet, type RunningFleet } from './support/fleet.ts';

setDefaultTimeout(20_000); // per file (Bun scopes it so): real servers and processes are slow on a busy machine

let f: RunningFleet;
let browser: Browser;
let page: Page;
const errors: string[] = [];

beforeAll(async () => {
  f = await startFleet(await realNodeDefs());
  browser = await launchBrowser();
  page = await pageCollectingErrors(browser, errors, undefined, f.hub);
});
afterAll(async () => {
  await releaseBrowser();
  await f.stop();
});

describe('serving', () => {
  test('index, app modules and the three vendor modules, nothing else from node_modules', async () => {
    // The page itself comes to a signed-in browser; anyone else is sent to sign in.
    expect((await fetch(`${f.hubUrl}/`, { redirect: 'manual' })).headers.get('location')).toBe(
      '/login',
    );
    const index = await fetch(`${f.hubUrl}/`, { headers: (await consoleSession(f.hub)).headers });
    expect(index.headers.get('content-type')).toContain('text/html');
    expect(await index.text()).toContain('"preact/hooks": "/vendor/hooks.mjs"');
    for (const path of [
      '/app.js',
      '/api.js',
      '/constants.js',
      '/pages/tasks.js',
      '/style.css',
      '/vendor/preact.mjs',
      '/vendor/hooks.mjs',
      '/vendor/htm.mjs',
    ]) {
      const res = await fetch(`${f.hubUrl}${path}`);
      expect([path, res.status]).toEqual([path, 200]);
    }
    for (const path of [
      '/types.d.ts',
      '/jsconfig.json',
      '/vendor/../package.json',
      '/node_modules/preact/package.json',
      '/vendor/elysia.mjs',
      '/%2e%2e/package.json',
      '/../README.md',
    ]) {
      const res = await fetch(`${f.hubUrl}${path}`);
      expect([path, res.status]).toEqual([path, 404]);
    }
  });
});

describe('in the browser', () => {
  test('the Fleet page lists every default node of the fleet file online', async () => {
    const { defaults } = await fixtureFleet();
    await page.goto(`${f.hubUrl}/#/fleet`);
    await page.waitForSelector(`table.fleet tr[data-node="${defaults.at(-1)}"]`);
    const rows = await page.$$eval('table.fleet tbody tr', (trs) =>
      trs.map((tr) => [tr.getAttribute('data-node'), tr.className]),
    );
    expect(rows).toEqual(defaults.map((n) => [n, 'online']));
    expect(await page.textContent('h2')).toContain(
      `${defaults.length} of ${defaults.length} online`,
    );
    expect(errors).toEqual([]);
  });
});
