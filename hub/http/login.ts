/**
 * @module hub/http/login — the console's sign-in, as a local notebook server's: the hub prints a
 * console URL with a one-time ticket (`/login?ticket=…`, hub/http/tickets.ts), and opening it
 * exchanges the ticket for a session of the principal `console`; a token typed into the plain
 * HTML form (no script: the token never reaches JavaScript) makes a session of that token's name.
 * Nobody gets a principal by merely asking. Every sign-in starts a new session (any session the
 * browser brought is ended: no fixation) and answers a short page that hands the console its page
 * key (`console/signed-in.js` keeps it in this origin's storage). Attempts are throttled per client
 * address (429 with Retry-After). `POST /logout` ends the session; `GET /api/session` says who is
 * signed in. With an issuer client configured, the page also offers signing in through the issuer
 * (hub/http/oidc-login.ts). This file routes; the pages are hub/http/login-pages.ts, the posted form
 * hub/http/login-form.ts, the sign-in steps hub/http/login-sign-in.ts.
 */

import { isAuthenticated, type Principal } from '../../lib/auth/principal.ts';
import { codedError } from '../../lib/net/coded.ts';
import type { HubAccess } from './access.ts';
import { postedForm } from './login-form.ts';
import { oidcLogin } from './oidc-login.ts';
import { localPath, redirect, signInPage } from './login-pages.ts';
import {
  attemptKey,
  type LoginDeps,
  offer,
  redeemTicket,
  signInWith,
  throttled,
} from './login-sign-in.ts';
import { clearedSessionCookie, cookieValues, sessionKeyOf } from './sessions.ts';

export type { LoginDeps } from './login-sign-in.ts';

/** `GET /api/session`: who the caller is signed in as. */
function sessionAnswer(req: Request, c: Principal): Response {
  if (req.method !== 'GET') return codedError('METHOD_NOT_ALLOWED', 'GET only');
  return c.kind === 'anonymous'
    ? codedError('UNAUTHENTICATED', 'not signed in', {
        'www-authenticate': 'Bearer realm="lume-a2a"',
      })
    : Response.json(
        { principal: { kind: c.kind, name: c.name } },
        { headers: { 'cache-control': 'no-store' } },
      );
}

/** `POST /logout`: ends the session of the page that holds its key, and clears the cookie. */
function logout(access: HubAccess, req: Request): Response {
  if (req.method !== 'POST') return new Response(null, { status: 405, headers: { allow: 'POST' } });
  // Only the page that holds the key ends its session; a bare cookie clears nothing but itself.
  const key = sessionKeyOf(req);
  for (const secret of cookieValues(req, access.cookieName()))
    if (key && access.sessions.lookup(secret, key)) access.sessions.end(secret);
  return redirect('/login', clearedSessionCookie(access.cookieName(), access.secureCookies));
}

/** `/login`: the page, a console URL's ticket, or a posted sign-in. */
function login(deps: LoginDeps, req: Request, client: string): Promise<Response> | Response {
  const url = new URL(req.url);
  const next = localPath(url.searchParams.get('next'));
  if (req.method === 'GET' || req.method === 'HEAD') {
    const ticket = url.searchParams.get('ticket');
    if (ticket === null) return signInPage({ ...offer(deps), next });
    // Opened by the user (typed, pasted, from a terminal) or from this hub's own page: used at
    // once. A link on another page (another port of this host too) waits for a click.
    const from = req.headers.get('sec-fetch-site');
    if (from !== null && from !== 'none' && from !== 'same-origin')
      return signInPage({ ...offer(deps), next, ...(ticket.length <= 128 ? { ticket } : {}) });
    return (
      throttled(deps, attemptKey(deps, client, { ticket }), next, false) ??
      redeemTicket(deps, req, ticket, next, false)
    );
  }
  if (req.method !== 'POST')
    return new Response(null, { status: 405, headers: { allow: 'GET, POST' } });
  // A browser always names the page that posts; the access policy has checked it is the hub's own.
  if (req.headers.get('origin') === null)
    return signInPage({ ...offer(deps), note: 'Sign in from the console page.', status: 403 });
  return postedForm(req).then((form) => signInWith(deps, req, client, form));
}

export function createLogin(deps: LoginDeps) {
  const { access } = deps;
  return {
    /** The page a link from another site gets: the sign-in page; a ticket it carries is kept, not used. */
    crossSiteNavigation(req: Request): Response {
      const url = new URL(req.url);
      const ticket = url.pathname === '/login' ? url.searchParams.get('ticket') : null;
      return signInPage({
        ...offer(deps),
        next: localPath(url.searchParams.get('next')),
        ...(ticket && ticket.length <= 128 ? { ticket } : {}),
      });
    },

    /** `/login`, `/login/oidc…`, `/logout` and `/api/session`, or undefined for any other path. */
    fetch(
      req: Request,
      ctx: { client: string; caller: Principal },
    ): Promise<Response> | Response | undefined {
      const path = new URL(req.url).pathname;
      if (path === '/api/session') return sessionAnswer(req, ctx.caller);
      if (path === '/logout') return logout(access, req);
      return path === '/login' ? login(deps, req, ctx.client) : oidcLogin(deps, req, ctx.client);
    },

    /** The console page: only for a browser with a live session cookie; anyone else signs in first. */
    consolePage(req: Request, caller: Principal, page: () => Response): Response {
      return isAuthenticated(caller) || access.sessionByCookie(req) ? page() : redirect('/login');
    },
  };
}
