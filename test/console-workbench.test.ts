/**
 * The workbench pages as a user meets them, in a real headless Chromium against a real fleet on
 * port 0: Ask Agent, Customer Ops, Entity Alignment and A2A Negotiation, each driven by typing and
 * clicking, with no page or console errors.
 */

import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import type { Browser, Page } from 'playwright-core';
import { launchBrowser, releaseBrowser, pageCollectingErrors } from './support/browser.ts';
import { realNodeDefs, startFleet, type RunningFleet } from './support/fleet.ts';

setDefaultTimeout(20_000); // per file (Bun scopes it so): real servers and processes are slow on a busy machine

let f: RunningFleet;
let browser: Browser;
let page: Page;
const errors: string[] = [];
const SHOTS = process.env.CONSOLE_SCREENSHOTS === '1';
const shot = (name: string) =>
  SHOTS ? page.screenshot({ path: `/tmp/console-${name}.png`, fullPage: true }) : undefined;

beforeAll(async () => {
  f = await startFleet(await realNodeDefs());
  browser = await launchBrowser();
  page = await pageCollectingErrors(browser, errors, { width: 1280, height: 900 }, f.hub);
});
afterAll(async () => {
  await releaseBrowser();
  await f?.stop();
});

describe('workbench pages', () => {
  test('navigation lists the four pages in order', async () => {
    await page.goto(`${f.hubUrl}/#/ask`);
    await page.waitForSelector('main[data-page="ask"]');
    const ids = await page.$$eval('nav a', (as) => as.map((a) => a.getAttribute('data-page')));
    expect(ids.slice(1, 5)).toEqual(['ask', 'customer-ops', 'entities', 'negotiation']);
  });

  test('Ask Agent: a sector question answers from scanner/sector.movement with a trace link', async () => {
    await page.fill('form.ask input[name="question"]', 'Which sectors moved today?');
    await page.click('form.ask button[type="submit"]');
    const fact = await page.waitForSelector(
      '.fact[data-node="scanner"][data-tool="sector.movement"]',
    );
    expect(await fact.textContent()).toContain('Robotics & Automation');
    expect(await fact.$eval('a.trace', (a) => a.getAttribute('href'))).toMatch(
      /^#\/trace\?id=\d+$/,
    );
    expect(await page.textContent('.answer')).toContain('planned by keywords');
    expect(await page.textContent('table.tried tbody')).toContain('sector.movement');
    await shot('ask');
  });

  test('Ask Agent: says plainly when nothing could answer', async () => {
    await page.fill('form.ask input[name="question"]', 'what is the weather on mars');
    await page.click('form.ask button[type="submit"]');
    const answer = await page.waitForSelector('.answer[data-answered="false"]');
    expect(await answer.textContent()).toContain('nothing could answer');
    expect(await page.textContent('main')).toContain('No tool was called.');
  });

  test('Customer Ops: the ranked list puts robotics first; refresh reloads it', async () => {
    await page.goto(`${f.hubUrl}/#/customer-ops`);
    const first = await page.waitForSelector('table.reach tr[data-rank="1"]');
    expect(await first.getAttribute('data-industry')).toBe('robotics');
    expect(await first.textContent()).toContain('+7%');
    expect(await page.textContent('h2')).toMatch(/as of \d{4}-\d{2}-\d{2}/);
    await page.click('button.refresh');
    await page.waitForSelector('button.refresh:not([disabled])');
    expect(await page.$$eval('table.reach tbody tr', (trs) => trs.length)).toBeGreaterThan(1);
    await shot('customer-ops');
  });

  test('Entity Alignment: code 688981 resolves matched; coverage lists the gap kinds; a bad query shows its code', async () => {
    await page.goto(`${f.hubUrl}/#/entities`);
    await page.waitForSelector('.coverage .gap-group');
    const kinds = await page.$$eval('.gap-group', (gs) =>
      gs.map((g) => g.getAttribute('data-kind')),
    );
    expect(kinds.sort()).toEqual([
      'ambiguous-name',
      'bad-check-digit',
      'no-uscc',
      'stock-not-on-scanner',
      'stock-without-entity',
    ]);
    expect(await page.textContent('.counts')).toContain('of 31 crm customers aligned');

    await page.click('.resolve button[type="submit"]');
    expect(
      await (
        await page.waitForSelector('.resolve .error[data-error="ENTITY_BAD_QUERY"]')
      ).textContent(),
    ).toContain('ENTITY_BAD_QUERY');

    await page.fill('.resolve input[name="code"]', '688981');
    await page.click('.resolve button[type="submit"]');
    const res = await page.waitForSelector('.resolution[data-status="matched"]');
    expect(await res.textContent()).toContain('Semiconductor Manufacturing International Corp.');
    await shot('entities');

    await page.fill('.resolve input[name="code"]', '');
    await page.fill('.resolve input[name="name"]', 'Yunqi Data Technology');
    await page.click('.resolve button[type="submit"]');
    const amb = await page.waitForSelector('.resolution[data-status="ambiguous"]');
    expect(await amb.$$eval('table.candidates tbody tr', (trs) => trs.length)).toBe(2);
  });

  test('A2A Negotiation: c-012 reaches a deal, c-014 does not (with veto codes), both listed and reopenable', async () => {
    await page.goto(`${f.hubUrl}/#/negotiation`);
    await page.waitForSelector('text=Past negotiations');
    await page.fill('form.negotiate input[name="customer"]', 'c-012');
    await page.click('form.negotiate button[type="submit"]');
    const deal = await page.waitForSelector('.negotiation[data-outcome="deal"]');
    expect(await deal.$eval('.outcome', (e) => e.textContent)).toContain('Deal');
    expect(await deal.$$eval('.round.accepted', (ls) => ls.length)).toBe(1);
    expect(await deal.$eval('.context-id', (e) => e.textContent)).toMatch(/^[0-9a-f-]{36}$/);
    await shot('negotiation-deal');

    await page.selectOption('form.negotiate select', 'c-014');
    await page.click('form.negotiate button[type="submit"]');
    const none = await page.waitForSelector('.negotiation[data-outcome="no-deal"]');
    expect(await none.$eval('.outcome', (e) => e.textContent)).toContain('No deal');
    const codes = await none.$$eval('.round.veto code.veto', (cs) => cs.map((c) => c.textContent));
    expect(codes).toEqual(['UNALIGNED_ENTITY', 'RISK_LEVEL', 'NO_SIGNAL']);
    await shot('negotiation');

    // The list reloads after each start: wait until it holds both.
    await page.waitForSelector('table.past tr[data-customer="c-012"]');
    await page.waitForSelector('table.past tr[data-customer="c-014"]');
    const listed = await page.$$eval('table.past tbody tr', (trs) =>
      trs.map((tr) => tr.getAttribute('data-customer')).sort(),
    );
    expect(listed).toEqual(['c-012', 'c-014']);
    await page.click('table.past tr[data-customer="c-012"] a');
    await page.waitForSelector('.negotiation[data-outcome="deal"]');

    await page.fill('form.negotiate input[name="customer"]', 'c-999');
    await page.click('form.negotiate button[type="submit"]');
    expect(await (await page.waitForSelector('main .error[data-error]')).textContent()).toContain(
      'UNKNOWN_CUSTOMER',
    );
  });

  test('no page or console errors beyond the two refusals asked for above', () => {
    // Chromium logs every non-2xx fetch; the hub answers ENTITY_BAD_QUERY and UNKNOWN_CUSTOMER with one each.
    const refused = (e: string) =>
      /^Failed to load resource: the server responded with a status of \d+/.test(e);
    expect(errors.filter((e) => !refused(e))).toEqual([]);
    expect(errors.filter(refused).length).toBe(2);
  });
});
