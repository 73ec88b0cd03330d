/**
 * An owner key read back as the principal it names (what a node's mesh inbox acts for): a token
 * holder, a node, an issuer's user (whose name holds `:` and `#`, and must never read as a token
 * of the issuer's scheme), each in its tenant when the key has one; anything else is anonymous.
 */

import { expect, setDefaultTimeout, test } from 'bun:test';
import { ownerKey, principalOfKey } from '../lib/auth/principal.ts';

setDefaultTimeout(5_000); // per file (Bun scopes it so): pure functions

test('token, node and issuer keys name their principal, and the key made from it is the same', () => {
  const user = 'https://id.example/realms/acme#248289761001';
  expect(principalOfKey('user:alice')).toEqual({ kind: 'token', name: 'alice' });
  expect(principalOfKey('node:crm')).toEqual({ kind: 'node', name: 'crm' });
  expect(principalOfKey(`user:${user}`)).toEqual({
    kind: 'user',
    name: user,
    scopes: ['a2a.read', 'a2a.write'],
  });
  expect(principalOfKey(`tenant:acme/user:${user}`)).toMatchObject({
    kind: 'user',
    tenant: 'acme',
  });
  for (const key of ['user:alice', 'node:crm', `user:${user}`, `tenant:acme/user:${user}`])
    expect(ownerKey(principalOfKey(key))).toBe(key);
});

test('a key that is not an owner key is anonymous', () => {
  for (const key of [undefined, '', 'token:alice', 'user:Alice', 'tenant:/user:a'])
    expect(principalOfKey(key)).toEqual({ kind: 'anonymous' });
});
