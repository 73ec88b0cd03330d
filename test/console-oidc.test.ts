/**
 * The console signs a person in through a trusted issuer, in a real headless Chromium against a
 * real OpenID provider (oidc-provider on a free loopback port, its own login and consent pages):
 * the sign-in page's "Sign in with …" button, the authorization code flow with PKCE, `state` and
 * `nonce`, the hub a confidential client, and a session for `user:<issuer>#<sub>` whose Tasks page
 * shows the tasks that person made with their own access token (and not another's). Then each
 * hostile callback, refused with its code on the sign-in page: a replayed or forged `state`, a
 * callback opened in another browser, a code used again, a tampered `nonce`, the issuer's error
 * answer, another site's script; a public client (PKCE alone) signing in the same way; and the
 * pending sign-ins' bounds. Neither the client secret, the
 * code nor a token reaches the log or a page.
 */

import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import type { Browser, Page } from 'playwright-core';
import { createOidcVerifier } from '../lib/auth/oidc/verifier.ts';
import { PendingSignIns } from '../hub/http/oidc-pending.ts';
import { launchBrowser, releaseBrowser } from './support/browser.ts';
import { realNodeDefs, startFleet, type RunningFleet } from './support/fleet.ts';
import { startProvider, type TestClient, type TestProvider } from './support/oidc-provider.ts';

setDefaultTimeout(60_000); // per file (Bun scopes it so): a provider, two hubs and a browser on a busy machine

const AUD = 'urn:lume:hub';
const SECRET = 'console-secret-0123456789abcdef0123456789';
const CONSOLE: TestClient = {
  id: 'lume-console',
  secret: SECRET,
  scope: 'a2a.read a2a.write',
  redirectUris: [],
};
const cc = (id: string): TestClient => ({
  id,
  secret: `${id}-secret-0123456789abcdef0123456789`,
  scope: 'a2a.read a2a.write',
});
/** The same console as a public client: no secret, PKCE alone. */
const PUBLIC: TestClient = {
  id: 'lume-console-public',
  secret: '',
  scope: 'a2a.read a2a.write',
  redirectUris: [],
  public: true,
};
// A client-credentials token's subject is its client id: `alice` signs in as the person `alice`.
const ALICE = cc('alice');
const BOB = cc('bob');

let op: TestProvider;
let f: RunningFleet;
let publicHub: RunningFleet;
let browser: Browser;
const tasks: Record<string, string> = {};
const proof: string[] = [];

beforeAll(async () => {
  op = await startProvider({ clients: [CONSOLE, PUBLIC, ALICE, BOB], resources: [AUD] });
  f = await startFleet(await realNodeDefs(['scanner']), {
    hub: {
      requireLogin: true,
      oidc: createOidcVerifier([{ issuer: op.issuer, audience: AUD }]),
      consoleClient: { clientId: CONSOLE.id, clientSecret: SECRET },
    },
  });
  publicHub = await startFleet([], {
    hub: {
      requireLogin: true,
      oidc: createOidcVerifier([{ issuer: op.issuer, audience: AUD }]),
      consoleClient: { clientId: PUBLIC.id },
    },
  });
  CONSOLE.redirectUris!.push(`${f.hubUrl}/login/oidc/callback`);
  PUBLIC.redirectUris!.push(`${publicHub.hubUrl}/login/oidc/callback`);
  op.reconfigure();
  // Each person makes a task with their own access token (the official shape of a 1.0 send).
  for (const who of [ALICE, BOB]) {
    const res = await fetch(`${f.hubUrl}/message:send`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${await op.token(who, AUD)}`,
        'content-type': 'application/json',
        'a2a-version': '1.0',
      },
      body: JSON.stringify({
        message: {
          messageId: crypto.randomUUID(),
          role: 'ROLE_USER',
          parts: [{ text: `hello from ${who.id}` }],
        },
      }),
    });
    tasks[who.id] = ((await res.json()) as { task: { id: string } }).task.id;
  }
  browser = await launchBrowser();
});
afterAll(async () => {
  for (const line of proof) console.log(line);
  await releaseBrowser();
  await f?.stop();
  await publicHub?.stop();
  await op?.stop();
});

const buttonText = () => `Sign in with ${new URL(op.issuer).host}`;

/** From the hub's sign-in page through the provider's login and consent (when it asks). */
async function throughIssuer(page: Page, login: string): Promise<void> {
  await page.goto(`${f.hubUrl}/login`);
  await page.click(`text=${buttonText()}`);
  await page.waitForSelector('input[name="login"]');
  await page.fill('input[name="login"]', login);
  await page.fill('input[name="password"]', 'any');
  await page.click('button[type="submit"]');
  // The consent page, when the provider asks for one.
  const consent = await page
    .waitForSelector('input[name="prompt"][value="consent"]', { state: 'attached', timeout: 3000 })
    .catch(() => null);
  if (consent) await page.click('button[type="submit"]');
}

/** A cookie jar for a client that is not a browser (one host: every cookie goes everywhere, as ports do). */
class Jar {
  private readonly m = new Map<string, string>();
  take(res: Response): void {
    for (const c of res.headers.getSetCookie()) {
      const pair = c.split(';')[0]!;
      const at = pair.indexOf('=');
      const [name, value] = [pair.slice(0, at).trim(), pair.slice(at + 1)];
      if (value === '' || /max-age=0/i.test(c)) this.m.delete(name);
      else this.m.set(name, value);
    }
  }
  get header(): string {
    return [...this.m].map(([k, v]) => `${k}=${v}`).join('; ');
  }
}

const step = async (jar: Jar, url: string, init: RequestInit = {}) => {
  const res = await fetch(url, {
    ...init,
    redirect: 'manual',
    headers: { ...(init.headers as Record<string, string>), cookie: jar.header },
  });
  jar.take(res);
  return res;
};

/**
 * A sign-in driven over plain HTTP, as a script would: the hub's button, the provider's login and
 * consent forms, stopped before the callback. Answers the URL the issuer sent back (unused).
 */
async function callbackUrl(
  jar: Jar,
  login: string,
  tamper?: (u: URL) => void,
  hub = f.hubUrl,
): Promise<string> {
  const form = { 'content-type': 'application/x-www-form-urlencoded', origin: hub };
  const started = await step(jar, `${hub}/login/oidc`, {
    method: 'POST',
    headers: form,
    body: 'next=%2F',
  });
  const first = new URL(started.headers.get('location')!);
  tamper?.(first);
  let url = first.href;
  for (let hop = 0; hop < 12; hop++) {
    if (url.startsWith(`${hub}/login/oidc/callback`)) return url;
    const res = await step(jar, url);
    const to = res.headers.get('location');
    if (to) {
      url = new URL(to, url).href;
      continue;
    }
    const html = await res.text();
    const action = new URL(/action="([^"]+)"/.exec(html)![1]!, url).href;
    const body = html.includes('value="login"')
      ? `prompt=login&login=${login}&password=any`
      : 'prompt=consent';
    const posted = await step(jar, action, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body,
    });
    url = new URL(posted.headers.get('location')!, action).href;
  }
  throw new Error('the sign-in did not come back');
}

const refusal = async (page: Page) => (await page.textContent('.error')) ?? '';

describe('the console signs a person in through the issuer', () => {
  test('Sign in with the issuer: the Tasks page shows that person’s tasks', async () => {
    const ctx = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const page = await ctx.newPage();
    await page.goto(`${f.hubUrl}/#/tasks`);
    expect(new URL(page.url()).pathname).toBe('/login');
    expect(await page.textContent('form.issuer button')).toBe(buttonText());
    await page.screenshot({ path: '/tmp/console-oidc-1280.png', fullPage: true });
    await page.setViewportSize({ width: 390, height: 844 });
    await page.screenshot({ path: '/tmp/console-oidc-390.png', fullPage: true });
    await page.setViewportSize({ width: 1280, height: 800 });
    const calls: string[] = [];
    page.on('request', (r) => calls.push(r.url()));
    await throughIssuer(page, 'alice');
    // Waits past playwright's 30 s default: the machine these run on is sometimes very busy.
    await page.waitForURL(`${f.hubUrl}/`, { timeout: 45_000 });
    await page.goto(`${f.hubUrl}/#/tasks`);
    await page.waitForSelector(`.task[data-task-id="${tasks.alice}"]`, { timeout: 45_000 });
    expect(await page.$(`.task[data-task-id="${tasks.bob}"]`)).toBeNull();
    const who = `${op.issuer}#alice`;
    expect(await page.textContent('header .who')).toBe(`Signed in as ${who}`);
    // The authorization request: PKCE S256, state, nonce, the hub's resource.
    const auth = new URL(calls.find((u) => u.startsWith(`${op.issuer}/auth?`))!);
    expect(auth.searchParams.get('code_challenge_method')).toBe('S256');
    expect(auth.searchParams.get('state')?.length).toBe(43);
    expect(auth.searchParams.get('nonce')?.length).toBe(43);
    expect(auth.searchParams.get('resource')).toBe(AUD);
    expect(auth.searchParams.has('client_secret')).toBe(false);
    // The session is that issuer's user, with its token's scopes.
    const session = await page.evaluate(async () => {
      const res = await fetch('/api/session', {
        headers: { 'x-lume-key': localStorage.getItem('lume-key') ?? '' },
      });
      return res.json();
    });
    expect(session).toEqual({ principal: { kind: 'user', name: who } });
    proof.push(
      `console sign-in through ${op.issuer}: session ${JSON.stringify(session.principal)}; Tasks page shows task ${tasks.alice} (alice's), not ${tasks.bob} (bob's)`,
    );
    // Replayed: the very callback URL again, in the same browser.
    const back = calls.find((u) => u.includes('/login/oidc/callback'))!;
    const replay = await page.goto(back);
    expect(replay!.status()).toBe(400);
    expect(await refusal(page)).toContain('OIDC_SIGN_IN_STATE');
    // Nothing secret in the log or on the page.
    const code = new URL(back).searchParams.get('code')!;
    const logged = f.log.lines.join('\n');
    for (const secret of [SECRET, code]) {
      expect(logged).not.toContain(secret);
      expect(await page.content()).not.toContain(secret);
    }
    expect(logged).toContain('OIDC_SIGN_IN_STATE');
    proof.push(`replayed callback: ${replay!.status()} ${await refusal(page)}`);
    await ctx.close();
  });

  test('a forged state, and another site’s script, are refused with their codes', async () => {
    const forged = await fetch(`${f.hubUrl}/login/oidc/callback?state=forged&code=x`);
    expect(forged.status).toBe(400);
    expect(await forged.text()).toContain('OIDC_SIGN_IN_STATE');
    const script = await fetch(`${f.hubUrl}/login/oidc/callback?state=forged&code=x`, {
      headers: { 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'cors' },
    });
    expect(script.status).toBe(403);
    expect(((await script.json()) as any).error.code).toBe('FORBIDDEN_CROSS_SITE');
    proof.push(`forged state: ${forged.status}; another site's script: ${script.status}`);
  });

  test('a callback opened in another browser is refused, and leaves the sign-in to its own browser', async () => {
    const mine = new Jar();
    const url = await callbackUrl(mine, 'alice');
    const theirs = await browser.newContext();
    const other = await theirs.newPage();
    const res = await other.goto(url);
    expect(res!.status()).toBe(403);
    expect(await refusal(other)).toContain('OIDC_SIGN_IN_BROWSER');
    proof.push(`callback in another browser: ${res!.status()} ${await refusal(other)}`);
    await theirs.close();
    // Its own browser still completes it.
    const done = await step(mine, url);
    expect(done.status).toBe(200);
    expect(await done.text()).toContain('name="lume-key"');
    // A code used again (under a new, valid state of the same browser) is the issuer's refusal.
    const reused = new URL(await callbackUrl(mine, 'alice'));
    reused.searchParams.set('code', new URL(url).searchParams.get('code')!);
    const again = await step(mine, reused.href);
    expect(again.status).toBe(401);
    const text = await again.text();
    expect(text).toContain('OIDC_SIGN_IN_CODE');
    proof.push(`code used again: ${again.status} ${/role="alert">([^<]*)/.exec(text)?.[1]}`);
  });

  test('a nonce changed on the way is refused; so is the issuer’s error answer', async () => {
    const jar = new Jar();
    const url = await callbackUrl(jar, 'carol', (u) =>
      u.searchParams.set('nonce', 'a-nonce-the-hub-never-made'),
    );
    const r = await step(jar, url);
    expect(r.status).toBe(401);
    const text = await r.text();
    expect(text).toContain('OIDC_SIGN_IN_NONCE');
    proof.push(`tampered nonce: ${r.status} ${/role="alert">([^<]*)/.exec(text)?.[1]}`);
    // The person aborts at the issuer, in the browser: it answers `error=access_denied`.
    const ctx = await browser.newContext();
    const page = await ctx.newPage();
    await page.goto(`${f.hubUrl}/login`);
    await page.click(`text=${buttonText()}`);
    await page.waitForSelector('input[name="login"]');
    const abort = await page.getAttribute('a[href*="/abort"]', 'href');
    const answer = page.waitForResponse((res) => res.url().includes('/login/oidc/callback'));
    await page.goto(new URL(abort!, page.url()).href);
    expect((await answer).status()).toBe(401);
    expect(await refusal(page)).toContain('OIDC_SIGN_IN_REFUSED');
    expect(await refusal(page)).toContain('access_denied');
    proof.push(`issuer error answer: 401 ${await refusal(page)}`);
    await ctx.close();
  });
});

describe('a public client', () => {
  test('signs in with PKCE alone: no secret anywhere, the same session', async () => {
    const jar = new Jar();
    const url = await callbackUrl(jar, 'alice', undefined, publicHub.hubUrl);
    const done = await step(jar, url);
    expect(done.status).toBe(200);
    const key = /name="lume-key" content="([^"]+)"/.exec(await done.text())![1]!;
    const who = await step(jar, `${publicHub.hubUrl}/api/session`, {
      headers: { 'x-lume-key': key },
    });
    expect(await who.json()).toEqual({ principal: { kind: 'user', name: `${op.issuer}#alice` } });
    proof.push(`public client (PKCE alone): signed in as ${op.issuer}#alice`);
  });
});

describe('pending sign-ins are bounded', () => {
  test('in count (past it a new one is refused, none dropped) and in age; a state is taken once', () => {
    let now = 0;
    const pending = new PendingSignIns({ max: 2, ttlMs: 1000, now: () => now });
    const p = { nonce: 'n', verifier: 'v', redirectUri: 'http://h/cb', next: '/' };
    expect(pending.add('a', p, 's_a')).toBe(true);
    expect(pending.add('b', p, 's_b')).toBe(true);
    expect(pending.add('c', p, 's_c')).toBe(false);
    expect(pending.take('a', ['s_b'])).toEqual({ ok: false, why: 'browser' });
    expect(pending.take('a', ['s_a']).ok).toBe(true);
    expect(pending.take('a', ['s_a'])).toEqual({ ok: false, why: 'unknown' });
    now = 1000;
    expect(pending.take('b', ['s_b'])).toEqual({ ok: false, why: 'unknown' });
    expect(pending.size).toBe(0);
    expect(pending.add('c', p, 's_c')).toBe(true);
  });
});
