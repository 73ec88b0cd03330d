/**
 * @module hub/http/oidc-login — the console signs a person in through the first trusted issuer
 * (authorization code with PKCE, lib/auth/oidc/code-flow.ts). `POST /login/oidc` (the sign-in
 * page's button) keeps a pending sign-in (hub/http/oidc-pending.ts) under a fresh `state`, gives
 * the browser a secret in a cookie only the callback reads, and sends it to the issuer.
 * `GET /login/oidc/callback` takes that pending sign-in once, in the browser that started it only,
 * exchanges the code, checks the ID token (the same verifier as every bearer token; its audience the
 * client id, its `nonce` the pending one) and the access token (the hub's audience, its scopes), and
 * makes a console session for `user:<issuer>#<sub>` with those scopes, ending with that token. Every
 * failure is a coded refusal on the sign-in page, logged by its code without token, code or secret.
 */

import { parseJwt } from '../../lib/auth/oidc/jwt.ts';
import { newPkce, oauthError } from '../../lib/auth/oidc/code-flow.ts';
import type { UserPrincipal } from '../../lib/auth/principal.ts';
import { newSecret } from '../../lib/auth/secret.ts';
import { statusOf } from '../../lib/errors/registry.ts';
import { fail, ok, type Failure, type Result } from '../../lib/errors/result.ts';
import { postedForm } from './login-form.ts';
import { localPath, signInPage } from './login-pages.ts';
import { type LoginDeps, offer, startSession, throttled } from './login-sign-in.ts';
import type { ConsoleOidc, PendingSignIn } from './oidc-pending.ts';
import { cookieValues } from './sessions.ts';

const OIDC_LOGIN_PATH = '/login/oidc';
const OIDC_CALLBACK_PATH = '/login/oidc/callback';

type Refusal = Failure<string>;

/** The starting browser's cookie: sent to the callback only, on the issuer's redirect back too (Lax). */
const browserCookieName = (deps: LoginDeps) => `${deps.access.cookieName()}_signin`;
const browserCookie = (deps: LoginDeps, value: string, maxAge: number) =>
  `${browserCookieName(deps)}=${value}; Path=${OIDC_CALLBACK_PATH}; HttpOnly; SameSite=Lax; Max-Age=${maxAge}${deps.access.secureCookies ? '; Secure' : ''}`;

/** The sign-in page with the refusal's code and message, logged by its code. */
function refused(deps: LoginDeps, r: Refusal, next = '/', cookie?: string): Response {
  deps.log('warn', 'console sign-in through the issuer refused', { code: r.code });
  const res = signInPage({
    ...offer(deps),
    note: `${r.message} (${r.code})`,
    next,
    status: statusOf(r.code),
  });
  if (cookie) res.headers.append('set-cookie', cookie);
  return res;
}

/** `POST /login/oidc`: a pending sign-in, and the browser sent to the issuer. */
async function start(
  deps: LoginDeps,
  oidc: ConsoleOidc,
  req: Request,
  client: string,
): Promise<Response> {
  const { next } = await postedForm(req);
  const wait = throttled(deps, `oidc ${client}`, next, false);
  if (wait) return wait;
  const state = newSecret('');
  const nonce = newSecret('');
  const pkce = newPkce();
  const secret = newSecret('s_');
  const redirectUri = `${new URL(req.url).origin}${OIDC_CALLBACK_PATH}`;
  const to = await oidc.flow.authorizationUrl({
    state,
    nonce,
    challenge: pkce.challenge,
    redirectUri,
  });
  if (!to.ok) return refused(deps, to.error, next);
  const pending = { nonce, verifier: pkce.verifier, redirectUri, next };
  if (!oidc.pending.add(state, pending, secret))
    return refused(
      deps,
      { code: 'OIDC_SIGN_IN_FULL', message: 'Too many sign-ins are under way; try again shortly.' },
      next,
    );
  return new Response(null, {
    status: 303,
    headers: {
      location: to.result,
      'cache-control': 'no-store',
      'set-cookie': browserCookie(deps, secret, oidc.pending.maxAgeSeconds),
    },
  });
}

/** The ID token's user (this issuer, this client, this nonce) and the access token's scopes, one subject. */
async function checkTokens(
  oidc: ConsoleOidc,
  p: PendingSignIn,
  idToken: string,
  accessToken: string,
): Promise<Result<{ user: UserPrincipal; expiresAt: number }, Refusal>> {
  const tokenRefusal = (what: string, code: string) =>
    fail('OIDC_SIGN_IN_TOKEN', `The issuer's ${what} is refused (${code}).`);
  const id = await oidc.verifier.verify(idToken, [oidc.flow.clientId]);
  if (!id.ok)
    return id.error.code === 'ISSUER_UNAVAILABLE'
      ? fail('OIDC_SIGN_IN_UNAVAILABLE', 'The issuer cannot be reached; try again shortly.')
      : tokenRefusal('ID token', id.error.code);
  if (!id.result.name.startsWith(`${oidc.flow.issuer}#`))
    return tokenRefusal('ID token', 'TOKEN_ISSUER_UNKNOWN');
  const claims = (parseJwt(idToken) as { claims: Record<string, unknown> }).claims;
  if (claims.nonce !== p.nonce)
    return fail('OIDC_SIGN_IN_NONCE', 'The ID token was not issued for this sign-in (its nonce).');
  const access = await oidc.verifier.verify(accessToken);
  if (!access.ok) return tokenRefusal('access token', access.error.code);
  if (access.result.name !== id.result.name)
    return tokenRefusal('access token', 'another subject than the ID token');
  const exp = (parseJwt(accessToken) as { claims: Record<string, unknown> }).claims.exp as number;
  return ok({ user: access.result, expiresAt: exp * 1000 });
}

/** `GET /login/oidc/callback`: the pending sign-in taken, its code exchanged, a session made. */
async function callback(deps: LoginDeps, oidc: ConsoleOidc, req: Request): Promise<Response> {
  const q = new URL(req.url).searchParams;
  const state = q.get('state') ?? '';
  const taken = oidc.pending.take(state, cookieValues(req, browserCookieName(deps)));
  if (!taken.ok)
    return taken.why === 'browser'
      ? refused(deps, {
          code: 'OIDC_SIGN_IN_BROWSER',
          message: 'That sign-in was started in another browser; start it here.',
        })
      : refused(deps, {
          code: 'OIDC_SIGN_IN_STATE',
          message: 'That sign-in is unknown, used already or expired; start again.',
        });
  const p = taken.pending;
  const spent = browserCookie(deps, '', 0);
  const error = q.get('error');
  if (error !== null)
    return refused(
      deps,
      {
        code: 'OIDC_SIGN_IN_REFUSED',
        message: `The issuer did not sign you in (${oauthError(error)}).`,
      },
      p.next,
      spent,
    );
  // RFC 9207: an issuer that names itself must be this one (a mix-up with another is refused).
  const iss = q.get('iss');
  if (iss !== null && iss !== oidc.flow.issuer)
    return refused(
      deps,
      { code: 'OIDC_SIGN_IN_REFUSED', message: 'The answer came from another issuer.' },
      p.next,
      spent,
    );
  const code = q.get('code');
  if (!code || code.length > 2048)
    return refused(
      deps,
      { code: 'OIDC_SIGN_IN_REFUSED', message: 'The issuer sent no code.' },
      p.next,
      spent,
    );
  const tokens = await oidc.flow.exchange({
    code,
    verifier: p.verifier,
    redirectUri: p.redirectUri,
  });
  if (!tokens.ok) return refused(deps, tokens.error, p.next, spent);
  const checked = await checkTokens(oidc, p, tokens.result.idToken, tokens.result.accessToken);
  if (!checked.ok) return refused(deps, checked.error, p.next, spent);
  const { user, expiresAt } = checked.result;
  const res = startSession(deps, req, user.name, localPath(p.next), false, undefined, {
    scopes: user.scopes,
    ...(user.tenants ? { tenants: user.tenants } : {}),
    expiresAt,
  });
  res.headers.append('set-cookie', spent);
  return res;
}

/** `/login/oidc` and its callback, or undefined for another path (or without an issuer client). */
export function oidcLogin(
  deps: LoginDeps,
  req: Request,
  client: string,
): Promise<Response> | Response | undefined {
  const path = new URL(req.url).pathname;
  if (path !== OIDC_LOGIN_PATH && path !== OIDC_CALLBACK_PATH) return undefined;
  const oidc = deps.oidc;
  if (!oidc) return signInPage({ note: 'This hub signs in through no issuer.', status: 404 });
  if (path === OIDC_LOGIN_PATH) {
    if (req.method !== 'POST')
      return new Response(null, { status: 405, headers: { allow: 'POST' } });
    // The sign-in page's own form: a browser names the page that posts (the policy checked it is ours).
    if (req.headers.get('origin') === null)
      return signInPage({ ...offer(deps), note: 'Sign in from the console page.', status: 403 });
    return start(deps, oidc, req, client);
  }
  if (req.method !== 'GET') return new Response(null, { status: 405, headers: { allow: 'GET' } });
  return callback(deps, oidc, req);
}
