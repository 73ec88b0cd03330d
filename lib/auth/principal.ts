/**
 * @module lib/auth/principal — who a request speaks for: a signed fleet node, a bearer token, a console
 * session, or nobody (anonymous). Every surface turns its proof into one of these, and task
 * ownership and the executor's limits are keyed by `ownerKey`.
 */

export type Principal =
  | { kind: 'node'; name: string }
  | { kind: 'token'; name: string }
  | { kind: 'session'; name: string }
  | { kind: 'anonymous' };

export const ANONYMOUS: Principal = Object.freeze({ kind: 'anonymous' });

/** Token and session names, and node names: lower-case words joined by dashes, at most 32 characters. */
export const PRINCIPAL_NAME = /^[a-z][a-z0-9-]{0,31}$/;
const NAME_BODY = PRINCIPAL_NAME.source.slice(1, -1);

export function isAuthenticated(p: Principal): boolean {
  return p.kind !== 'anonymous';
}

/**
 * The key tasks and jobs are owned under. A session is signed in with a token, so a token and a
 * session of the same name are one user (`user:<name>`); a node is `node:<name>`.
 */
export function ownerKey(p: Principal): string {
  switch (p.kind) {
    case 'node':
      return `node:${p.name}`;
    case 'token':
    case 'session':
      return `user:${p.name}`;
    case 'anonymous':
      return 'anonymous';
  }
}

const OWNER_KEY = new RegExp(`^(?:(?:node|user):${NAME_BODY}|anonymous)$`);

/** Whether a value is an owner key (what a fleet node may name as the principal it acts for). */
export function isOwnerKey(v: unknown): v is string {
  return typeof v === 'string' && OWNER_KEY.test(v);
}

/**
 * The principal an owner key names: `user:<name>` a token holder (a token and a session of one
 * name are one user), `node:<name>` a node, anything else nobody.
 */
export function principalOfKey(key: string | undefined): Principal {
  if (!isOwnerKey(key) || key === 'anonymous') return ANONYMOUS;
  const [kind, name] = key.split(':') as [string, string];
  return kind === 'node' ? { kind: 'node', name } : { kind: 'token', name };
}
