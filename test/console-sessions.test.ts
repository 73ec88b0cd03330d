/**
 * The console's sessions against a real hub on port 0, the findings of the second trust review
 * that need no browser: revoking a token ends its sessions at once (they lived up to 12 h),
 * signing in again rotates the session (the old cookie and key are dead), one token holder
 * signing in 1,000 times signs nobody else out, sign-in is throttled per client address and the
 * name signing in (429 and Retry-After; 300 wrong tokens went through in 18.5 s, and a stream of
 * wrong ones kept every local user out), planted cookies and a cookie bomb sign nobody out, the token names `console` and `mesh` are
 * refused, and `bun run console-url` prints a URL the running hub accepts, once, and never again
 * after the hub restarts.
 */

import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { addToken, revokeToken, TokenBook, tokensPath } from '../lib/auth/tokens.ts';
import { newSecret } from '../lib/auth/secret.ts';
import { bunCommand } from './support/bundle.ts';
import { realNodeDefs, startFleet, type RunningFleet } from './support/fleet.ts';
import { signInAt } from './support/console-session.ts';
import { tempDir, TEST_TOKEN } from './support/node.ts';
import { ROOT } from './support/processes.ts';
import { startProcess } from './support/process.ts';

setDefaultTimeout(20_000); // per file (Bun scopes it so): real servers and processes are slow on a busy machine

const tokensDir = tempDir('lume-a2a-tokens-');
/** `bun <args>` in the project root, its output read whole. */
const run = (args: string[], env: Record<string, string>) =>
  Bun.spawn(bunCommand(args), {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdin: 'ignore',
    stdout: 'pipe',
    stderr: 'pipe',
  });
let f: RunningFleet;
let dave: string;
let erin: string;

beforeAll(async () => {
  dave = addToken(tokensDir, 'dave');
  erin = addToken(tokensDir, 'erin');
  f = await startFleet(await realNodeDefs(['scanner']), {
    hub: {
      // The token file as the hub reads it, checked on every request so a revocation shows at once.
      tokens: TokenBook.open(tokensDir, { recheckMs: 0 }),
      signInThrottle: { burst: 40, everyMs: 600_000 },
    },
  });
});
afterAll(async () => {
  await f?.stop();
  const { rmSync } = await import('node:fs');
  rmSync(tokensDir, { recursive: true, force: true });
});

/** Signs in with a token through the form's JSON twin: the cookie and the page key. */
async function signIn(token: string) {
  const res = await fetch(`${f.hubUrl}/login`, {
    method: 'POST',
    headers: { origin: f.hubUrl, 'content-type': 'application/json' },
    body: JSON.stringify({ token }),
  });
  const body = await res.json();
  return {
    status: res.status,
    body,
    headers: res.headers,
    session: res.ok
      ? { cookie: res.headers.get('set-cookie')!.split(';')[0]!, 'x-lume-key': body.key as string }
      : undefined,
  };
}
const whoIs = async (h: Record<string, string> | undefined) => {
  const res = await fetch(`${f.hubUrl}/api/session`, { headers: h });
  return res.ok ? (await res.json()).principal.name : res.status;
};

describe('sessions', () => {
  test('revoking a token ends its sessions at once', async () => {
    const s = await signIn(dave);
    expect(await whoIs(s.session)).toBe('dave');
    expect(revokeToken(tokensDir, 'dave')).toBe(true);
    expect(await whoIs(s.session)).toBe(401);
    // A new token of the same name is a new token: the old sessions stay ended.
    dave = addToken(tokensDir, 'dave');
    expect(await whoIs(s.session)).toBe(401);
  });

  test('signing in again rotates the session: the cookie the browser brought is ended', async () => {
    const first = await signIn(erin);
    const res = await fetch(`${f.hubUrl}/login`, {
      method: 'POST',
      headers: {
        origin: f.hubUrl,
        'content-type': 'application/json',
        cookie: first.session!.cookie,
      },
      body: JSON.stringify({ token: erin }),
    });
    const second = {
      cookie: res.headers.get('set-cookie')!.split(';')[0]!,
      'x-lume-key': (await res.json()).key,
    };
    expect(second.cookie).not.toBe(first.session!.cookie);
    expect([await whoIs(first.session), await whoIs(second)]).toEqual([401, 'erin']);
  });

  test('cookies another local app plants under the hub’s name, and a cookie bomb, sign nobody out', async () => {
    const s = (await signIn(erin)).session!;
    const [name] = s.cookie.split('=') as [string];
    // Another server on this host sets cookies of the hub's name (cookies ignore the port): values
    // of our shape that are no session, junk, and a flood of other names before ours.
    const planted = [
      ...Array.from({ length: 40 }, () => `${name}=${newSecret('s_')}`),
      ...Array.from({ length: 40 }, (_, i) => `${name}=junk${i}`),
      ...Array.from({ length: 60 }, (_, i) => `bomb${i}=${'x'.repeat(100)}`),
    ];
    const cookie = [...planted, s.cookie].join('; ');
    expect(cookie.length).toBeGreaterThan(8192);
    expect(await whoIs({ ...s, cookie })).toBe('erin');
    // Planted values alone are nobody's session: the page is sent to sign in, the hub stays up.
    expect(await whoIs({ ...s, cookie: planted.join('; ') })).toBe(401);
    expect(await whoIs(s)).toBe('erin');
  });

  test('one token holder signing in again and again signs nobody else out', async () => {
    const other = await signIn(dave);
    for (let i = 0; i < 30; i++) expect((await signIn(erin)).status).toBe(200);
    expect(await whoIs(other.session)).toBe('dave');
    expect(f.hub.access.sessions.size).toBeLessThanOrEqual(16 + 2);
  });
});

describe('throttle', () => {
  let g: RunningFleet;
  beforeAll(async () => {
    g = await startFleet(await realNodeDefs(['scanner']), {
      hub: { signInThrottle: { burst: 3, everyMs: 60_000 } },
    });
  });
  afterAll(() => g?.stop());

  test('a client past its sign-in attempts gets 429 with Retry-After, the form and a console URL alike', async () => {
    const wrong = () =>
      fetch(`${g.hubUrl}/login`, {
        method: 'POST',
        headers: { origin: g.hubUrl, 'content-type': 'application/x-www-form-urlencoded' },
        body: `token=${newSecret()}`,
      });
    const statuses = [];
    for (let i = 0; i < 5; i++) statuses.push((await wrong()).status);
    expect(statuses).toEqual([401, 401, 401, 429, 429]);
    const limited = await wrong();
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(await limited.text()).toContain('Too many sign-in attempts');
    // One local process sending wrong tokens locks out nobody else on this machine: a good token
    // and a good console URL have buckets of their own (per name and address).
    const good = await fetch(`${g.hubUrl}/login`, {
      method: 'POST',
      headers: { origin: g.hubUrl, 'content-type': 'application/json' },
      body: JSON.stringify({ token: TEST_TOKEN }),
    });
    expect(good.status).toBe(200);
    expect((await wrong()).status).toBe(429);
    const urls = [];
    for (let i = 0; i < 4; i++)
      urls.push((await fetch(g.hub.consoleUrl(), { redirect: 'manual' })).status);
    // Each name's attempts are counted too: past the burst, even a good URL waits.
    expect(urls).toEqual([200, 200, 200, 429]);
  });
});

describe('token names', () => {
  test('console and mesh are refused; one written into the file by hand is no token', () => {
    const dir = tempDir('lume-a2a-tokens-');
    try {
      expect(() => addToken(dir, 'console')).toThrow(/reserved/);
      expect(() => addToken(dir, 'mesh')).toThrow(/reserved/);
      addToken(dir, 'frank');
      const token = newSecret();
      const file = JSON.parse(require('node:fs').readFileSync(tokensPath(dir), 'utf8'));
      file.tokens.console = {
        hash: new Bun.CryptoHasher('sha256').update(token).digest('hex'),
        created: '',
      };
      writeFileSync(tokensPath(dir), JSON.stringify(file));
      const book = TokenBook.open(dir);
      expect(book.verify(token)).toBeUndefined();
    } finally {
      require('node:fs').rmSync(dir, { recursive: true, force: true });
    }
  });

  test('a token file that does not read is logged once, naming it, and the tokens read before still work', () => {
    const dir = tempDir('lume-a2a-tokens-');
    try {
      const token = addToken(dir, 'grace');
      const lines: { msg: string; fields: Record<string, string> }[] = [];
      const book = TokenBook.open(dir, {
        recheckMs: 0,
        log: (_level, msg, fields) => lines.push({ msg, fields }),
      });
      expect(book.verify(token)).toBe('grace');
      writeFileSync(tokensPath(dir), '{"format": "lume-a2a.tokens/1", "tokens": {');
      expect(book.verify(token)).toBe('grace');
      expect(book.verify(token)).toBe('grace');
      expect(lines.map((l) => [l.msg, l.fields.file])).toEqual([
        ['token file is malformed; keeping the tokens read before', tokensPath(dir)],
      ]);
    } finally {
      require('node:fs').rmSync(dir, { recursive: true, force: true });
    }
  });

  test('bun run keys token add console exits non-zero with the reason', async () => {
    const dir = tempDir('lume-a2a-tokens-');
    try {
      const p = run(['hub/cli/keys.ts', 'token', 'add', 'console'], { DATA_DIR: dir });
      const [code, err] = await Promise.all([p.exited, new Response(p.stderr).text()]);
      expect(code).not.toBe(0);
      expect(err).toContain('reserved');
    } finally {
      require('node:fs').rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('bun run console-url', () => {
  test('the hub prints a console URL at start, and console-url prints another the running hub accepts once', async () => {
    const hub = await startProcess('hub/main.ts');
    try {
      // The hub's own line, written with its listening line.
      const printed = /console: (\S+)/.exec(hub.out())![1]!;
      expect((await signInAt(printed)).key).toBeTruthy();
      const p = run(['hub/cli/console-url.ts'], {
        DATA_DIR: hub.dataDir,
        FLEET_FILE: `${hub.dataDir}/fleet.json`,
        PORT: new URL(hub.url).port,
      });
      const [code, out] = await Promise.all([p.exited, new Response(p.stdout).text()]);
      expect(code).toBe(0);
      const url = out.trim();
      expect(url).toMatch(
        new RegExp(`^${hub.url}/login\\?ticket=ct_[a-z0-9]+_[\\w-]{22}_[\\w-]{43}$`),
      );
      const session = await signInAt(url);
      expect(
        await fetch(`${hub.url}/api/session`, { headers: session.headers }).then((r) => r.json()),
      ).toEqual({
        principal: { kind: 'session', name: 'console' },
      });
      expect((await fetch(url, { redirect: 'manual' })).status).toBe(401);
    } finally {
      await hub.stop();
    }
  });

  test('a used console URL stays used after the hub restarts', async () => {
    const dataDir = tempDir('lume-a2a-restart-');
    const shared = { dataDir, fleetFile: join(dataDir, 'fleet.json') };
    writeFileSync(
      shared.fleetFile,
      JSON.stringify({
        hub: { name: 'a2a', port: 0, role: 'hub', file: 'hub/main.ts' },
        nodes: [],
      }),
    );
    try {
      const first = await startProcess('hub/main.ts', [], { PORT: '0' }, shared);
      const printed = new URL(/console: (\S+)/.exec(first.out())![1]!);
      try {
        expect((await signInAt(printed.href)).key).toBeTruthy();
      } finally {
        await first.stop();
      }
      const again = await startProcess('hub/main.ts', [], { PORT: '0' }, shared);
      try {
        const res = await fetch(`${again.url}${printed.pathname}${printed.search}`, {
          redirect: 'manual',
        });
        expect(res.status).toBe(401);
        expect(await res.text()).toContain('has been used already');
        expect(statSync(join(dataDir, 'hub', 'console-tickets.json')).mode & 0o777).toBe(0o600);
      } finally {
        await again.stop();
      }
    } finally {
      require('node:fs').rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
