/**
 * @module lib/auth/access — one node's access policy: how a request proves who it is (a bearer token
 * from the token book; the hub adds console sessions) and what an anonymous caller may do. Every
 * A2A route of a node asks `authenticate` once; the task engine asks `mayAct` before anything that
 * changes state or runs work. docs/security.md describes the policy surface by surface.
 */

import { fail, ok, type Failure, type Result } from '../errors/result.ts';
import { ANONYMOUS, isAuthenticated, type Principal } from './principal.ts';
import type { TokenBook } from './tokens.ts';

/**
 * What an anonymous caller may do on the A2A routes: `read` (the loopback default) lets it read
 * and call read-only capabilities, `none` (the default beyond loopback) refuses it everywhere but
 * the card and health, `all` lets it act too (for the conformance kit; loopback only).
 */
export type AnonymousAccess = 'read' | 'none' | 'all';

/** The principal a request's proof names, or UNAUTHENTICATED for a proof that is presented but wrong. */
export type AuthOutcome = Result<Principal, Failure<'UNAUTHENTICATED'>>;

/** Turns a request's proof into a principal; a proof that is presented but wrong is a refusal. */
export type Authenticate = (req: Request) => AuthOutcome;

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

/** `Authorization: Bearer <token>`: the token, undefined without the header, null for another scheme or a malformed value. */
export function bearerOf(req: Request): string | undefined | null {
  const h = req.headers.get('authorization');
  if (h === null) return undefined;
  const m = /^Bearer ([\x21-\x7e]{1,256})$/i.exec(h.trim());
  return m ? m[1]! : null;
}

/** Authentication by bearer token alone (every node but the hub). */
export function tokenAuthenticator(tokens: TokenBook | undefined): Authenticate {
  return (req) => {
    const token = bearerOf(req);
    if (token === undefined) return ok(ANONYMOUS);
    const name = token === null ? undefined : tokens?.verify(token);
    return name === undefined
      ? fail('UNAUTHENTICATED', 'The bearer token is not valid here')
      : ok({ kind: 'token', name });
  };
}

/** Whether a caller may change state or run work under this policy. */
export function mayAct(policy: Pick<AccessPolicy, 'anonymous'>, caller: Principal): boolean {
  return isAuthenticated(caller) || policy.anonymous === 'all';
}
