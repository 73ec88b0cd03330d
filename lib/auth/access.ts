/**
 * @module lib/auth/access — one node's access policy: how a request proves who it is (a bearer token
 * from the token book; the hub adds console sessions) and what an anonymous caller may do. Every
 * A2A route of a node asks `authenticate` once; the task engine asks `mayAct` before anything that
 * changes state or runs work. docs/security.md describes the policy surface by surface.
 */

import { fail, ok, type Failure, type Result } from '../errors/result.ts';
import { MAX_TOKEN_BYTES, looksLikeJwt } from './oidc/jwt.ts';
import type { OidcVerifier } from './oidc/verifier.ts';
import { ANONYMOUS, isAuthenticated, type Principal } from './principal.ts';
import { mayWrite } from './scopes.ts';
import type { TokenBook } from './tokens.ts';

/**
 * What an anonymous caller may do on the A2A routes: `read` (the loopback default) lets it read
 * and call read-only capabilities, `none` (the default beyond loopback) refuses it everywhere but
 * the card and health, `all` lets it act too (for the conformance kit; loopback only).
 */
export type AnonymousAccess = 'read' | 'none' | 'all';

/**
 * The principal a request's proof names, or UNAUTHENTICATED for a proof that is presented but
 * wrong (an issuer's token: the message starts with its TOKEN_* code), or ISSUER_UNAVAILABLE
 * (retryable) when a token's issuer cannot be reached for a key not cached.
 */
export type AuthOutcome = Result<Principal, Failure<'UNAUTHENTICATED' | 'ISSUER_UNAVAILABLE'>>;

/** Turns a request's proof into a principal; a proof that is presented but wrong is a refusal. */
export type Authenticate = (req: Request) => AuthOutcome | Promise<AuthOutcome>;

/** What a refused token is logged with: its code and issuer-neutral reason, never the token. */
export type AuthLog = (level: 'warn', msg: string, fields: Record<string, string>) => void;

export interface AccessPolicy {
  authenticate: Authenticate;
  anonymous: AnonymousAccess;
}

/** True for addresses only this machine can reach (a bind address or a Host name). */
export function isLoopbackHost(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  return h === 'localhost' || h === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h);
}

/** Loopback nodes let anonymous callers read; a node others can reach needs a principal everywhere. */
export function defaultAnonymous(host: string): AnonymousAccess {
  return isLoopbackHost(host) ? 'read' : 'none';
}

const BEARER = new RegExp(`^Bearer ([\\x21-\\x7e]{1,${MAX_TOKEN_BYTES}})$`, 'i');

/** `Authorization: Bearer <token>`: the token, undefined without the header, null for another scheme or a malformed value. */
export function bearerOf(req: Request): string | undefined | null {
  const h = req.headers.get('authorization');
  if (h === null) return undefined;
  const m = BEARER.exec(h.trim());
  return m ? m[1]! : null;
}

/** A kit token's principal, with the tenants its token names (lib/node/tenants.ts). */
function tokenPrincipal(tokens: TokenBook, name: string): Principal {
  const tenants = tokens.tenantsOf(name);
  return tenants ? { kind: 'token', name, tenants } : { kind: 'token', name };
}

/**
 * A bearer value: a kit token from the book, or (when issuers are trusted) an issuer's JWT access
 * token. Undefined for a value that is neither; a JWT's refusal is coded and logged without it.
 */
export async function bearerPrincipal(
  token: string,
  tokens: TokenBook | undefined,
  oidc: OidcVerifier | undefined,
  log?: AuthLog,
  audiences?: readonly string[],
): Promise<AuthOutcome> {
  const name = tokens?.verify(token);
  if (name !== undefined) return ok(tokenPrincipal(tokens!, name));
  if (oidc && looksLikeJwt(token)) {
    const checked = await oidc.verify(token, audiences);
    if (checked.ok) return checked;
    const { code, message } = checked.error;
    log?.('warn', 'access token refused', { code });
    return code === 'ISSUER_UNAVAILABLE'
      ? fail('ISSUER_UNAVAILABLE', `${code}: ${message}`)
      : fail('UNAUTHENTICATED', `The bearer token is refused (${code}): ${message}`);
  }
  return fail('UNAUTHENTICATED', 'The bearer token is not valid here');
}

/** Authentication by bearer token alone (every node but the hub): the token book, then trusted issuers. */
export function tokenAuthenticator(
  tokens: TokenBook | undefined,
  oidc?: OidcVerifier,
  log?: AuthLog,
): Authenticate {
  return (req) => {
    const token = bearerOf(req);
    if (token === undefined) return ok(ANONYMOUS);
    if (token === null) return fail('UNAUTHENTICATED', 'The bearer token is not valid here');
    if (!oidc) {
      const name = tokens?.verify(token);
      return name === undefined
        ? fail('UNAUTHENTICATED', 'The bearer token is not valid here')
        : ok(tokenPrincipal(tokens!, name));
    }
    return bearerPrincipal(token, tokens, oidc, log);
  };
}

/** Whether a caller may change state or run work under this policy (an issuer's user: by its scopes). */
export function mayAct(policy: Pick<AccessPolicy, 'anonymous'>, caller: Principal): boolean {
  if (caller.kind === 'user') return mayWrite(caller);
  return isAuthenticated(caller) || policy.anonymous === 'all';
}
