/**
 * @module hub/http/login — the console's sign-in: `GET /login` shows a plain HTML form (no script: the
 * token goes from the form to the hub and never into JavaScript), `POST /login` checks the token
 * and answers with a session cookie (HttpOnly, SameSite=Strict), `POST /logout` ends it. On
 * loopback without HUB_REQUIRE_LOGIN no sign-in is needed: the console page hands its visitor a
 * session for the principal `console` (see `consoleSession`).
 */

import { isAuthenticated, type Principal } from '../../lib/auth/principal.ts';
import type { TokenBook } from '../../lib/auth/tokens.ts';
import { readBodyBytes } from '../../lib/body.ts';
import type { Log } from '../../lib/log.ts';
import type { HubAccess } from './access.ts';
import { clearedSessionCookie, sessionCookie, sessionCookieOf } from './sessions.ts';

/** The principal name of a console visitor on loopback when no sign-in is required. */
export const CONSOLE_PRINCIPAL = 'console';
const MAX_FORM = 4096;

/** Where to go after signing in: a path of this hub (`/`, `/#/tasks`), never another site. */
function localPath(next: string | null | undefined): string {
  return next && next.length <= 512 && /^\/(?![/\\])[^\s\\]*$/.test(next) ? next : '/';
}

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

const page = (note: string, next: string, status = 200) =>
  new Response(
    `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>Sign in · lume-a2a console</title>
  <link rel="stylesheet" href="/style.css">
  <link rel="icon" href="/favicon.svg" type="image/svg+xml">
</head>
<body>
  <main class="login">
    <h1>lume-a2a console</h1>
    <form method="post" action="/login">
      <label for="token">Access token</label>
      <input id="token" name="token" type="password" autocomplete="off" required maxlength="256">
      <input type="hidden" name="next" value="${escapeHtml(next)}">
      <button type="submit">Sign in</button>
    </form>
    <p class="hint">Make a token with <code>bun run keys token add &lt;name&gt;</code> on the hub's machine.</p>
    ${note ? `<p class="error" role="alert">${note}</p>` : ''}
  </main>
</body>
</html>
`,
    {
      status,
      headers: {
        'content-type': 'text/html; charset=utf-8',
        'cache-control': 'no-store',
        'x-content-type-options': 'nosniff',
        'x-frame-options': 'DENY',
      },
    },
  );

const redirect = (to: string, cookie?: string) =>
  new Response(null, {
    status: 303,
    headers: {
      location: to,
      'cache-control': 'no-store',
      ...(cookie ? { 'set-cookie': cookie } : {}),
    },
  });

/** The token and the page to return to that a sign-in form (or a JSON body) carries. */
async function postedForm(req: Request): Promise<{ token?: string; next: string }> {
  const bytes = await readBodyBytes(req, MAX_FORM).catch(() => undefined);
  if (!bytes) return { next: '/' };
  const text = new TextDecoder().decode(bytes);
  const type = (req.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
  if (type === 'application/json') {
    try {
      const doc = JSON.parse(text) as { token?: unknown; next?: unknown };
      return {
        ...(typeof doc?.token === 'string' ? { token: doc.token } : {}),
        next: localPath(typeof doc?.next === 'string' ? doc.next : undefined),
      };
    } catch {
      return { next: '/' };
    }
  }
  const form = new URLSearchParams(text);
  const token = form.get('token');
  return { ...(token ? { token } : {}), next: localPath(form.get('next')) };
}

export interface LoginDeps {
  access: HubAccess;
  tokens?: TokenBook;
  log: Log;
}

export function createLogin(deps: LoginDeps) {
  const { access } = deps;
  const cookieFor = (name: string) =>
    sessionCookie(
      access.sessions.create(name),
      access.sessions.maxAgeSeconds,
      access.secureCookies,
    );

  return {
    /** `/login` and `/logout`, or undefined for any other path. */
    fetch(req: Request): Promise<Response> | Response | undefined {
      const path = new URL(req.url).pathname;
      if (path === '/logout') {
        if (req.method !== 'POST')
          return new Response(null, { status: 405, headers: { allow: 'POST' } });
        const secret = sessionCookieOf(req);
        if (secret) access.sessions.end(secret);
        return redirect('/login', clearedSessionCookie(access.secureCookies));
      }
      if (path !== '/login') return undefined;
      if (req.method === 'GET' || req.method === 'HEAD') {
        const next = localPath(new URL(req.url).searchParams.get('next'));
        // Nothing to sign in to on loopback without HUB_REQUIRE_LOGIN: hand out the console session.
        return access.requireLogin ? page('', next) : redirect(next, cookieFor(CONSOLE_PRINCIPAL));
      }
      if (req.method !== 'POST')
        return new Response(null, { status: 405, headers: { allow: 'GET, POST' } });
      // A browser always names the page that posts; the access policy has checked it is the hub's own.
      if (req.headers.get('origin') === null)
        return page('Sign in from the console page.', '/', 403);
      return postedForm(req).then(({ token, next }) => {
        const name = token ? deps.tokens?.verify(token) : undefined;
        if (!name) {
          deps.log('warn', 'console sign-in refused');
          return page('That token is not valid here.', next, 401);
        }
        deps.log('info', 'console sign-in', { principal: name });
        return redirect(next, cookieFor(name));
      });
    },

    /**
     * Sets the scene for the console page: without a session it redirects to the form when
     * sign-in is required, and otherwise (loopback) adds a `console` session cookie to the page.
     */
    consolePage(caller: Principal, page: () => Response): Response {
      if (isAuthenticated(caller)) return page();
      if (access.requireLogin) return redirect('/login');
      const res = page();
      res.headers.append('set-cookie', cookieFor(CONSOLE_PRINCIPAL));
      return res;
    },
  };
}
