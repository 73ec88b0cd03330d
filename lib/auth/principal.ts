/**
 * @module lib/auth/principal — who a request speaks for: a signed fleet node, a bearer token, a console
 * session, a user of a trusted OpenID Connect issuer (its access token), or nobody (anonymous).
 * Every surface turns its proof into one of these, and task ownership and the executor's limits
 * are keyed by `ownerKey`.
 */

/**
 * A user an issuer vouches for: `name` is `<issuer>#<sub>`; `scopes` say what the token lets it
 * do (lib/auth/scopes.ts); `tenants`, when the token names any, the only tenants it may use.
 */
export interface UserPrincipal {
  kind: 'user';
  name: string;
  scopes: readonly string[];
  tenants?: readonly string[];
}

export type Principal = (
  | { kind: 'node'; name: string }
  | { kind: 'token'; name: string; tenants?: readonly string[] }
  | { kind: 'session'; name: string; tenants?: readonly string[] }
  | UserPrincipal
  | { kind: 'anonymous' }
) & {
  /** The tenant a request acts in (lib/node/tenants.ts), when the node serves tenants. */
  tenant?: string;
};

export const ANONYMOUS: Principal = Object.freeze({ kind: 'anonymous' });

/** Token and session names, and node names: lower-case words joined by dashes, at most 32 characters. */
export const PRINCIPAL_NAME = /^[a-z][a-z0-9-]{0,31}$/;
const NAME_BODY = PRINCIPAL_NAME.source.slice(1, -1);

export function isAuthenticated(p: Principal): boolean {
  return p.kind !== 'anonymous';
}

/**
 * The key tasks and jobs are owned under (prefixed `tenant:<t>/` in a tenant). A session is signed in with a token, so a token and a
 * session of the same name are one user (`user:<name>`); an issuer's user is
 * `user:<issuer>#<sub>` (a token name has no `:`, so the two never meet); a node is `node:<name>`.
 */
export function ownerKey(p: Principal): string {
  // A tenant comes first: no owner key of the kit starts with `tenant:`, so none can meet another's.
  return p.tenant === undefined ? baseOwnerKey(p) : `tenant:${p.tenant}/${baseOwnerKey(p)}`;
}

function baseOwnerKey(p: Principal): string {
  switch (p.kind) {
    case 'node':
      return `node:${p.name}`;
    case 'token':
    case 'session':
    case 'user':
      return `user:${p.name}`;
    case 'anonymous':
      return 'anonymous';
  }
}

/** The prefix of an owner key in a tenant: `tenant:<t>/` (a tenant as the `tenants` setting names one). */
const TENANT_PREFIX = /^tenant:([a-z0-9][a-z0-9-]{0,62})\//;

const OWNER_KEY = new RegExp(
  `^(?:${TENANT_PREFIX.source.slice(1)})?(?:(?:node|user):${NAME_BODY}|user:https?://[\\x21-\\x22\\x24-\\x7e]{1,512}#[\\x21-\\x7e]{1,255}|anonymous)$`,
);

/** The tenant an owner key is in, or undefined for an untenanted key. */
export function tenantOfKey(key: string | undefined): string | undefined {
  return key === undefined ? undefined : TENANT_PREFIX.exec(key)?.[1];
}

/** Whether a value is an owner key (what a fleet node may name as the principal it acts for). */
export function isOwnerKey(v: unknown): v is string {
  return typeof v === 'string' && OWNER_KEY.test(v);
}

/**
 * The principal an owner key names: `user:<name>` a token holder (a token and a session of one
 * name are one user), `user:<issuer>#<sub>` an issuer's user, `node:<name>` a node, anything else
 * nobody; in the key's tenant, if any.
 */
export function principalOfKey(key: string | undefined): Principal {
  if (!isOwnerKey(key)) return ANONYMOUS;
  const tenant = tenantOfKey(key);
  const base = tenant === undefined ? key : key.slice(`tenant:${tenant}/`.length);
  if (base === 'anonymous') return ANONYMOUS;
  const colon = base.indexOf(':');
  const kind = base.slice(0, colon);
  const name = base.slice(colon + 1);
  const p: Principal =
    kind === 'node'
      ? { kind: 'node', name }
      : name.includes('#')
        ? // An issuer's user (`<issuer>#<sub>`, never a token name): the hub that names it proved it
          // could send, a state change, so it reads and writes; exec.* it must ask for itself.
          { kind: 'user', name, scopes: ['a2a.read', 'a2a.write'] }
        : { kind: 'token', name };
  return tenant === undefined ? p : { ...p, tenant };
}
