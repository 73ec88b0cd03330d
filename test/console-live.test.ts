/**
 * The console's pictures and live pages, in a real headless Chromium against a real fleet on
 * port 0 whose hub re-reads its live sources quickly: each chart is drawn from the data it shows
 * (bar lengths in the order of the values, a waterfall in the order and length of the calls, the
 * rounds of a negotiation as arrows between the two agents); a mesh message sent by a client shows
 * in the open history page and lights the Mesh topology without a reload; a task that needs input
 * is continued from the page to completion; a node stopped shows offline without a reload. The
 * streams behind them are read over plain HTTP too, and a consumer that falls behind is cut.
 */

import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import type { Browser, Page } from 'playwright-core';
import { EventQueue } from '../lib/event-queue.ts';
import { launchBrowser, releaseBrowser, pageCollectingErrors } from './support/browser.ts';
import { realNodeDefs, startFleet, type RunningFleet } from './support/fleet.ts';
import { join, msg, type RawClient } from './support/mesh.ts';

setDefaultTimeout(20_000); // per file (Bun scopes it so): real servers and processes are slow on a busy machine

let f: RunningFleet;
let browser: Browser;
let page: Page;
const errors: string[] = [];
const outside: string[] = [];
const clients: RawClient[] = [];

beforeAll(async () => {
  f = await startFleet(await realNodeDefs(['scanner', 'crm', 'resolve', 'lan']), {
    hub: { liveMs: { fleet: 150, tasks: 150 } },
  });
  browser = await launchBrowser();
  page = await pageCollectingErrors(browser, errors, { width: 1280, height: 900 }, f.hub);
  page.on('request', (r) => !r.url().startsWith(f.hubUrl) && outside.push(r.url()));
});
afterAll(async () => {
  for (const c of clients) await c.close();
  await releaseBrowser();
  await f?.stop();
});

const refused = (e: string) =>
  /^Failed to load resource: the server responded with a status of 400/.test(e);

/** The first `count` data messages of an SSE stream, parsed. */
async function readStream(url: string, count: number): Promise<any[]> {
  const ac = new AbortController();
  const res = await fetch(url, { signal: ac.signal });
  expect(res.headers.get('content-type')).toBe('text/event-stream');
  const reader = res.body!.getReader();
  const out: any[] = [];
  let buf = '';
  while (out.length < count) {
    const { value, done } = await reader.read();
    if (done) break;
    buf += new TextDecoder().decode(value);
    let i: number;
    while ((i = buf.indexOf('\n\n')) >= 0) {
      const frame = buf.slice(0, i);
      buf = buf.slice(i + 2);
      const data = frame.split('\n').find((l) => l.startsWith('data: '));
      if (data) out.push(JSON.parse(data.slice(6)));
    }
  }
  ac.abort();
  return out.slice(0, count);
}

describe('the streams', () => {
  test('/api/fleet/stream sends the fleet with its readings; /api/tasks/stream the task list; /v1/watch a roster', async () => {
    const [first, second] = await readStream(`${f.hubUrl}/api/fleet/stream`, 2);
    expect(first.snapshot.nodes.map((n: any) => n.name).sort()).toEqual([
      'crm',
      'lan',
      'resolve',
      'scanner',
    ]);
    expect(first.samples.length).toBeGreaterThanOrEqual(1);
    expect(second.samples).toHaveLength(1);
    expect(second.samples[0].at).toBe(second.snapshot.checkedAt);
    const [tasks] = await readStream(`${f.hubUrl}/api/tasks/stream`, 1);
    expect(Array.isArray(tasks.tasks)).toBe(true);
    await fetch(`${f.hubUrl}/api/projects.create`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"name":"watched"}',
    });
    const [roster] = await readStream(`${f.hubUrl}/v1/watch?project=watched`, 1);
    expect(roster).toEqual({ type: 'roster', peers: [] });
    expect((await fetch(`${f.hubUrl}/v1/watch?project=nope`)).status).toBe(404);
    expect(
      (
        await fetch(`${f.hubUrl}/api/fleet/stream`, {
          method: 'POST',
          headers: { origin: f.hubUrl },
        })
      ).status,
    ).toBe(405);
  });

  test('a consumer queue holds a bounded number of items: one more drops them and closes it instead of growing', async () => {
    let closed = 0;
    const q = new EventQueue<number>(() => closed++, { maxItems: 3 });
    for (let i = 0; i < 10; i++) q.push(i);
    expect([q.isClosed, q.overflowed, closed]).toEqual([true, true, 1]);
    const got: number[] = [];
    for await (const n of q) got.push(n);
    expect(got).toEqual([]);
  });
});

describe('pictures drawn from their data', () => {
  test('Customer Ops: one bar per sector, lengths in the order of the values; a bar filters the list', async () => {
    await page.goto(`${f.hubUrl}/#/customer-ops`);
    await page.waitForSelector('svg.bars g.bar');
    const bars = await page.$$eval('svg.bars g.bar', (gs) =>
      gs.map((g) => ({
        key: g.getAttribute('data-key')!,
        value: Number(g.getAttribute('data-value')),
        width: Number(g.querySelector('rect.value')!.getAttribute('width')),
      })),
    );
    const movement = (
      await (
        await fetch(`${f.hubUrl}/api/hub`, {
          method: 'POST',
          headers: { origin: f.hubUrl, 'content-type': 'application/json' },
          body: '{"skill":"sector.movement"}',
        })
      ).json()
    ).result;
    expect(bars.map((b) => b.key).sort()).toEqual(
      movement.sectors.map((s: any) => s.sector).sort(),
    );
    for (const b of bars)
      expect(b.value).toBe(movement.sectors.find((s: any) => s.sector === b.key).avgChangePct);
    // Longer bar ⇔ larger absolute change, for every pair.
    for (const a of bars)
      for (const b of bars)
        if (Math.abs(a.value) > Math.abs(b.value)) expect(a.width).toBeGreaterThan(b.width);
    // Listed top to bottom from the strongest rise.
    expect(bars.map((b) => b.value)).toEqual([...bars.map((b) => b.value)].sort((x, y) => y - x));

    await page.click('svg.bars g.bar[data-key="software"]');
    await page.waitForSelector('svg.bars g.bar.selected[data-key="software"][aria-pressed="true"]');
    expect(
      await page.$$eval('table.reach tbody tr', (trs) =>
        trs.map((tr) => tr.getAttribute('data-industry')),
      ),
    ).toEqual(['software']);
    await page.click('svg.bars g.bar[data-key="software"]');
    await page.waitForFunction(() => document.querySelectorAll('table.reach tbody tr').length > 1);
  });

  test('Agent Process: the waterfall shows one question (the calls of one trace) in start order with their durations; the minute columns count them', async () => {
    // customer.reach calls scanner, then crm: one question, two calls, in that order.
    const r = await fetch(`${f.hubUrl}/api/hub`, {
      method: 'POST',
      headers: { origin: f.hubUrl, 'content-type': 'application/json' },
      body: '{"skill":"customer.reach"}',
    });
    expect(r.status).toBe(200);
    const records = (await (await fetch(`${f.hubUrl}/api/trace?limit=2`)).json()).records.reverse();
    // The hub started one trace for the question; neither call made the other.
    expect(records[0].traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(records[1].traceId).toBe(records[0].traceId);
    expect(records[1].parentSpanId).toBe(records[0].parentSpanId);
    await page.goto(`${f.hubUrl}/#/trace?id=${records[1].id}`);
    await page.waitForSelector(`svg.waterfall g.call[data-trace-id="${records[1].id}"].selected`);
    await page.waitForFunction(
      () => document.querySelectorAll('svg.waterfall g.call').length === 2,
    );
    expect(await page.getAttribute('figure.question', 'data-trace')).toBe(records[0].traceId);
    expect(
      await page.$$eval('svg.waterfall g.call', (gs) =>
        gs.map((g) => g.getAttribute('data-depth')),
      ),
    ).toEqual(['0', '0']);
    const calls = await page.$$eval('svg.waterfall g.call', (gs) =>
      gs.map((g) => ({
        id: Number(g.getAttribute('data-trace-id')),
        start: Number(g.getAttribute('data-start')),
        duration: Number(g.getAttribute('data-duration')),
        x: Number(g.querySelector('rect.value')!.getAttribute('x')),
        width: Number(g.querySelector('rect.value')!.getAttribute('width')),
      })),
    );
    expect(calls.map((c) => c.id)).toEqual(records.map((x: any) => x.id));
    for (const x of records) expect(calls.find((c) => c.id === x.id)?.duration).toBe(x.durationMs);
    for (let i = 1; i < calls.length; i++)
      expect(calls[i]!.x).toBeGreaterThanOrEqual(calls[i - 1]!.x);
    for (const a of calls)
      for (const b of calls)
        if (a.duration > b.duration * 1.5 && b.width > 2) expect(a.width).toBeGreaterThan(b.width);

    const columns = await page.$$eval('svg.rate rect.column', (rs) =>
      rs.map((r) => ({
        calls: Number(r.getAttribute('data-value')),
        height: Number(r.getAttribute('height')),
      })),
    );
    expect(columns).toHaveLength(15);
    const total = (await (await fetch(`${f.hubUrl}/api/trace?limit=500`)).json()).records.length;
    expect(columns.reduce((n, c) => n + c.calls, 0)).toBe(total);
    for (const a of columns)
      for (const b of columns) if (a.calls > b.calls) expect(a.height).toBeGreaterThan(b.height);

    // Choosing a call in the waterfall highlights its record.
    await page.click(`svg.waterfall g.call[data-trace-id="${records[0].id}"]`);
    await page.waitForSelector(`table.trace tr.highlight[data-trace-id="${records[0].id}"]`);
  });

  test('A2A Negotiation: each round is a proposal arrow to the customer and an answer arrow back, with the veto codes in order', async () => {
    await page.goto(`${f.hubUrl}/#/negotiation`);
    await page.selectOption('form.negotiate select', 'c-014');
    await page.click('form.negotiate button[type="submit"]');
    await page.waitForSelector('.negotiation[data-outcome="no-deal"] svg.sequence');
    const steps = await page.$$eval('svg.sequence g.step', (gs) =>
      gs.map((g) => [
        g.getAttribute('data-round'),
        g.getAttribute('data-from'),
        g.textContent!.trim(),
      ]),
    );
    expect(steps.map(([round, from]) => `${round}${from}`)).toEqual([
      '1left',
      '1right',
      '2left',
      '2right',
      '3left',
      '3right',
    ]);
    expect(steps.filter(([, from]) => from === 'right').map(([, , t]) => t)).toEqual([
      'vetoes: UNALIGNED_ENTITY',
      'vetoes: RISK_LEVEL',
      'vetoes: NO_SIGNAL',
    ]);
    // Times are 24-hour, the chips keep their underscores, no text ends in "..".
    expect(await page.textContent('table.past tbody tr a')).toMatch(
      /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/,
    );
    expect(
      await page.$$eval('.round.veto code.veto', (cs) =>
        cs.every((c) => c.scrollHeight <= c.clientHeight + 1),
      ),
    ).toBe(true);
    expect(await page.textContent('.negotiation')).not.toContain('..');

    await page.fill('form.negotiate input[name="customer"]', 'c-999');
    await page.click('form.negotiate button[type="submit"]');
    const line = await (
      await page.waitForSelector('main .error[data-error="UNKNOWN_CUSTOMER"]')
    ).textContent();
    expect(line!.split('UNKNOWN_CUSTOMER').length - 1).toBe(1);
  });
});

describe('live without a reload', () => {
  test('a message a client sends appears in the open history, and lights its edge on the Mesh page', async () => {
    await page.goto(`${f.hubUrl}/#/history`);
    await page.fill('form.create-project input[name="name"]', 'live-demo');
    await page.click('form.create-project button[type="submit"]');
    await page.click('tr[data-project="live-demo"] button.show-history');
    await page.waitForSelector('.history [data-live="on"]');
    await page.waitForSelector('.history >> text=No messages');

    const alice = (await join({ url: f.hubUrl }, 'live-demo', 'alice')).c;
    const bob = (await join({ url: f.hubUrl }, 'live-demo', 'bob')).c;
    clients.push(alice, bob);
    await alice.send(msg('r1', crypto.randomUUID(), { type: 'project' }, 'hello from alice'));
    const row = await page.waitForSelector('.history table.messages tr[data-ref="live-demo:1"]');
    expect(await row.textContent()).toContain('hello from alice');

    await page.goto(`${f.hubUrl}/#/mesh`);
    await page.selectOption('select[name="project"]', 'live-demo');
    await page.waitForSelector('table.roster tr[data-peer="bob"]');
    await page.waitForSelector('main [data-live="on"]');
    await bob.send(msg('r2', crypto.randomUUID(), { type: 'agent', name: 'alice' }, 'hi alice'));
    // A line straight up has no width, so Playwright never calls it visible: attached is what counts.
    await page.waitForSelector('svg.topology line.link.lit[data-peer="bob"]', {
      state: 'attached',
    });
    await page.waitForSelector('svg.topology line.link.lit[data-peer="alice"]', {
      state: 'attached',
    });
    expect(await page.textContent('.last-exchange')).toContain('bob → alice');
    // A client leaving is pushed too.
    await bob.close();
    await page.waitForSelector('table.roster tr[data-peer="bob"]', { state: 'detached' });
    expect(errors.filter((e) => !refused(e))).toEqual([]);
  });

  test('a task waiting for input shows its question and is continued from the page to completion', async () => {
    await page.goto(`${f.hubUrl}/#/tasks`);
    await page.waitForSelector('main [data-live="on"]');
    await page.fill('input[name="prompt"]', 'paint the garden fence');
    await page.click('form.delegate button[type="submit"]');
    const waiting = await page.waitForSelector('.task[data-state="TASK_STATE_INPUT_REQUIRED"]');
    const id = await waiting.getAttribute('data-task-id');
    const card = `.task[data-task-id="${id}"]`;
    expect(await page.textContent(`${card} .prompt`)).toContain('paint the garden fence');
    expect(await page.textContent(`${card} .question`)).toContain('NO_RECIPE');
    await page.fill(`${card} form.continue input[name="answer"]`, 'fleet report');
    await page.click(`${card} form.continue button[type="submit"]`);
    // The executor runs the job; the hub pushes the task as it advances, up to its output.
    const output = await page.waitForSelector(
      `${card}[data-state="TASK_STATE_COMPLETED"] pre.output`,
      { timeout: 20_000 },
    );
    expect(await output.textContent()).toContain('scanner');
    expect(await page.textContent(card)).toContain('fleet-report');

    // A question the hub answered itself is labelled as such, with the question shown. It is asked
    // in the page's own session: tasks belong to whoever created them, and this page is `console`.
    const cookieName = f.hub.access.cookieName();
    const session = (await page.context().cookies()).find((c) => c.name === cookieName)!;
    const key = await page.evaluate(() => localStorage.getItem('lume-key') ?? '');
    const asked = await fetch(`${f.hubUrl}/message:send`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'A2A-Version': '1.0',
        Origin: f.hubUrl,
        Cookie: `${cookieName}=${session.value}`,
        'X-Lume-Key': key,
      },
      body: JSON.stringify({
        message: {
          messageId: crypto.randomUUID(),
          role: 'ROLE_USER',
          parts: [{ text: 'Which sectors moved today?' }],
        },
      }),
    });
    const task = (await asked.json()).task;
    const hubCard = await page.waitForSelector(`.task[data-task-id="${task.id}"][data-kind="hub"]`);
    expect(await hubCard.textContent()).toContain('question answered by the hub');
    expect(await hubCard.textContent()).toContain('Which sectors moved today?');
    expect(await hubCard.textContent()).not.toContain('not delegated');
    expect(errors.filter((e) => !refused(e))).toEqual([]);
  }, 30_000);

  test('Ask Agent: a suggestion runs when clicked, "which industry" answered by the hub\'s customer.reach', async () => {
    await page.goto(`${f.hubUrl}/#/ask`);
    await page.click('button.suggestion >> text=Which industry should we contact today?');
    const fact = await page.waitForSelector('.fact[data-node="a2a"][data-tool="customer.reach"]');
    expect(await fact.textContent()).toContain('Contact ');
    expect(await page.inputValue('form.ask input[name="question"]')).toBe(
      'Which industry should we contact today?',
    );
  });

  test('a node stopped shows offline on the open Fleet page, its strip turning red', async () => {
    await page.goto(`${f.hubUrl}/#/fleet`);
    await page.waitForSelector('table.fleet tr[data-node="lan"].online');
    await page.waitForFunction(
      () =>
        Number(
          document.querySelector('tr[data-node="scanner"] svg.spark')?.getAttribute('data-points'),
        ) >= 2,
    );
    // The sparkline has one point per reading the page holds.
    const points = await page.$eval('tr[data-node="scanner"] svg.spark', (s) =>
      Number(s.getAttribute('data-points')),
    );
    expect(
      await page.$$eval('tr[data-node="scanner"] svg.strip rect', (rs) => rs.length),
    ).toBeGreaterThanOrEqual(points);
    await f.kill('lan');
    await page.waitForSelector('table.fleet tr[data-node="lan"].offline');
    await page.waitForSelector('tr[data-node="lan"] svg.strip rect.down');
    expect(await page.textContent('h2')).toContain('3 of 4 online');
    expect(outside).toEqual([]);
    // Chromium logs each refused fetch; the one asked for is the unknown customer (400).
    expect(errors.filter((e) => !refused(e))).toEqual([]);
    expect(errors.filter(refused)).toHaveLength(1);
  });
});
