/**
 * What the console offers of task.delegate and of a negotiation with models, in a real headless
 * Chromium against real fleets on port 0: the Tasks page's executor choice lists exactly the
 * fleet's executors (nodes whose card lists exec.submit), a job delegated to one runs there, with
 * its model, and a settled delegation is continued from the page; the Negotiation page disables
 * "with models" and says why when the hub has no model, and runs one with models when it has.
 */

import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { loadNode } from '../lib/node/load-node.ts';
import {
  launchBrowser,
  releaseBrowser,
  pageCollectingErrors,
  type SignsIn,
} from './support/browser.ts';
import { builderNode } from './support/builder-node.ts';
import { realNodeDefs, startFleet, type RunningFleet } from './support/fleet.ts';
import { startModelServer, type ChatBody, type ModelServer } from './support/model-server.ts';
import { FIXTURES, tempDir } from './support/node.ts';

setDefaultTimeout(20_000); // per file (Bun scopes it so): real servers and processes are slow on a busy machine

const SHOTS = process.env.CONSOLE_SCREENSHOTS === '1';
let browser: Browser;
const errors: string[] = [];

async function newPage(hub: SignsIn, width = 1280): Promise<Page> {
  return pageCollectingErrors(browser, errors, { width, height: 900 }, hub);
}

beforeAll(async () => {
  browser = await launchBrowser();
});
afterAll(async () => {
  await releaseBrowser();
});

describe('Tasks: executor, model and continuing a delegation', () => {
  let f: RunningFleet;
  let page: Page;
  beforeAll(async () => {
    // scanner offers no exec.*; resolve and builder do.
    f = await startFleet([...(await realNodeDefs(['scanner', 'resolve'])), builderNode()]);
    page = await newPage(f.hub);
  });
  afterAll(async () => {
    await f?.stop();
  });

  test('the executor choice lists exactly the nodes whose card lists exec.submit, resolve first', async () => {
    await page.goto(`${f.hubUrl}/#/tasks`);
    await page.waitForSelector('select[name="executor"]:not([disabled])');
    const offered = await page.$$eval('select[name="executor"] option', (os) =>
      os.map((o) => (o as HTMLOptionElement).value),
    );
    const fleet = await (await fetch(`${f.hubUrl}/api/fleet`)).json();
    const executors = fleet.nodes
      .filter((n: any) => n.skills.some((s: any) => s.id === 'exec.submit'))
      .map((n: any) => n.name);
    expect(offered.sort()).toEqual(executors.sort());
    expect(offered.sort()).toEqual(['builder', 'resolve']);
    expect(await page.$eval('select[name="executor"]', (s) => (s as HTMLSelectElement).value)).toBe(
      'resolve',
    );
    expect(errors).toEqual([]);
  });

  test('a job delegated to builder with a model runs on builder, and the card shows executor and model', async () => {
    await page.selectOption('select[name="executor"]', 'builder');
    await page.fill('form.delegate input[name="prompt"]', 'the release');
    await page.fill('form.delegate input[name="model"]', 'tiny-1');
    await page.click('form.delegate button[type="submit"]');
    const card = await page.waitForSelector(
      '.task[data-state="TASK_STATE_COMPLETED"][data-kind="delegated"]',
      { timeout: 15_000 },
    );
    expect(await card.$eval('pre.output', (p) => p.textContent)).toBe('built: the release');
    expect(await card.$eval('[data-field="executor"] dd', (d) => d.textContent)).toBe('builder');
    expect(await card.$eval('[data-field="model"] dd', (d) => d.textContent)).toBe('tiny-1');
    // The hub sent the job to builder: its trace has the exec.submit call, and resolve's has none.
    const sent = (await (await fetch(`${f.hubUrl}/api/trace?capability=exec.submit`)).json())
      .records;
    expect(sent.map((r: any) => r.to)).toEqual(['builder']);
    if (SHOTS) await page.screenshot({ path: '/tmp/console-tasks-delegate.png', fullPage: true });
    expect(errors).toEqual([]);
  }, 20_000);

  test('"Follow up" continues the settled delegation on its executor, and the new task says what it continues', async () => {
    const first = await page.$eval(
      '.task[data-state="TASK_STATE_COMPLETED"]',
      (c) => c.getAttribute('data-task-id')!,
    );
    // A continuation goes where the earlier job ran, even with the choice moved away from it.
    await page.selectOption('select[name="executor"]', 'resolve');
    await page.fill('form.delegate input[name="model"]', '');
    await page.click(`.task[data-task-id="${first}"] button.follow-up`);
    expect(await page.$eval('select[name="taskId"]', (s) => (s as HTMLSelectElement).value)).toBe(
      first,
    );
    expect(await page.$eval('select[name="executor"]', (s) => (s as HTMLSelectElement).value)).toBe(
      'builder',
    );
    expect(await page.evaluate(() => document.activeElement?.getAttribute('name'))).toBe('prompt');
    await page.keyboard.type('and the notes');
    await page.keyboard.press('Enter');
    const next = await page.waitForSelector(
      `.task[data-state="TASK_STATE_COMPLETED"]:has([data-field="continues"])`,
      { timeout: 15_000 },
    );
    expect(await next.$eval('pre.output', (p) => p.textContent)).toBe(
      'built: and the notes after 1 turn(s)',
    );
    expect(await next.$eval('[data-field="continues"] dd', (d) => d.textContent)).toBe(
      `${first.slice(0, 8)} (1 earlier turn)`,
    );
    expect(await next.$eval('[data-field="model"] dd', (d) => d.textContent)).toBe('–');
    // The form is back to a new job.
    expect(await page.$eval('select[name="taskId"]', (s) => (s as HTMLSelectElement).value)).toBe(
      '',
    );
    expect(errors).toEqual([]);
  }, 20_000);

  test('Negotiation: without a hub model, "with models" is disabled and the page says why', async () => {
    await page.goto(`${f.hubUrl}/#/negotiation`);
    const box = await page.waitForSelector('form.negotiate input[name="model"]');
    // aria-disabled, so the box stays in the Tab order with its reason; Space or a click changes nothing.
    expect(await box.getAttribute('aria-disabled')).toBe('true');
    await box.focus();
    await page.keyboard.press('Space');
    await box.click({ force: true });
    expect(await box.isChecked()).toBe(false);
    const why = await page.waitForSelector('#models-why');
    expect(await why.textContent()).toContain('No model is configured for the hub');
    expect(await box.getAttribute('aria-describedby')).toBe('models-why');
    expect(await (await fetch(`${f.hubUrl}/api/model`)).json()).toEqual({
      configured: false,
      answering: false,
    });
    if (SHOTS)
      await page.screenshot({ path: '/tmp/console-negotiation-no-model.png', fullPage: true });
    expect(errors).toEqual([]);
  });
});

describe('Negotiation with models', () => {
  let f: RunningFleet;
  let model: ModelServer;
  const dataDir = tempDir('lume-a2a-node-');
  /** The advisor takes the first candidate; the customer accepts whatever it is offered. */
  const script = (b: ChatBody) => {
    const tool = b.tools?.[0]?.function.name;
    const input = JSON.parse(b.messages.find((m) => m.role === 'user')!.content!);
    if (tool === 'propose')
      return {
        calls: [
          {
            name: 'propose',
            args: { code: input.candidates[0].code, why: 'it leads the candidates' },
          },
        ],
      };
    if (tool === 'decide')
      return {
        calls: [{ name: 'decide', args: { decision: 'accept', reason: 'it fits the profile' } }],
      };
    return { text: 'ok' };
  };
  beforeAll(async () => {
    model = startModelServer(script);
    const endpoint = { baseUrl: model.baseUrl, model: 'negotiator', apiKey: 'sk-console-secret' };
    const setup = {
      fixturesDir: FIXTURES,
      fleetFile: join(FIXTURES, 'fleet.json'),
      dataDir,
      model: endpoint,
    };
    f = await startFleet(
      [await loadNode('node/scanner/index.ts', setup), await loadNode('node/crm/index.ts', setup)],
      { hub: { model: { ...endpoint, pingMs: 60_000 } } },
    );
  });
  afterAll(async () => {
    await f?.stop();
    model.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  test('with a hub model the box is enabled, and a run started with it is taken by the models', async () => {
    const page = await newPage(f.hub, 390);
    await page.goto(`${f.hubUrl}/#/negotiation`);
    await page.waitForSelector('form.negotiate input[name="model"]:not([aria-disabled])');
    expect(await page.$('#models-why')).toBeNull();
    await page.check('form.negotiate input[name="model"]');
    await page.fill('form.negotiate input[name="customer"]', 'c-012');
    await page.click('form.negotiate button[type="submit"]');
    const deal = await page.waitForSelector('.negotiation[data-outcome="deal"]', {
      timeout: 20_000,
    });
    expect(await deal.textContent()).toContain('with models');
    const id = await deal.getAttribute('data-id');
    // Read as the page's own session: a negotiation is its starter's.
    const record = await page.evaluate(async (id) => {
      const key = '/session-key.js'; // the console's module: its pages send the key it gives
      const { withKey } = await import(key);
      return (await fetch(`/api/negotiations/${id}`, { headers: withKey({}) })).json();
    }, id);
    expect(record.agents).toBe('model');
    // Each turn is the model's, or the customer's rules overruling an acceptance they veto.
    const turns = record.transcript.filter((t: any) => t.round > 0);
    expect(turns.some((t: any) => t.answer.decidedBy === 'model')).toBe(true);
    expect(
      turns.every(
        (t: any) =>
          t.answer.decidedBy === 'model' ||
          (t.answer.decidedBy === 'rules' && /the model accepted/.test(t.answer.modelNote ?? '')),
      ),
    ).toBe(true);
    const [scroll, client] = await page.evaluate(() => [
      document.documentElement.scrollWidth,
      document.documentElement.clientWidth,
    ]);
    expect(scroll).toBeLessThanOrEqual(client);
    if (SHOTS)
      await page.screenshot({ path: '/tmp/console-negotiation-models.png', fullPage: true });
    await page.close();
    expect(errors).toEqual([]);
  }, 30_000);
});
