/**
 * @module lib/auth/scopes — what an issuer's access token lets its holder do, by scope. A kit
 * token, a session and a fleet node are not limited by scopes; a user of a trusted issuer is:
 * `a2a.read` reads (tasks, lists, streams, push configs, read-only capabilities), `a2a.write`
 * also changes state (state-changing capabilities, cancel, push configs), `a2a.exec` runs the
 * executor's state-changing capabilities (`exec.*`). docs/security.md has the table.
 */

import type { Principal } from './principal.ts';

export const SCOPES = Object.freeze({
  read: 'a2a.read',
  write: 'a2a.write',
  exec: 'a2a.exec',
});

/** Every scope the card names, in its order. */
export const ALL_SCOPES: readonly string[] = [SCOPES.read, SCOPES.write, SCOPES.exec];

const has = (p: Principal, scope: string) => p.kind !== 'user' || p.scopes.includes(scope);

/** Whether a caller may read at all (any of the scopes lets a user read). */
export function mayRead(p: Principal): boolean {
  return p.kind !== 'user' || ALL_SCOPES.some((s) => p.scopes.includes(s));
}

/** Whether a caller's scopes let it change state in general (the engine's act check adds this). */
export function mayWrite(p: Principal): boolean {
  return has(p, SCOPES.write) || has(p, SCOPES.exec);
}

/** The scope a capability needs: `exec.*` that change state need a2a.exec, others a2a.write, reads a2a.read. */
export function scopeFor(cap: { id: string; readOnly: boolean }): string {
  if (cap.readOnly) return SCOPES.read;
  return cap.id.startsWith('exec.') ? SCOPES.exec : SCOPES.write;
}

/** Whether a caller's scopes let it run a capability. */
export function mayRun(p: Principal, cap: { id: string; readOnly: boolean }): boolean {
  return scopeFor(cap) === SCOPES.read ? mayRead(p) : has(p, scopeFor(cap));
}
