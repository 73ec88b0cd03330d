/**
 * @module hub/http/login — the console's sign-in, as a local notebook server's: the hub prints a
 * console URL with a one-time ticket (`/login?ticket=…`, hub/http/tickets.ts), and opening it
 * exchanges the ticket for a session of the principal `console`; a token typed into the plain
 * HTML form (no script: the token never reaches JavaScript) makes a session of that token's name.
 * Nobody gets a principal by merely asking. Every sign-in starts a new session (any session the
 * browser brought is ended: no fixation) and answers a short page that hands the console its page
 * key (`console/signed-in.js` keeps it in this origin's storage). Attempts are throttled per client
 * address (429 with Retry-After). `POST /logout` ends the session; `GET /api/session` says who is
 * signed in.
 */

import { isAuthenticated, type Principal } from '../../lib/auth/principal.ts';
import { hashSecret } from '../../lib/auth/secret.ts';
import type { TokenBook } from '../../lib/auth/tokens.ts';
import { readBodyBytes } from '../../lib/body.ts';
import type { Log } from '../../lib/log.ts';
import { codedError } from '../../lib/net/coded.ts';
import type { HubAccess } from './access.ts';
import { clearedSessionCookie, cookieValues, sessionCookie, sessionKeyOf } from './sessions.ts';
import type { SignInThrottle } from './sign-in-throttle.ts';
import type { ConsoleTickets, Redeemed } from './tickets.ts';

/** The principal of whoever signs in through a console URL the hub printed. */
export const CONSOLE_PRINCIPAL = 'console';
const MAX_FORM = 4096;

/** Where to go after signing in: a path of this hub (`/`, `/#/tasks`), never another site. */
function localPath(next: string | null | undefined): string {
  return next && next.length <= 512 && /^\/(?![/\\])[^\s\\]*$/.test(next) ? next : '/';
}

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

const HTML_HEADERS = {
  'content-type': 'text/html; charset=utf-8',
  'cache-control': 'no-store',
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  // same-origin, not no-referrer: with no-referrer a form's POST says `Origin: null`.
  'referrer-policy': 'same-origin',
};

const shell = (body: string, head = '') => `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>Sign in · lume-a2a console</title>
  <link rel="stylesheet" href="/style.css">
  <link rel="icon" href="/favicon.svg" type="image/svg+xml">${head}
</head>
<body>
  <main class="login">
    <h1>lume-a2a console</h1>
${body}
  </main>
</body>
</html>
`;

interface PageOptions {
  note?: string;
  next?: string;
  /** A ticket a link from another site carried: kept for a same-site click, not used. */
  ticket?: string;
  status?: number;
  headers?: Record<string, string>;
}

/** The sign-in page: a console URL's ticket to confirm, or a token to type. */
function signInPage(o: PageOptions = {}): Response {
  const next = escapeHtml(o.next ?? '/');
  const confirm = o.ticket
    ? `    <form method="post" action="/login" class="ticket">
      <input type="hidden" name="ticket" value="${escapeHtml(o.ticket)}">
      <input type="hidden" name="next" value="${next}">
      <button type="submit">Continue to the console</button>
    </form>
    <p class="hint">A link from another page brought you here; continue only if you opened it yourself.</p>
`
    : '';
  return new Response(
    shell(`${confirm}    <p class="hint">Open the console URL the hub printed when it started, or run <code>bun run console-url</code> on the hub's machine for a new one. Or sign in with an access token:</p>
    <form method="post" action="/login">
      <label for="token">Access token</label>
      <input id="token" name="token" type="password" autocomplete="off" required maxlength="256">
      <input type="hidden" name="next" value="${next}">
      <button type="submit">Sign in</button>
    </form>
    <p class="hint">Make a token with <code>bun run keys token add &lt;name&gt;</code>. Signed in already? <a href="/">Open the console</a>.</p>
    ${o.note ? `<p class="error" role="alert">${escapeHtml(o.note)}</p>` : ''}`),
    { status: o.status ?? 200, headers: { ...HTML_HEADERS, ...o.headers } },
  );
}

/** What a signed-in browser is answered: its cookie, and its page key for the console to keep. */
function signedInPage(key: string, next: string, cookie: string): Response {
  const res = new Response(
    shell(
      `    <p>Signed in. <a id="next" href="${escapeHtml(next)}">Open the console</a>.</p>
    <noscript><p class="error">The console needs JavaScript.</p></noscript>`,
      `\n  <meta name="lume-key" content="${escapeHtml(key)}">\n  <meta name="lume-next" content="${escapeHtml(next)}">\n  <script type="module" src="/signed-in.js"></script>`,
    ),
    { headers: HTML_HEADERS },
  );
  res.headers.append('set-cookie', cookie);
  return res;
}

const redirect = (to: string, cookie?: string) =>
  new Response(null, {
    status: 303,
    headers: {
      location: to,
      'cache-control': 'no-store',
      ...(cookie ? { 'set-cookie': cookie } : {}),
    },
  });

interface Posted {
  token?: string;
  ticket?: string;
  next: string;
  json: boolean;
}

/** The token or ticket, and the page to return to, that a sign-in form (or a JSON body) carries. */
async function postedForm(req: Request): Promise<Posted> {
  const type = (req.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
  const json = type === 'application/json';
  const bytes = await readBodyBytes(req, MAX_FORM).catch(() => undefined);
  if (!bytes) return { next: '/', json };
  const text = new TextDecoder().decode(bytes);
  let get: (k: string) => unknown;
  if (json) {
    let doc: Record<string, unknown> = {};
    try {
      const parsed = JSON.parse(text) as unknown;
      if (parsed && typeof parsed === 'object') doc = parsed as Record<string, unknown>;
    } catch {}
    get = (k) => doc[k];
  } else {
    const form = new URLSearchParams(text);
    get = (k) => form.get(k);
  }
  const str = (v: unknown) => (typeof v === 'string' && v.length > 0 ? v : undefined);
  const token = str(get('token'));
  const ticket = str(get('ticket'));
  return {
    ...(token ? { token } : {}),
    ...(ticket ? { ticket } : {}),
    next: localPath(str(get('next'))),
    json,
  };
}

const TICKET_NOTES: Record<Exclude<Redeemed, 'ok'>, string> = {
  malformed: 'That is not a console sign-in link.',
  forged: 'That sign-in link was not made by this hub.',
  expired: 'That sign-in link has expired: run bun run console-url for a new one.',
  used: 'That sign-in link has been used already: run bun run console-url for a new one.',
  full: 'Too many sign-in links are in use; try again in a while.',
};

export interface LoginDeps {
  access: HubAccess;
  tokens?: TokenBook;
  tickets: ConsoleTickets;
  throttle: SignInThrottle;
  log: Log;
}

export function createLogin(deps: LoginDeps) {
  const { access } = deps;

  /** Ends every session the browser brought (a planted cookie too), then starts a new one. */
  function startSession(
    req: Request,
    name: string,
    next: string,
    json: boolean,
    tokenDigest?: string,
  ): Response {
    for (const old of cookieValues(req, access.cookieName())) access.sessions.end(old);
    const made = access.sessions.create(name, tokenDigest);
    if (!made) {
      deps.log('warn', 'console sign-in refused: the session table is full');
      return json
        ? codedError('SESSIONS_FULL', 'every console session is in use; try again later')
        : signInPage({
            note: 'Every console session is in use; try again later.',
            next,
            status: 503,
          });
    }
    deps.log('info', 'console sign-in', { principal: name });
    const cookie = sessionCookie(
      access.cookieName(),
      made.secret,
      access.sessions.maxAgeSeconds,
      access.secureCookies,
    );
    if (json) {
      const res = Response.json(
        { ok: true, principal: name, key: made.key },
        { headers: { 'cache-control': 'no-store' } },
      );
      res.headers.append('set-cookie', cookie);
      return res;
    }
    return signedInPage(made.key, next, cookie);
  }

  /** 429 with Retry-After when this client has tried too often, else undefined. */
  function throttled(client: string, next: string, json: boolean): Response | undefined {
    const wait = deps.throttle.take(client);
    if (wait === 0) return undefined;
    const headers = { 'retry-after': String(wait) };
    deps.log('warn', 'console sign-in throttled', { client });
    return json
      ? codedError('SIGN_IN_THROTTLED', `too many sign-in attempts; retry in ${wait} s`, headers)
      : signInPage({
          note: `Too many sign-in attempts; try again in ${wait} s.`,
          next,
          status: 429,
          headers,
        });
  }

  function redeemTicket(req: Request, ticket: string, next: string, json: boolean): Response {
    const outcome = deps.tickets.redeem(ticket);
    if (outcome === 'ok') return startSession(req, CONSOLE_PRINCIPAL, next, json);
    deps.log('warn', 'console sign-in link refused', { outcome });
    const note = TICKET_NOTES[outcome];
    return json
      ? codedError('UNAUTHENTICATED', note)
      : signInPage({ note, next, status: outcome === 'full' ? 503 : 401 });
  }

  return {
    /** The page a link from another site gets: the sign-in page; a ticket it carries is kept, not used. */
    crossSiteNavigation(req: Request): Response {
      const url = new URL(req.url);
      const ticket = url.pathname === '/login' ? url.searchParams.get('ticket') : null;
      return signInPage({
        next: localPath(url.searchParams.get('next')),
        ...(ticket && ticket.length <= 128 ? { ticket } : {}),
      });
    },

    /** `/login`, `/logout` and `/api/session`, or undefined for any other path. */
    fetch(
      req: Request,
      ctx: { client: string; caller: Principal },
    ): Promise<Response> | Response | undefined {
      const url = new URL(req.url);
      const path = url.pathname;
      if (path === '/api/session') {
        if (req.method !== 'GET') return codedError('METHOD_NOT_ALLOWED', 'GET only');
        const c = ctx.caller;
        return c.kind === 'anonymous'
          ? codedError('UNAUTHENTICATED', 'not signed in', {
              'www-authenticate': 'Bearer realm="lume-a2a"',
            })
          : Response.json(
              { principal: { kind: c.kind, name: c.name } },
              { headers: { 'cache-control': 'no-store' } },
            );
      }
      if (path === '/logout') {
        if (req.method !== 'POST')
          return new Response(null, { status: 405, headers: { allow: 'POST' } });
        // Only the page that holds the key ends its session; a bare cookie clears nothing but itself.
        const key = sessionKeyOf(req);
        for (const secret of cookieValues(req, access.cookieName()))
          if (key && access.sessions.lookup(secret, key)) access.sessions.end(secret);
        return redirect('/login', clearedSessionCookie(access.cookieName(), access.secureCookies));
      }
      if (path !== '/login') return undefined;
      const next = localPath(url.searchParams.get('next'));
      if (req.method === 'GET' || req.method === 'HEAD') {
        const ticket = url.searchParams.get('ticket');
        if (ticket === null) return signInPage({ next });
        // Opened by the user (typed, pasted, from a terminal) or from this hub's own page: used at
        // once. A link on another page (another port of this host too) waits for a click.
        const from = req.headers.get('sec-fetch-site');
        if (from !== null && from !== 'none' && from !== 'same-origin')
          return signInPage({ next, ...(ticket.length <= 128 ? { ticket } : {}) });
        return throttled(ctx.client, next, false) ?? redeemTicket(req, ticket, next, false);
      }
      if (req.method !== 'POST')
        return new Response(null, { status: 405, headers: { allow: 'GET, POST' } });
      // A browser always names the page that posts; the access policy has checked it is the hub's own.
      if (req.headers.get('origin') === null)
        return signInPage({ note: 'Sign in from the console page.', status: 403 });
      return postedForm(req).then((form) => {
        const wait = throttled(ctx.client, form.next, form.json);
        if (wait) return wait;
        if (form.ticket) return redeemTicket(req, form.ticket, form.next, form.json);
        const name = form.token ? deps.tokens?.verify(form.token) : undefined;
        if (!name || !form.token) {
          deps.log('warn', 'console sign-in refused');
          return form.json
            ? codedError('UNAUTHENTICATED', 'that token is not valid here')
            : signInPage({ note: 'That token is not valid here.', next: form.next, status: 401 });
        }
        return startSession(req, name, form.next, form.json, hashSecret(form.token));
      });
    },

    /** The console page: only for a browser with a live session cookie; anyone else signs in first. */
    consolePage(req: Request, caller: Principal, page: () => Response): Response {
      return isAuthenticated(caller) || access.sessionByCookie(req) ? page() : redirect('/login');
    },
  };
}
