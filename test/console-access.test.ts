/**
 * The console for everyone, in a real headless Chromium against a real fleet on port 0: no page
 * scrolls sideways at 1280, 390 or 360 px (tables become stacked rows, the navigation folds behind
 * a Menu button); every control has a label and every page can be worked by keyboard alone with a
 * visible focus; the palette's text meets WCAG AA; the first load stays under 100 KB of JavaScript
 * and never leaves the hub.
 */

import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { readFileSync } from 'node:fs';
import { join as joinPath } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { launchBrowser, releaseBrowser, signIn } from './support/browser.ts';
import { consoleSession } from './support/console-session.ts';
import { realNodeDefs, startFleet, type RunningFleet } from './support/fleet.ts';
import { join, msg, type RawClient } from './support/mesh.ts';

setDefaultTimeout(20_000); // per file (Bun scopes it so): real servers and processes are slow on a busy machine

let f: RunningFleet;
let browser: Browser;
let client: RawClient;
const outside: string[] = [];

/** Each page, and what shows once it has its data (with the step that opens its detail). */
const PAGES: { id: string; ready: string; open?: (p: Page) => Promise<void> }[] = [
  { id: 'fleet', ready: 'table.fleet tbody tr' },
  { id: 'ask', ready: '.fact', open: (p) => p.click('button.suggestion') },
  { id: 'customer-ops', ready: 'svg.bars' },
  { id: 'entities', ready: '.coverage .gap-group' },
  {
    id: 'negotiation',
    ready: '.negotiation svg.sequence',
    open: (p) => p.click('table.past tbody tr a'),
  },
  { id: 'trace', ready: 'svg.waterfall' },
  { id: 'tasks', ready: '.task' },
  { id: 'mesh', ready: 'table.roster tr[data-peer="alice"]' },
  {
    id: 'history',
    ready: 'table.messages tbody tr',
    open: (p) => p.click('tr[data-project="access"] button.show-history'),
  },
];

async function show(page: Page, id: string): Promise<void> {
  const p = PAGES.find((x) => x.id === id)!;
  await page.goto(`${f.hubUrl}/#/${id}`);
  await page.waitForSelector(`main[data-page="${id}"] h2`);
  // The thing to click appears with the page's data; the click waits until it is there and
  // takes it again if a render replaces it.
  if (p.open) await p.open(page);
  await page.waitForSelector(p.ready, { state: 'attached' });
}

beforeAll(async () => {
  f = await startFleet(await realNodeDefs(['scanner', 'crm', 'resolve']));
  // The data is made as the console makes it, in a console session (every console URL signs in
  // as the principal `console`, so the pages below, signed in the same way, see these tasks).
  const session = await consoleSession(f.hub);
  const post = (path: string, body: unknown) =>
    fetch(`${f.hubUrl}${path}`, {
      method: 'POST',
      headers: { origin: f.hubUrl, ...session.headers, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  await post('/api/hub', { skill: 'negotiation.start', args: { customer: 'c-014' } });
  await post('/api/hub', { skill: 'customer.reach', args: {} });
  await fetch(`${f.hubUrl}/message:send`, {
    method: 'POST',
    headers: {
      origin: f.hubUrl,
      ...session.headers,
      'content-type': 'application/json',
      'A2A-Version': '1.0',
    },
    body: JSON.stringify({
      message: {
        messageId: crypto.randomUUID(),
        role: 'ROLE_USER',
        parts: [{ data: { skill: 'task.delegate', args: { prompt: 'fleet report' } } }],
      },
    }),
  });
  await post('/api/projects.create', {
    name: 'access',
    displayName: 'A project with a rather long display name to wrap',
  });
  client = (await join({ url: f.hubUrl }, 'access', 'alice')).c;
  await client.send(
    msg(
      'r1',
      crypto.randomUUID(),
      { type: 'project' },
      `a long line without spaces ${'x'.repeat(120)}`,
    ),
  );
  let frame = await client.next();
  while (frame.type !== 'accepted') frame = await client.next();
  browser = await launchBrowser();
});
afterAll(async () => {
  await client?.close();
  await releaseBrowser();
  await f?.stop();
});

async function newPage(width: number, before?: (page: Page) => void): Promise<Page> {
  const page = await browser.newPage({ viewport: { width, height: 800 } });
  page.on('request', (r) => !r.url().startsWith(f.hubUrl) && outside.push(r.url()));
  before?.(page);
  await signIn(page, f.hub);
  return page;
}

describe('no page scrolls sideways', () => {
  for (const width of [1280, 390, 360]) {
    test(`at ${width} px`, async () => {
      const page = await newPage(width);
      const wide: string[] = [];
      for (const { id } of PAGES) {
        await show(page, id);
        const [scroll, client] = await page.evaluate(() => [
          document.documentElement.scrollWidth,
          document.documentElement.clientWidth,
        ]);
        if (scroll > client) wide.push(`${id}: ${scroll} > ${client}`);
      }
      expect(wide).toEqual([]);
      if (width < 700) {
        // Tables are stacked rows: no header row on screen, each cell named.
        await show(page, 'fleet');
        // The header row is kept for screen readers in a 1 px clipped box.
        expect(
          await page.$eval('table.fleet thead', (t) => t.getBoundingClientRect().height),
        ).toBeLessThanOrEqual(1);
        expect(
          await page.$eval(
            'tr[data-node="scanner"] td',
            (td) => getComputedStyle(td, '::before').content,
          ),
        ).toBe('"node"');
      }
      await page.close();
    }, 60_000);
  }
});

describe('keyboard and labels', () => {
  test('on a phone the navigation folds behind a Menu button that opens and is worked by keyboard', async () => {
    const page = await newPage(390);
    await show(page, 'fleet');
    expect(await page.isVisible('nav a[data-page="tasks"]')).toBe(false);
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.className)).toContain('menu');
    await page.keyboard.press('Enter');
    await page.waitForSelector('nav a[data-page="tasks"]', { state: 'visible' });
    expect(await page.getAttribute('button.menu', 'aria-expanded')).toBe('true');
    await page.focus('nav a[data-page="tasks"]');
    await page.keyboard.press('Enter');
    await page.waitForSelector('main[data-page="tasks"]');
    // Following a link closes the menu again.
    expect(await page.isVisible('nav a[data-page="fleet"]')).toBe(false);
    await page.close();
  });

  test('every control on every page has a label, is reached by Tab and shows where the focus is', async () => {
    const page = await newPage(1280);
    const problems: string[] = [];
    for (const { id } of PAGES) {
      await show(page, id);
      // Disclosures are opened first, so what they hold counts too.
      await page.$$eval('main details', (ds) =>
        ds.forEach((d) => ((d as HTMLDetailsElement).open = true)),
      );
      const controls: string[] = await page.$$eval(
        'header a[href], header button, main a[href], main button:not([disabled]), main input, main select, main summary, main [tabindex="0"]',
        (els) =>
          els
            .filter((e) => (e as HTMLElement).offsetParent !== null || e instanceof SVGElement)
            .map((e, i) => {
              e.setAttribute('data-kbd', String(i));
              return String(i);
            }),
      );
      const unlabelled: string[] = await page.$$eval(
        'main input, main select, main button, main [role="button"]',
        (els) =>
          els
            .filter((e) => {
              const named =
                e.getAttribute('aria-label') || (e.tagName === 'BUTTON' && e.textContent?.trim());
              const labelled = (e as HTMLInputElement).labels?.length;
              return !named && !labelled;
            })
            .map((e) => e.outerHTML.slice(0, 80)),
      );
      problems.push(...unlabelled.map((u) => `${id}: no label on ${u}`));

      await page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur());
      await page.focus('body');
      // Each element Tab lands on is noted as it takes the focus (one round trip per press).
      await page.evaluate(() => {
        const w = window as unknown as { focusLog?: unknown[]; focusNoted?: boolean };
        w.focusLog = [];
        if (w.focusNoted) return;
        w.focusNoted = true;
        document.addEventListener('focusin', () => {
          const e = document.activeElement;
          if (!e || e === document.body) return;
          const style = getComputedStyle(e);
          const hit = e.querySelector(':scope > rect.hit');
          const ring = style.outlineStyle !== 'none' && parseFloat(style.outlineWidth) >= 2;
          const marked = hit !== null && getComputedStyle(hit).stroke !== 'none';
          w.focusLog!.push({
            kbd: e.getAttribute('data-kbd'),
            visible: ring || marked,
            what: e.outerHTML.slice(0, 60),
          });
        });
      });
      for (let i = 0; i < controls.length + 5; i++) await page.keyboard.press('Tab');
      const log = (await page.evaluate(
        () => (window as unknown as { focusLog: unknown[] }).focusLog,
      )) as { kbd: string | null; visible: boolean; what: string }[];
      const reached = new Set<string>();
      for (const seen of log) {
        if (seen.kbd) reached.add(seen.kbd);
        if (!seen.visible) problems.push(`${id}: no visible focus on ${seen.what}`);
      }
      const missed = controls.filter((c) => !reached.has(c));
      if (missed.length)
        problems.push(`${id}: ${missed.length} of ${controls.length} controls not reached by Tab`);
    }
    expect(problems).toEqual([]);
    await page.close();
  }, 60_000);

  test('a chart is worked by keyboard: Enter on a Customer Ops bar filters the list; Ask runs a suggestion by keyboard', async () => {
    const page = await newPage(1280);
    await show(page, 'customer-ops');
    await page.focus('svg.bars g.bar[data-key="semiconductors"]');
    await page.keyboard.press('Enter');
    await page.waitForSelector('svg.bars g.bar.selected[data-key="semiconductors"]');
    expect(
      await page.$$eval('table.reach tbody tr', (trs) =>
        trs.map((tr) => tr.getAttribute('data-industry')),
      ),
    ).toEqual(['semiconductors']);
    await page.keyboard.press('Space');
    await page.waitForFunction(() => document.querySelectorAll('table.reach tbody tr').length > 1);

    await page.goto(`${f.hubUrl}/#/ask`);
    await page.focus('button.suggestion');
    await page.keyboard.press('Enter');
    await page.waitForSelector('.fact');
    await page.close();
  });
});

describe('contrast', () => {
  const css = readFileSync(joinPath(import.meta.dir, '..', 'console', 'style.css'), 'utf8');
  const vars = new Map(
    [...css.matchAll(/--([a-z-]+):\s*(#[0-9a-f]{3,6})\b/gi)].map((m) => [m[1]!, m[2]!]),
  );
  const rgb = (hex: string) => {
    const h =
      hex.length === 4
        ? hex
            .slice(1)
            .split('')
            .map((c) => c + c)
            .join('')
        : hex.slice(1);
    return [0, 2, 4].map((i) => parseInt(h.slice(i, i + 2), 16) / 255);
  };
  const luminance = (hex: string) => {
    const [r, g, b] = rgb(hex).map((c) =>
      c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4,
    ) as [number, number, number];
    return 0.2126 * r + 0.7152 * g + 0.0722 * b;
  };
  const ratio = (a: string, b: string) => {
    const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x) as [number, number];
    return (hi + 0.05) / (lo + 0.05);
  };
  const color = (name: string) => {
    const c = vars.get(name);
    if (!c) throw new Error(`style.css declares no --${name}`);
    return c;
  };

  test('the formula: black on white is 21:1, a colour on itself 1:1', () => {
    expect(ratio('#000', '#fff')).toBeCloseTo(21, 5);
    expect(ratio('#2459a0', '#2459a0')).toBe(1);
  });

  test('text is at least 4.5:1 on every background it is set on; focus rings and field borders at least 3:1', () => {
    const text: [string, string[]][] = [
      ['fg', ['page', 'card', 'th', 'selected', 'code-bg', 'warn-bg', 'failed-row', 'empty-row']],
      ['muted', ['page', 'card', 'th', 'selected']],
      ['accent', ['page', 'card', 'info-bg', 'selected']],
      ['on-accent', ['accent']],
      ['ok', ['page', 'card', 'ok-bg']],
      ['bad', ['page', 'card', 'bad-bg', 'th', 'failed-row']],
      ['warn', ['page', 'card', 'warn-bg', 'empty-row']],
    ];
    const low: string[] = [];
    for (const [fg, bgs] of text)
      for (const bg of bgs) {
        const r = ratio(color(fg), color(bg));
        if (r < 4.5) low.push(`--${fg} on --${bg}: ${r.toFixed(2)}`);
      }
    for (const [fg, bg] of [
      ['focus', 'page'],
      ['focus', 'card'],
      ['field-line', 'card'],
      ['chart-marked', 'card'],
      ['chart-down', 'card'],
    ] as const) {
      const r = ratio(color(fg), color(bg));
      if (r < 3) low.push(`--${fg} on --${bg}: ${r.toFixed(2)}`);
    }
    expect(low).toEqual([]);
  });
});

describe('first load', () => {
  test('under 100 KB of JavaScript, every request to the hub itself', async () => {
    let bytes = 0;
    const scripts: string[] = [];
    // Counted from the sign-in on: its page's one script is part of the first load.
    const page = await newPage(1280, (p) =>
      p.on('response', async (r) => {
        if (r.request().resourceType() !== 'script') return;
        scripts.push(new URL(r.url()).pathname);
        // The sign-in page's script is gone with its page once it has run: its length then.
        bytes +=
          (await r.body().catch(() => null))?.length ?? Number(r.headers()['content-length'] ?? 0);
      }),
    );
    await show(page, 'fleet');
    await page.waitForLoadState('networkidle').catch(() => {});
    expect(scripts).toContain('/pages/fleet.js');
    // Other pages load when opened, not before.
    expect(scripts).not.toContain('/pages/negotiation.js');
    expect(bytes).toBeLessThan(100_000);
    expect(outside).toEqual([]);
    await page.close();
  });
});
