/**
 * @module docs/screenshots — takes the README's screenshots of the console: starts a whole fleet
 * on port 0 (as the tests do), makes some traffic (a question, a negotiation), opens the pages in
 * headless Chromium and saves PNGs. `bun docs/screenshots.ts` writes the two kept in docs/;
 * `bun docs/screenshots.ts <folder> --all` writes every page at 1280 and 390 px wide there.
 */

import { join } from 'node:path';
import { launchBrowser } from '../test/support/browser.ts';
import { realNodeDefs, startFleet } from '../test/support/fleet.ts';

const PAGES = ['fleet', 'ask', 'customer-ops', 'entities', 'negotiation', 'trace', 'tasks', 'mesh', 'history'];
// Agent Process first: its waterfall shows the newest question's calls, before other pages make their own.
const KEPT: [page: string, file: string][] = [['trace', 'console-agent-process.png'], ['customer-ops', 'console-customer-ops.png']];

const all = process.argv.includes('--all');
const out = process.argv.slice(2).find((a) => !a.startsWith('--')) ?? import.meta.dir;

const f = await startFleet(await realNodeDefs(), { liveMs: { fleet: 1000 } });
const browser = await launchBrowser();
try {
  const post = (path: string, body: unknown) =>
    fetch(`${f.hubUrl}${path}`, { method: 'POST', headers: { origin: f.hubUrl, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  await post('/api/hub', { skill: 'negotiation.start', args: { customer: 'c-014' } });
  await post('/api/ask', { question: 'Which industry should we contact today?' });

  const shots: [page: string, width: number, file: string][] = all
    ? PAGES.flatMap((p) => [[p, 1280, `${p}-1280.png`], [p, 390, `${p}-390.png`]] as [string, number, string][])
    : KEPT.map(([p, file]) => [p, 1280, file]);
  for (const [id, width, file] of shots) {
    const page = await browser.newPage({ viewport: { width, height: 800 } });
    await page.goto(`${f.hubUrl}/#/${id}`);
    await page.waitForSelector(`main[data-page="${id}"] h2`);
    // Each page's first answer: a chart, a table or a card, whichever it draws.
    await page.waitForSelector('main svg.chart, main table, main .card, main .muted', { timeout: 10_000 });
    await page.waitForLoadState('networkidle').catch(() => {});
    if (id === 'negotiation') await page.click('table.past tbody tr a');
    if (id === 'negotiation') await page.waitForSelector('svg.sequence');
    if (id === 'customer-ops' || id === 'trace') await page.waitForSelector('svg.chart');
    await page.screenshot({ path: join(out, file), fullPage: all });
    await page.close();
    console.log(`${join(out, file)}`);
  }
} finally {
  await browser.close();
  await f.stop();
}
