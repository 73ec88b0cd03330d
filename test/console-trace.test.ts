/**
 * The console's Agent Process waterfall in a real headless Chromium against a real fleet: it shows
 * one question as the calls of one W3C trace, each nested under the call that made it. A call
 * through the hub to a node that calls another node through the hub shows as three nested bars;
 * a second question running at the same moment stays out of it.
 */

import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import type { Browser, Page } from 'playwright-core';
import { Catalog, type Capability } from '../lib/catalog/catalog.ts';
import type { NodeDefinition } from '../lib/node/node-types.ts';
import { createPeerClient, type PeerClient } from '../lib/peer/client.ts';
import { loadPeerIdentity } from '../lib/peer/keys.ts';
import { launchBrowser, releaseBrowser, pageCollectingErrors } from './support/browser.ts';
import { localInvoke, startFleet, type RunningFleet } from './support/fleet.ts';

setDefaultTimeout(20_000); // per file (Bun scopes it so): real servers and processes are slow on a busy machine

const SHOTS = process.env.CONSOLE_SCREENSHOTS === '1';

let xClient: PeerClient;
const cap = (id: string, run: (args: Record<string, unknown>) => unknown): Capability =>
  ({
    id,
    name: id,
    description: id,
    tags: ['test'],
    keywords: [id],
    readOnly: true,
    args: { word: { type: 'string', description: 'a word' } },
    run: async (args: Record<string, unknown>) => run(args),
  }) as unknown as Capability;

const y: NodeDefinition = {
  name: 'y',
  description: 'answers',
  catalog: new Catalog([cap('y.echo', (a) => ({ echo: a.word ?? null }))]),
};
const x: NodeDefinition = {
  name: 'x',
  description: 'asks y through the hub',
  catalog: new Catalog([
    cap('x.chain', async (a) => {
      const r = await xClient.peerRelay('a2a', ['y'], 'y.echo', { word: a.word });
      return r.ok ? r.result : { failed: r.error.code };
    }),
  ]),
};

let f: RunningFleet;
let browser: Browser;
let page: Page;
const errors: string[] = [];

beforeAll(async () => {
  f = await startFleet([x, y]);
  xClient = createPeerClient({
    signer: (await loadPeerIdentity(f.dataDir, 'x')).signer,
    fleet: f.fleet,
  });
  browser = await launchBrowser();
  page = await pageCollectingErrors(browser, errors, { width: 1280, height: 900 }, f.hub);
});
afterAll(async () => {
  await releaseBrowser();
  await f?.stop();
});

interface Bar {
  id: number;
  span: string;
  parent: string;
  depth: number;
  start: number;
  duration: number;
  x: number;
  width: number;
}

async function waterfall(): Promise<{ trace: string; bars: Bar[] }> {
  return {
    trace: (await page.getAttribute('figure.question', 'data-trace')) ?? '',
    bars: await page.$$eval('svg.waterfall g.call', (gs) =>
      gs.map((g) => ({
        id: Number(g.getAttribute('data-trace-id')),
        span: g.getAttribute('data-span')!,
        parent: g.getAttribute('data-parent')!,
        depth: Number(g.getAttribute('data-depth')),
        start: Number(g.getAttribute('data-start')),
        duration: Number(g.getAttribute('data-duration')),
        x: Number(g.querySelector('rect.value')!.getAttribute('x')),
        width: Number(g.querySelector('rect.value')!.getAttribute('width')),
      })),
    ),
  };
}

test('Agent Process: one question is one trace, its calls nested by who called whom; a question at the same moment stays apart', async () => {
  // Two questions at once: x asks y through the hub (three calls), and y is asked directly (one).
  const [chain, direct] = await Promise.all([
    localInvoke(f.hubUrl, { target: 'x', capability: 'x.chain', args: { word: 'nested' } }),
    localInvoke(f.hubUrl, { target: 'y', capability: 'y.echo', args: { word: 'alone' } }),
  ]);
  expect([chain.json.result, direct.json.result]).toEqual([{ echo: 'nested' }, { echo: 'alone' }]);
  const records = (await (await fetch(`${f.hubUrl}/api/trace?limit=10`)).json()).records as any[];
  const hubToX = records.find((r) => r.to === 'x')!;
  const xToHub = records.find((r) => r.from === 'x')!;
  const hubToY = records.find((r) => r.to === 'y' && r.parentSpanId === xToHub.spanId)!;
  const alone = records.find((r) => r.to === 'y' && r.parentSpanId !== xToHub.spanId)!;
  expect(new Set([hubToX.traceId, xToHub.traceId, hubToY.traceId]).size).toBe(1);
  expect(alone.traceId).not.toBe(hubToX.traceId);

  // Linked from its last call, the chain's question: its three calls only, in call order, each one level under its caller.
  await page.goto(`${f.hubUrl}/#/trace?id=${hubToY.id}`);
  await page.waitForSelector(`svg.waterfall g.call[data-trace-id="${hubToY.id}"].selected`);
  await page.waitForFunction(() => document.querySelectorAll('svg.waterfall g.call').length === 3);
  const chainView = await waterfall();
  expect(chainView.trace).toBe(hubToX.traceId);
  expect(chainView.bars.map((b) => [b.id, b.depth])).toEqual([
    [hubToX.id, 0],
    [xToHub.id, 1],
    [hubToY.id, 2],
  ]);
  expect(chainView.bars.map((b) => b.span)).toEqual([hubToX.spanId, xToHub.spanId, hubToY.spanId]);
  for (let i = 1; i < 3; i++) {
    const [parent, child] = [chainView.bars[i - 1]!, chainView.bars[i]!];
    expect(child.parent).toBe(parent.span);
    // A call made inside another is drawn inside it (start times are whole milliseconds, so its end may pass by less than one).
    expect(child.start).toBeGreaterThanOrEqual(parent.start);
    expect(child.start + child.duration).toBeLessThan(parent.start + parent.duration + 1);
    expect(child.x).toBeGreaterThanOrEqual(parent.x);
  }
  expect(
    await page.$eval(
      `svg.waterfall g.call[data-trace-id="${xToHub.id}"] text.label`,
      (t) => t.textContent,
    ),
  ).toContain('↳');
  if (SHOTS) await page.screenshot({ path: '/tmp/console-trace-nested.png', fullPage: true });

  // The direct question, at the same moment, is a waterfall of its one call.
  await page.goto(`${f.hubUrl}/#/trace?id=${alone.id}`);
  await page.waitForFunction((id) => {
    const calls = Array.from(document.querySelectorAll('svg.waterfall g.call'));
    return calls.length === 1 && calls[0]!.getAttribute('data-trace-id') === String(id);
  }, alone.id);
  expect((await waterfall()).trace).toBe(alone.traceId);

  // Choosing a call of the shown question keeps the question and highlights the call's record.
  await page.goto(`${f.hubUrl}/#/trace?id=${hubToX.id}`);
  await page.waitForFunction(() => document.querySelectorAll('svg.waterfall g.call').length === 3);
  await page.click(`svg.waterfall g.call[data-trace-id="${xToHub.id}"]`);
  await page.waitForSelector(`table.trace tr.highlight[data-trace-id="${xToHub.id}"]`);
  expect((await waterfall()).bars.map((b) => b.id)).toEqual([hubToX.id, xToHub.id, hubToY.id]);
  expect(errors).toEqual([]);
});
