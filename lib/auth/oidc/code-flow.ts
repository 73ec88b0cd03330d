/**
 * @module lib/auth/oidc/code-flow — the authorization code flow with PKCE (RFC 7636, S256) of one
 * client of a trusted issuer (the hub's console): the authorization request, with `state`, `nonce`,
 * the code challenge and the resource the access token is for (RFC 8707), and the code exchanged at
 * the token endpoint (HTTP Basic with the client secret for a confidential client, `client_id`
 * alone for a public one). The endpoints come from the issuer's discovery document, which must
 * name the very issuer and https endpoints (http on loopback only); every fetch is bounded in time
 * and size and follows no redirect. Checking the tokens is the caller's (hub/http/oidc-login.ts).
 */

import { createHash, randomBytes } from 'node:crypto';
import { fail, ok, type Failure, type Result } from '../../errors/result.ts';
import { discoveryUrl, issuerUrlProblem } from './issuer-url.ts';
import { boundedJson, readJson } from './key-set.ts';

/** How long one fetch of discovery or the token endpoint may take (ms). */
const FETCH_TIMEOUT_MS = 5000;
/** How long discovered endpoints are kept before they are read again (ms). */
const ENDPOINTS_TTL_MS = 10 * 60_000;

export interface CodeClient {
  issuer: string;
  clientId: string;
  /** A confidential client's secret; absent: a public client (PKCE alone). Never logged. */
  clientSecret?: string;
  /** The resource (audience) the access token is asked for. */
  resource: string;
  /** The scopes asked for (space-separated; default `openid a2a.read a2a.write`; `openid` always). */
  scope?: string;
}

export type CodeFlowCode =
  | 'OIDC_SIGN_IN_UNAVAILABLE'
  | 'OIDC_SIGN_IN_CODE'
  | 'OIDC_SIGN_IN_REFUSED';

export interface CodeTokens {
  idToken: string;
  accessToken: string;
}

export interface CodeFlow {
  readonly issuer: string;
  readonly clientId: string;
  /** Where to send the browser: the issuer's authorization endpoint with the request. */
  authorizationUrl(p: {
    state: string;
    nonce: string;
    challenge: string;
    redirectUri: string;
  }): Promise<Result<string, Failure<CodeFlowCode>>>;
  /** The code for the ID token and the access token (a code is good once: a second use is `OIDC_SIGN_IN_CODE`). */
  exchange(p: {
    code: string;
    verifier: string;
    redirectUri: string;
  }): Promise<Result<CodeTokens, Failure<CodeFlowCode>>>;
}

/** A PKCE verifier (43 characters of base64url) and its S256 challenge. */
export function newPkce(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

interface Endpoints {
  authorization: string;
  token: string;
  at: number;
}

/** An endpoint of the discovery document: an https URL (http on loopback), else undefined. */
function endpoint(doc: Record<string, unknown>, name: string): string {
  const v = doc[name];
  if (typeof v !== 'string') throw new Error(`the discovery document names no ${name}`);
  const problem = issuerUrlProblem(v);
  if (problem) throw new Error(`${name}: ${problem}`);
  return v;
}

/** An OAuth error code as the issuer sent it, kept to its own characters and length. */
export const oauthError = (v: unknown): string =>
  typeof v === 'string' && /^[\x20-\x21\x23-\x5b\x5d-\x7e]{1,64}$/.test(v) ? v : 'unknown_error';

/** The token request: HTTP Basic for a confidential client, `client_id` in the form for a public one. */
async function postToken(
  doFetch: typeof fetch,
  url: string,
  client: CodeClient,
  form: URLSearchParams,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const headers: Record<string, string> = {
    'content-type': 'application/x-www-form-urlencoded',
    accept: 'application/json',
  };
  if (client.clientSecret !== undefined)
    headers.authorization = `Basic ${btoa(`${encodeURIComponent(client.clientId)}:${encodeURIComponent(client.clientSecret)}`)}`;
  else form.set('client_id', client.clientId);
  const res = await doFetch(url, {
    method: 'POST',
    headers,
    body: form,
    redirect: 'manual',
    signal: AbortSignal.timeout(FETCH_TIMEOUT_MS),
  });
  return { status: res.status, body: await boundedJson(res, url) };
}

export function createCodeFlow(
  client: CodeClient,
  opts: { fetch?: typeof fetch; now?: () => number } = {},
): CodeFlow {
  const doFetch = opts.fetch ?? fetch;
  const now = opts.now ?? Date.now;
  let cached: Endpoints | undefined;
  const asked = (client.scope ?? 'openid a2a.read a2a.write').split(' ').filter(Boolean);
  const scope = (asked.includes('openid') ? asked : ['openid', ...asked]).join(' ');
  const unavailable = (why: string) =>
    fail(
      'OIDC_SIGN_IN_UNAVAILABLE' as const,
      `The issuer cannot be reached or described itself wrongly (${why.slice(0, 160)}); try again shortly.`,
    );

  async function endpoints(): Promise<Endpoints> {
    if (cached && now() - cached.at < ENDPOINTS_TTL_MS) return cached;
    const doc = await readJson(discoveryUrl(client.issuer), {
      fetch: doFetch,
      fetchTimeoutMs: FETCH_TIMEOUT_MS,
    });
    if (doc.issuer !== client.issuer)
      throw new Error('the discovery document names another issuer');
    cached = {
      authorization: endpoint(doc, 'authorization_endpoint'),
      token: endpoint(doc, 'token_endpoint'),
      at: now(),
    };
    return cached;
  }

  return {
    issuer: client.issuer,
    clientId: client.clientId,
    async authorizationUrl(p) {
      let e: Endpoints;
      try {
        e = await endpoints();
      } catch (err) {
        return unavailable((err as Error).message);
      }
      const url = new URL(e.authorization);
      for (const [k, v] of Object.entries({
        response_type: 'code',
        client_id: client.clientId,
        redirect_uri: p.redirectUri,
        scope,
        state: p.state,
        nonce: p.nonce,
        code_challenge: p.challenge,
        code_challenge_method: 'S256',
        resource: client.resource,
      }))
        url.searchParams.set(k, v);
      return ok(url.href);
    },

    async exchange(p) {
      const form = new URLSearchParams({
        grant_type: 'authorization_code',
        code: p.code,
        redirect_uri: p.redirectUri,
        code_verifier: p.verifier,
        resource: client.resource,
      });
      let status: number;
      let body: Record<string, unknown>;
      try {
        ({ status, body } = await postToken(doFetch, (await endpoints()).token, client, form));
      } catch (err) {
        return unavailable((err as Error).message);
      }
      if (status !== 200) {
        const error = oauthError(body.error);
        return error === 'invalid_grant'
          ? fail(
              'OIDC_SIGN_IN_CODE',
              'The issuer refused the code: it was used already or has expired.',
            )
          : fail('OIDC_SIGN_IN_REFUSED', `The issuer refused to issue tokens (${error}).`);
      }
      const { id_token: idToken, access_token: accessToken } = body;
      if (typeof idToken !== 'string' || typeof accessToken !== 'string')
        return fail(
          'OIDC_SIGN_IN_REFUSED',
          'The issuer answered without an ID token and an access token.',
        );
      return ok({ idToken, accessToken });
    },
  };
}
