/**
 * The console on a phone (390 × 844) in a real headless Chromium against a real fleet on port 0:
 * the header stays compact so the page's content starts in the first screen, and chart text is
 * drawn at least 11 px high (its font size times the chart's scale on screen).
 * CONSOLE_SCREENSHOTS=1 keeps a picture of each width in /tmp, to look at.
 */

import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import type { Browser, Page } from 'playwright-core';
import { launchBrowser, pageCollectingErrors, releaseBrowser } from './support/browser.ts';
import { realNodeDefs, startFleet, type RunningFleet } from './support/fleet.ts';

const SHOTS = process.env.CONSOLE_SCREENSHOTS === '1';

setDefaultTimeout(30_000); // per file (Bun scopes it so): a browser and a fleet on a busy machine

let f: RunningFleet;
let browser: Browser;
const errors: string[] = [];

beforeAll(async () => {
  f = await startFleet(await realNodeDefs(['scanner', 'crm']));
  browser = await launchBrowser();
});
afterAll(async () => {
  await releaseBrowser();
  await f?.stop();
});

async function open(width: number, height: number, hash: string): Promise<Page> {
  const page = await pageCollectingErrors(browser, errors, { width, height }, f.hub);
  await page.goto(`${f.hubUrl}/${hash}`);
  return page;
}

/** The height on screen of each chart text: font size in the chart's units times its scale. */
const chartTextPx = (page: Page) =>
  page.locator('svg.chart text').evaluateAll((texts) =>
    texts.map((t) => {
      const scale = (t as SVGTextElement).getScreenCTM()?.a ?? 1;
      return Math.round(parseFloat(getComputedStyle(t).fontSize) * scale * 10) / 10;
    }),
  );

for (const [width, height] of [
  [1280, 900],
  [390, 844],
] as const)
  test(`at ${width} px: a compact header, content in the first screen, chart text at least 11 px`, async () => {
    const page = await open(width, height, '#/customer-ops');
    await page.locator('svg.chart.bars text').first().waitFor();
    if (SHOTS) await page.screenshot({ path: `/tmp/console-phone-${width}.png` });
    const header = (await page.locator('header').boundingBox())!;
    expect(header.height).toBeLessThanOrEqual(width < 760 ? 90 : 100);
    const firstContent = (await page.locator('main h2').first().boundingBox())!;
    expect(firstContent.y).toBeLessThan(height / 4);
    const sizes = await chartTextPx(page);
    expect(sizes.length).toBeGreaterThan(0);
    expect(sizes.filter((s) => s < 11)).toEqual([]);
    await page.close();
  });

test('no page error', () => {
  expect(errors).toEqual([]);
});
