/**
 * @module hub/http/login-sign-in — the steps of a console sign-in: the throttle per client address
 * and the name a good credential signs in as,
 * a one-time ticket redeemed for the principal `console`, a token checked against the book, and
 * the new session that replaces any the browser brought (no fixation).
 */

import { hashSecret } from '../../lib/auth/secret.ts';
import type { TokenBook } from '../../lib/auth/tokens.ts';
import type { Log } from '../../lib/log.ts';
import type { HubAccess } from './access.ts';
import type { SignInThrottle } from './sign-in-throttle.ts';
import type { ConsoleTickets } from './tickets.ts';
import { codedError } from '../../lib/net/coded.ts';
import type { Posted } from './login-form.ts';
import { signedInPage, signInPage } from './login-pages.ts';
import { cookieValues, sessionCookie } from './sessions.ts';
import type { ConsoleOidc } from './oidc-pending.ts';
import type { Redeemed } from './tickets.ts';

/** What the console's sign-in needs of the hub. */
export interface LoginDeps {
  access: HubAccess;
  tokens?: TokenBook;
  tickets: ConsoleTickets;
  throttle: SignInThrottle;
  log: Log;
  /** The console's sign-in through the first trusted issuer, when a client id is configured. */
  oidc?: ConsoleOidc;
}

/** The sign-in page's offer to sign in through the issuer, when there is one. */
export const offer = (deps: Pick<LoginDeps, 'oidc'>) =>
  deps.oidc ? { issuer: deps.oidc.flow.issuer } : {};

/** The principal of whoever signs in through a console URL the hub printed. */
const CONSOLE_PRINCIPAL = 'console';

const TICKET_NOTES: Record<Exclude<Redeemed, 'ok'> | 'revoked', string> = {
  revoked: 'That sign-in link names a token that no longer exists.',
  malformed: 'That is not a console sign-in link.',
  forged: 'That sign-in link was not made by this hub.',
  expired: 'That sign-in link has expired: run bun run console-url for a new one.',
  used: 'That sign-in link has been used already: run bun run console-url for a new one.',
  full: 'Too many sign-in links are in use; try again in a while.',
};

/**
 * Ends every session the browser brought (a planted cookie too), then starts a new one; `issued`:
 * a session made through an issuer, with its access token's scopes, ending when that token does.
 */
export function startSession(
  deps: LoginDeps,
  req: Request,
  name: string,
  next: string,
  json: boolean,
  tokenDigest?: string,
  issued?: { scopes: readonly string[]; tenants?: readonly string[]; expiresAt: number },
): Response {
  const { access } = deps;
  for (const old of cookieValues(req, access.cookieName())) access.sessions.end(old);
  const made = access.sessions.create(name, tokenDigest, issued);
  if (!made) {
    deps.log('warn', 'console sign-in refused: the session table is full');
    return json
      ? codedError('SESSIONS_FULL', 'every console session is in use; try again later')
      : signInPage({
          ...offer(deps),
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

/**
 * The throttle's bucket of an attempt: the client address and the name a good credential signs in
 * as, or `?` for every bad one. So one local process sending wrong tokens keeps only wrong tokens
 * at 429, never another user's good one (guessing is the 256-bit secrets' job, not the throttle's).
 */
export function attemptKey(
  deps: LoginDeps,
  client: string,
  cred: { ticket?: string; token?: string },
): string {
  let name: string | undefined;
  if (cred.ticket)
    name =
      deps.tickets.peek(cred.ticket) === 'ok'
        ? (deps.tickets.nameOf(cred.ticket) ?? CONSOLE_PRINCIPAL)
        : undefined;
  else if (cred.token) name = deps.tokens?.verify(cred.token);
  return `${name ?? '?'} ${client}`;
}

/** 429 with Retry-After when this bucket (`attemptKey`) has tried too often, else undefined. */
export function throttled(
  deps: LoginDeps,
  bucket: string,
  next: string,
  json: boolean,
): Response | undefined {
  const wait = deps.throttle.take(bucket);
  if (wait === 0) return undefined;
  const headers = { 'retry-after': String(wait) };
  deps.log('warn', 'console sign-in throttled', { client: bucket.slice(bucket.indexOf(' ') + 1) });
  return json
    ? codedError('SIGN_IN_THROTTLED', `too many sign-in attempts; retry in ${wait} s`, headers)
    : signInPage({
        ...offer(deps),
        note: `Too many sign-in attempts; try again in ${wait} s.`,
        next,
        status: 429,
        headers,
      });
}

/**
 * A console URL's ticket: a session of `console` when it redeems, or of the token's user it names
 * (`bun run console-url --as <name>`), tied to that token so revoking it ends the session.
 */
export function redeemTicket(
  deps: LoginDeps,
  req: Request,
  ticket: string,
  next: string,
  json: boolean,
): Response {
  const as = deps.tickets.nameOf(ticket);
  const digest = as === undefined ? undefined : deps.tokens?.digestOf(as);
  // A ticket for a token revoked since it was printed signs nobody in (and is not used up).
  const outcome =
    as !== undefined && digest === undefined ? 'revoked' : deps.tickets.redeem(ticket);
  if (outcome === 'ok') return startSession(deps, req, as ?? CONSOLE_PRINCIPAL, next, json, digest);
  deps.log('warn', 'console sign-in link refused', { outcome });
  const note = TICKET_NOTES[outcome];
  return json
    ? codedError('UNAUTHENTICATED', note)
    : signInPage({ ...offer(deps), note, next, status: outcome === 'full' ? 503 : 401 });
}

/** A posted form: throttled, then its ticket redeemed or its token checked. */
export function signInWith(deps: LoginDeps, req: Request, client: string, form: Posted): Response {
  const wait = throttled(deps, attemptKey(deps, client, form), form.next, form.json);
  if (wait) return wait;
  if (form.ticket) return redeemTicket(deps, req, form.ticket, form.next, form.json);
  const name = form.token ? deps.tokens?.verify(form.token) : undefined;
  if (!name || !form.token) {
    deps.log('warn', 'console sign-in refused');
    return form.json
      ? codedError('UNAUTHENTICATED', 'that token is not valid here')
      : signInPage({
          ...offer(deps),
          note: 'That token is not valid here.',
          next: form.next,
          status: 401,
        });
  }
  return startSession(deps, req, name, form.next, form.json, hashSecret(form.token));
}
