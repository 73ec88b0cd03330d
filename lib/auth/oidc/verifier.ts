/**
 * @module lib/auth/oidc/verifier — an OAuth 2 / OpenID Connect access token (a JWT) turned into a
 * principal: the issuer must be one of the trusted ones, the signature must verify with one of its
 * published keys (lib/auth/oidc/key-set.ts), the audience must be the one configured for it, and
 * `exp`/`nbf` must hold within `CLOCK_LEEWAY_S`. The principal is `user:<issuer>#<sub>` with the
 * token's scopes and tenants. Refusals carry a stable code (docs/errors.md), never the token.
 */

import { fail, ok, type Failure, type Result } from '../../errors/result.ts';
import type { UserPrincipal } from '../principal.ts';
import { issuerUrlProblem } from './issuer-url.ts';
import { IssuerKeySet, type KeySetOptions } from './key-set.ts';
import { parseJwt, signatureHolds } from './jwt.ts';

/** Seconds a token's `exp` and `nbf` may be off by (clocks of two machines differ a little). */
const CLOCK_LEEWAY_S = 60;

/** One trusted issuer and the audience its tokens must name for this process. */
export interface TrustedIssuer {
  issuer: string;
  audience: string;
}

export type TokenRefusalCode =
  | 'TOKEN_MALFORMED'
  | 'TOKEN_ALG_REFUSED'
  | 'TOKEN_ISSUER_UNKNOWN'
  | 'TOKEN_KEY_UNKNOWN'
  | 'TOKEN_SIGNATURE_INVALID'
  | 'TOKEN_AUDIENCE'
  | 'TOKEN_EXPIRED'
  | 'TOKEN_NOT_YET_VALID'
  | 'ISSUER_UNAVAILABLE';

export type TokenCheck = Result<UserPrincipal, Failure<TokenRefusalCode>>;

export interface OidcVerifier {
  readonly issuers: readonly TrustedIssuer[];
  /** `also`: audiences accepted besides the issuer's configured one (a resource's own URL, RFC 8707). */
  verify(token: string, also?: readonly string[]): Promise<TokenCheck>;
}

/**
 * Checks the issuer list once, at start: each an https URL (http on loopback only), each with an
 * audience, none twice. @throws Error naming the problem
 */
export function checkIssuers(list: readonly TrustedIssuer[]): TrustedIssuer[] {
  const seen = new Set<string>();
  return list.map(({ issuer, audience }) => {
    const problem = issuerUrlProblem(issuer);
    if (problem) throw new Error(`auth.issuers: ${problem}`);
    if (typeof audience !== 'string' || audience.length === 0 || audience.length > 512)
      throw new Error(`auth.issuers: ${issuer} needs an audience (the resource its tokens name)`);
    if (seen.has(issuer)) throw new Error(`auth.issuers: ${issuer} is listed twice`);
    seen.add(issuer);
    return { issuer, audience };
  });
}

const SUBJECT = /^[\x21-\x7e]{1,255}$/;
const SCOPE = /^[\x21\x23-\x5b\x5d-\x7e]{1,128}$/;
const TENANT = /^[a-z0-9][a-z0-9-]{0,62}$/;

/** `scope` (RFC 9068: space-separated) or `scp` (a list), bounded. */
function scopesOf(claims: Record<string, unknown>): string[] {
  const raw =
    typeof claims.scope === 'string'
      ? claims.scope.split(' ')
      : Array.isArray(claims.scp)
        ? claims.scp
        : [];
  return raw.filter((s): s is string => typeof s === 'string' && SCOPE.test(s)).slice(0, 64);
}

/** The tenants a token names (`tenants`, a list, or `tenant`), or undefined when it names none. */
function tenantsOf(claims: Record<string, unknown>): string[] | undefined {
  const raw = Array.isArray(claims.tenants)
    ? claims.tenants
    : typeof claims.tenant === 'string'
      ? [claims.tenant]
      : undefined;
  return raw?.filter((t): t is string => typeof t === 'string' && TENANT.test(t)).slice(0, 64);
}

export function createOidcVerifier(
  issuers: readonly TrustedIssuer[],
  opts: KeySetOptions & { leewayS?: number } = {},
): OidcVerifier {
  const trusted = checkIssuers(issuers);
  const sets = new Map(trusted.map((t) => [t.issuer, new IssuerKeySet(t.issuer, opts)]));
  const audiences = new Map(trusted.map((t) => [t.issuer, t.audience]));
  const leeway = opts.leewayS ?? CLOCK_LEEWAY_S;
  const now = opts.now ?? Date.now;

  async function verify(token: string, also: readonly string[] = []): Promise<TokenCheck> {
    const jwt = parseJwt(token);
    if ('code' in jwt) return fail(jwt.code, jwt.message);
    const { claims } = jwt;
    const iss = claims.iss;
    const keys = typeof iss === 'string' ? sets.get(iss) : undefined;
    if (typeof iss !== 'string' || !keys)
      return fail('TOKEN_ISSUER_UNKNOWN', 'the token is not from an issuer this node trusts');
    const key = await keys.keyFor(jwt.kid, jwt.alg);
    if (key === 'unavailable')
      return fail(
        'ISSUER_UNAVAILABLE',
        'the token issuer cannot be reached to fetch its keys; try again shortly',
      );
    if (key === 'unknown')
      return fail(
        'TOKEN_KEY_UNKNOWN',
        'the token is signed with a key its issuer does not publish',
      );
    if (!(await signatureHolds(jwt, key)))
      return fail('TOKEN_SIGNATURE_INVALID', 'the token signature does not verify');
    const aud = claims.aud;
    const accepted = [audiences.get(iss)!, ...also];
    if (!accepted.some((a) => aud === a || (Array.isArray(aud) && aud.includes(a))))
      return fail('TOKEN_AUDIENCE', 'the token is meant for another audience');
    const t = now() / 1000;
    if (typeof claims.exp !== 'number') return fail('TOKEN_MALFORMED', 'the token has no exp');
    if (t > claims.exp + leeway) return fail('TOKEN_EXPIRED', 'the token has expired');
    if (claims.nbf !== undefined && (typeof claims.nbf !== 'number' || claims.nbf > t + leeway))
      return fail('TOKEN_NOT_YET_VALID', 'the token is not valid yet');
    if (typeof claims.sub !== 'string' || !SUBJECT.test(claims.sub))
      return fail('TOKEN_MALFORMED', 'the token subject is missing or not printable text');
    const tenants = tenantsOf(claims);
    return ok({
      kind: 'user',
      name: `${iss}#${claims.sub}`,
      scopes: scopesOf(claims),
      ...(tenants ? { tenants } : {}),
    });
  }
  return { issuers: trusted, verify };
}
