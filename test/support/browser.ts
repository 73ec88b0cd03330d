/**
 * Test support: a headless Chromium (Debian's) driven by playwright-core, with the flags this
 * machine needs (no sandbox as root, no background networking).
 */

import { existsSync } from 'node:fs';
import { chromium, type Browser, type Page } from 'playwright-core';
import { processFolder } from './run-scope.ts';

/**
 * `CHROMIUM_PATH`, else Debian's headless shell (package chromium-headless-shell: the same
 * engine without the browser's windowing layers, under half the CPU for the console's suites),
 * else Debian's full Chromium.
 */
const HEADLESS_SHELL = '/usr/lib/chromium/chromium-headless-shell';
const CHROMIUM =
  process.env.CHROMIUM_PATH ?? (existsSync(HEADLESS_SHELL) ? HEADLESS_SHELL : '/usr/bin/chromium');

let shared: Promise<Browser> | undefined;

/**
 * The test process's Chromium, launched on first use and shared by the files that run in it (a
 * launch costs ~3 s of CPU; a file's isolation is its own contexts, see `releaseBrowser`). It
 * ends with the process: the pipe playwright drives it through closes, and Chromium exits. Its
 * profile and environment name a folder of the process, not of the file that launched it, so a
 * file's leak check does not take it for something that file left running.
 */
export function launchBrowser(): Promise<Browser> {
  shared ??= launch().then((browser) => {
    browser.on('disconnected', () => {
      shared = undefined;
    });
    return browser;
  });
  return shared;
}

async function launch(): Promise<Browser> {
  const dir = processFolder('browser');
  const fileScope = process.env.TMPDIR;
  // playwright makes its profile and artifacts folders in os.tmpdir() while it launches.
  process.env.TMPDIR = dir;
  try {
    return await chromium.launch({
      executablePath: CHROMIUM,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: dir, TMPDIR: dir },
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
  } finally {
    process.env.TMPDIR = fileScope;
  }
}

/** Ends a file's use of the shared browser: every page and context it opened is closed. */
export async function releaseBrowser(): Promise<void> {
  if (!shared) return;
  const browser = await shared;
  await Promise.all(browser.contexts().map((c) => c.close()));
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
