/**
 * The console's sign-in in a real headless Chromium. A token typed into the form, or a one-time
 * console URL the hub prints, becomes a session: an HttpOnly cookie named after this hub and its
 * port, and a page key only this origin's storage holds. Then the attacks of the trust review,
 * with a second local server on another port as the thief: cookies are not scoped by port, so the
 * thief is sent the hub's cookie and can plant its own; neither gets it anything. A link from the
 * thief's page opens the sign-in page, not a 403.
 */

import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import type { Browser, Page } from 'playwright-core';
import { newSecret } from '../lib/auth/secret.ts';
import { launchBrowser, releaseBrowser, pageCollectingErrors, signIn } from './support/browser.ts';
import { realNodeDefs, startFleet, type RunningFleet } from './support/fleet.ts';

setDefaultTimeout(20_000); // per file (Bun scopes it so): real servers and processes are slow on a busy machine

const CAROL = newSecret();
const BOB = newSecret();
let browser: Browser;

beforeAll(async () => {
  browser = await launchBrowser();
});
afterAll(async () => {
  await releaseBrowser();
});

/** What a console page sends for itself: its session cookie (the browser adds it) and its page key. */
const asConsole = (page: Page, path: string, init: { method?: string; body?: unknown } = {}) =>
  page.evaluate(
    async ({ path, method, body }) => {
      const res = await fetch(path, {
        method: method ?? 'GET',
        headers: {
          'content-type': 'application/json',
          'a2a-version': '1.0',
          'x-lume-key': localStorage.getItem('lume-key') ?? '',
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      return { status: res.status, json: await res.json().catch(() => null) };
    },
    { path, method: init.method, body: init.body },
  );

const message = (text: string) => ({
  message: { messageId: crypto.randomUUID(), role: 'ROLE_USER', parts: [{ text }] },
});

describe('a hub that requires sign-in', () => {
  let f: RunningFleet;
  beforeAll(async () => {
    f = await startFleet(await realNodeDefs(['scanner']), {
      tokens: { carol: CAROL },
      hub: { requireLogin: true },
    });
  });
  afterAll(() => f?.stop());

  test('sign in with a token, see who is signed in, sign out; the cookie never reaches JavaScript', async () => {
    // Script errors only: the refusals this test provokes are logged by the browser as failed loads.
    const errors: string[] = [];
    const page = await browser.newPage();
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(`${f.hubUrl}/#/fleet`);
    expect(new URL(page.url()).pathname).toBe('/login');

    await page.fill('#token', 'lume_not-a-token');
    await Promise.all([page.waitForLoadState('load'), page.click('form:not(.ticket) button')]);
    expect(await page.textContent('.error')).toContain('not valid');

    await page.fill('#token', CAROL);
    await Promise.all([page.waitForURL(`${f.hubUrl}/`), page.click('form:not(.ticket) button')]);
    await page.goto(`${f.hubUrl}/#/fleet`);
    await page.waitForSelector('table.fleet tr[data-node="scanner"]');
    expect(await page.textContent('header .who')).toBe('Signed in as carol');
    // The cookie is named after this hub and its port, there for the browser and hidden from scripts.
    const cookies = await page.context().cookies();
    expect(cookies.map((c) => [c.name, c.httpOnly, c.sameSite])).toEqual([
      [`lume_a2a_${new URL(f.hubUrl).port}`, true, 'Strict'],
    ]);
    expect(await page.evaluate(() => document.cookie)).toBe('');
    // The page holds its key, which alone is worth nothing (no cookie goes with it from a script elsewhere).
    expect(await page.evaluate(() => Object.keys({ ...localStorage }))).toEqual(['lume-key']);

    await Promise.all([page.waitForURL(`${f.hubUrl}/login`), page.click('header .signout button')]);
    expect((await asConsole(page, '/api/trace')).status).toBe(401);
    expect(await page.evaluate(() => Object.keys({ ...localStorage }))).toEqual([]);
    expect(errors).toEqual([]);
    await page.close();
  });
});

describe('a loopback hub: the console URL the hub prints', () => {
  let f: RunningFleet;
  let thief: ReturnType<typeof Bun.serve>;
  /** Every Cookie header the thief was sent, and the cookie it plants when asked. */
  const stolen: string[] = [];
  let plant = '';
  beforeAll(async () => {
    f = await startFleet(await realNodeDefs(['scanner']), { tokens: { bob: BOB } });
    // Another web app on this host, another port: the page a user opens while the console is open.
    thief = Bun.serve({
      hostname: '127.0.0.1',
      port: 0,
      fetch(req) {
        stolen.push(req.headers.get('cookie') ?? '');
        const headers: Record<string, string> = { 'content-type': 'text/html' };
        if (plant) headers['set-cookie'] = `${plant}; Path=/; HttpOnly; SameSite=Strict`;
        const ticketLink = new URL(f.hub.consoleUrl());
        return new Response(
          `<!doctype html><a id="console" href="${f.hubUrl}/#/tasks">console</a>
           <a id="ticket" href="${ticketLink.href}">sign in</a>`,
          { headers },
        );
      },
    });
  });
  afterAll(async () => {
    thief?.stop(true);
    await f?.stop();
  });

  test('nobody gets a principal by asking: no cookie from /login or /, and local-invoke needs one', async () => {
    const login = await fetch(`${f.hubUrl}/login`, { redirect: 'manual' });
    expect([login.status, login.headers.get('set-cookie')]).toEqual([200, null]);
    const index = await fetch(`${f.hubUrl}/`, { redirect: 'manual' });
    expect([index.status, index.headers.get('location'), index.headers.get('set-cookie')]).toEqual([
      303,
      '/login',
      null,
    ]);
    const invoke = await fetch(`${f.hubUrl}/api/local-invoke`, {
      method: 'POST',
      headers: { origin: f.hubUrl, 'content-type': 'application/json' },
      body: JSON.stringify({ target: 'scanner', capability: 'sector.movement', args: {} }),
    });
    expect(invoke.status).toBe(401);
  });

  test('the console URL signs in as console, once', async () => {
    const url = f.hub.consoleUrl();
    const errors: string[] = [];
    const page = await pageCollectingErrors(browser, errors);
    await page.goto(url);
    await page.waitForURL(`${f.hubUrl}/`);
    await page.waitForSelector('header .who');
    expect(await page.textContent('header .who')).toBe('Signed in as console');
    // The same URL again (another browser, or a replay of the address bar) signs nobody in.
    const again = await fetch(url, { redirect: 'manual' });
    expect([again.status, again.headers.get('set-cookie')]).toEqual([401, null]);
    expect(await again.text()).toContain('used already');
    expect(errors).toEqual([]);
    await page.close();
  });

  test('a thief on another port is sent the cookie, and the cookie alone does nothing', async () => {
    const page = await browser.newPage();
    await signIn(page, f.hub);
    const made = await asConsole(page, '/message:send', {
      method: 'POST',
      body: message('sectors'),
    });
    expect(made.status).toBe(200);
    const taskId = made.json.task.id as string;

    stolen.length = 0;
    await page.goto(`http://127.0.0.1:${thief.port}/`);
    const cookieName = f.hub.access.cookieName();
    // Cookies are not scoped by port: the thief has it.
    expect(stolen.join(';')).toContain(`${cookieName}=`);
    // The thief's page cannot read the hub's storage (another origin), so it has no key.
    expect(await page.evaluate(() => localStorage.getItem('lume-key'))).toBeNull();
    const cookie = stolen[0]!;
    const replay = (path: string, init: RequestInit = {}) =>
      fetch(`${f.hubUrl}${path}`, {
        ...init,
        redirect: 'manual',
        headers: {
          cookie,
          origin: f.hubUrl,
          'content-type': 'application/json',
          'a2a-version': '1.0',
          ...(init.headers as Record<string, string>),
        },
      });
    const answers = {
      session: (await replay('/api/session')).status,
      invoke: (
        await replay('/api/local-invoke', {
          method: 'POST',
          body: JSON.stringify({ target: 'scanner', capability: 'sector.movement', args: {} }),
        })
      ).status,
      task: (await (await replay(`/tasks/${taskId}`)).json()).error?.status,
      // A guessed key is no better than none.
      guessed: (await replay('/api/session', { headers: { 'x-lume-key': newSecret('k_') } }))
        .status,
    };
    expect(answers).toEqual({ session: 401, invoke: 401, task: 'NOT_FOUND', guessed: 401 });
    await page.close();
  });

  test('a cookie the thief plants (bob’s session) does not make the victim act as bob', async () => {
    // Bob signs in with his token (the form's JSON twin) and has a cookie and key of his own.
    const res = await fetch(`${f.hubUrl}/login`, {
      method: 'POST',
      headers: { origin: f.hubUrl, 'content-type': 'application/json' },
      body: JSON.stringify({ token: BOB }),
    });
    const bobKey = (await res.json()).key as string;
    plant = res.headers.get('set-cookie')!.split(';')[0]!;
    const bobSession = await fetch(`${f.hubUrl}/api/session`, {
      headers: { cookie: plant, 'x-lume-key': bobKey },
    }).then((r) => r.json());
    expect(bobSession.principal).toEqual({ kind: 'session', name: 'bob' });
    const victim = await browser.newPage();
    await signIn(victim, f.hub);
    // The victim opens the thief's page, which overwrites the hub's cookie with bob's.
    await victim.goto(`http://127.0.0.1:${thief.port}/`);
    const planted = plant;
    plant = '';
    const cookieName = f.hub.access.cookieName();
    const jar = (await victim.context().cookies(f.hubUrl)).filter((c) => c.name === cookieName);
    expect(jar.map((c) => `${c.name}=${c.value}`)).toEqual([planted]);
    await victim.goto(`${f.hubUrl}/login`);
    // What the victim's console then sends speaks for nobody: bob's cookie does not go with this page's key.
    const made = await asConsole(victim, '/message:send', {
      method: 'POST',
      body: message('sectors, for bob to read'),
    });
    expect(made.status).toBe(200);
    const madeId = made.json.task.id as string;
    const bobsTasks = await fetch(`${f.hubUrl}/tasks`, {
      headers: { authorization: `Bearer ${BOB}`, 'a2a-version': '1.0' },
    }).then((r) => r.json());
    expect(bobsTasks.tasks.map((t: { id: string }) => t.id)).not.toContain(madeId);
    await victim.close();
  });

  test('a link from another site opens the sign-in page (not a 403), and a console URL there waits for a click', async () => {
    const page = await browser.newPage();
    const statuses: number[] = [];
    page.on('response', (r) => r.url().startsWith(f.hubUrl) && statuses.push(r.status()));
    // localhost is another site than 127.0.0.1 (another host), so the browser says cross-site.
    await page.goto(`http://localhost:${thief.port}/`);
    await Promise.all([page.waitForURL((u) => u.origin === f.hubUrl), page.click('#console')]);
    await page.waitForSelector('#token');
    expect(statuses.filter((s) => s >= 400)).toEqual([]);

    for (const site of ['localhost', '127.0.0.1']) {
      await page.goto(`http://${site}:${thief.port}/`);
      await Promise.all([page.waitForURL((u) => u.pathname === '/login'), page.click('#ticket')]);
      // Not signed in by the link itself (another site, or another port of this host): the page asks first.
      await page.waitForSelector('form.ticket button');
      expect(await page.context().cookies(f.hubUrl)).toEqual([]);
    }
    await Promise.all([page.waitForURL(`${f.hubUrl}/`), page.click('form.ticket button')]);
    await page.waitForSelector('header .who');
    expect(await page.textContent('header .who')).toBe('Signed in as console');
    expect(statuses.filter((s) => s >= 400)).toEqual([]);
    await page.close();
  });
});
