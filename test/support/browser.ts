/**
 * Test support: a headless Chromium (Debian's, at /usr/bin/chromium) driven by playwright-core,
 * with the flags this machine needs (no sandbox as root, no background networking).
 */

import { chromium, type Browser, type Page } from 'playwright-core';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

export function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--disable-quic',
      '--no-first-run',
    ],
  });
}

/** A hub that makes one-time console URLs (`Hub.consoleUrl`). */
export interface SignsIn {
  consoleUrl(): string;
}

/**
 * A new page whose script errors and console errors are pushed onto `errors` (a page test ends
 * expecting none), signed in to `hub`'s console when given, as a user is: by opening a fresh
 * console URL, which lands on the console.
 */
export async function pageCollectingErrors(
  browser: Browser,
  errors: string[],
  viewport?: { width: number; height: number },
  hub?: SignsIn,
): Promise<Page> {
  const page = await browser.newPage(viewport ? { viewport } : {});
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
  if (hub) await signIn(page, hub);
  return page;
}

/** Opens a fresh console URL of `hub` in `page` and waits until the console has loaded. */
export async function signIn(page: Page, hub: SignsIn): Promise<void> {
  const url = new URL(hub.consoleUrl());
  await page.goto(url.href);
  await page.waitForURL(`${url.origin}/`);
  await page.waitForSelector('header nav', { state: 'attached' });
}
