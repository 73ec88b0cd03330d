/**
 * The console's sign-in in a real headless Chromium, on a hub that requires it: the console sends
 * the browser to the form, the token typed there becomes an HttpOnly session cookie that no script
 * on the page can read, the console then works, and signing out sends the browser back.
 */

import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import type { Browser } from 'playwright-core';
import { newSecret } from '../lib/auth/secret.ts';
import { launchBrowser } from './support/browser.ts';
import { realNodeDefs, startFleet, type RunningFleet } from './support/fleet.ts';

setDefaultTimeout(20_000); // per file (Bun scopes it so): real servers and processes are slow on a busy machine

const TOKEN = newSecret();
let f: RunningFleet;
let browser: Browser;

beforeAll(async () => {
  f = await startFleet(await realNodeDefs(['scanner']), {
    tokens: { carol: TOKEN },
    hub: { requireLogin: true },
  });
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
  await f.stop();
});

test('sign in with a token, use the console, sign out; the session never reaches JavaScript', async () => {
  const page = await browser.newPage();
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(`${f.hubUrl}/#/fleet`);
  expect(new URL(page.url()).pathname).toBe('/login');

  await page.fill('#token', 'lume_not-a-token');
  await Promise.all([page.waitForLoadState('load'), page.click('button[type=submit]')]);
  expect(await page.textContent('.error')).toContain('not valid');

  await page.fill('#token', TOKEN);
  await Promise.all([page.waitForURL(`${f.hubUrl}/`), page.click('button[type=submit]')]);
  await page.goto(`${f.hubUrl}/#/fleet`);
  await page.waitForSelector('table.fleet tr[data-node="scanner"]');
  // The cookie is there for the browser to send, and invisible to the page's scripts.
  const cookies = await page.context().cookies();
  expect(cookies.map((c) => [c.name, c.httpOnly, c.sameSite])).toEqual([
    ['lume_session', true, 'Strict'],
  ]);
  expect(await page.evaluate(() => document.cookie)).toBe('');
  expect(
    await page.evaluate(
      () => JSON.stringify({ ...localStorage }) + JSON.stringify({ ...sessionStorage }),
    ),
  ).toBe('{}{}');

  await Promise.all([page.waitForURL(`${f.hubUrl}/login`), page.click('form.signout button')]);
  const after = await page.evaluate(async () => (await fetch('/api/trace')).status);
  expect(after).toBe(401);
  expect(errors).toEqual([]);
  await page.close();
});
