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

/** A new page whose script errors and console errors are pushed onto `errors` (a page test ends expecting none). */
export async function pageCollectingErrors(
  browser: Browser,
  errors: string[],
  viewport?: { width: number; height: number },
): Promise<Page> {
  const page = await browser.newPage(viewport ? { viewport } : {});
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
  return page;
}
