/**
 * Negotiations kept per caller and per tenant (hub/workbench/negotiation-record.ts): one started
 * through `/{tenant}/api/hub` is listed and read back by its caller in that tenant only; another
 * caller, or the same caller in another tenant or untenanted, does not list it and reading it is
 * NEGOTIATION_NOT_FOUND, the answer a made-up id gets (no hint it exists).
 */

import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { rmSync } from 'node:fs';
import { addToken, TokenBook } from '../lib/auth/tokens.ts';
import { realNodeDefs, startFleet, type RunningFleet } from './support/fleet.ts';
import { TEST_TOKEN, tempDir } from './support/node.ts';

setDefaultTimeout(60_000); // per file (Bun scopes it so): a hub and two nodes on a busy machine

const dir = tempDir('lume-a2a-hub-negotiations-');
let f: RunningFleet;
let alice: string;
let bob: string;

beforeAll(async () => {
  alice = addToken(dir, 'alice');
  bob = addToken(dir, 'bob');
  const book = () => TokenBook.open(dir, { extra: { tester: TEST_TOKEN } });
  f = await startFleet(await realNodeDefs(['scanner', 'crm']), {
    hub: { tokens: book(), tenants: ['acme', 'globex'] },
    nodes: () => ({ tenants: ['acme', 'globex'], access: { tokens: book() } }),
  });
});
afterAll(async () => {
  await f?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const get = (token: string, path: string) =>
  fetch(`${f.hubUrl}${path}`, { headers: { authorization: `Bearer ${token}` } });
const listed = async (token: string, path: string) =>
  ((await (await get(token, path)).json()).negotiations as any[]).map((n) => n.id);
const readBack = async (token: string, path: string) => {
  const res = await get(token, path);
  const body = (await res.json()) as any;
  return [res.status, body.error?.code ?? body.id, body.error?.message?.replace(/neg-\S+/, 'ID')];
};

describe('negotiations per caller and tenant', () => {
  test("the caller reads its own back in its tenant; anyone else gets the made-up id's answer", async () => {
    const res = await fetch(`${f.hubUrl}/acme/api/hub`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${alice}`,
        origin: f.hubUrl,
        'content-type': 'application/json',
      },
      body: JSON.stringify({ skill: 'negotiation.start', args: { customer: 'c-012' } }),
    });
    const started = (await res.json()) as any;
    expect([res.status, started.error]).toEqual([200, undefined]);
    const id = started.result.id as string;
    expect(await listed(alice, '/acme/api/negotiations')).toContain(id);
    expect(await readBack(alice, `/acme/api/negotiations/${id}`)).toEqual([200, id, undefined]);
    const missing = await readBack(alice, '/acme/api/negotiations/neg-20261127000000000-00000000');
    expect(missing[1]).toBe('NEGOTIATION_NOT_FOUND');
    for (const [token, path] of [
      [bob, '/acme/api/negotiations'],
      [alice, '/globex/api/negotiations'],
      [alice, '/api/negotiations'],
    ] as const) {
      expect([path, await listed(token, path)]).toEqual([path, expect.not.arrayContaining([id])]);
      expect(await readBack(token, `${path}/${id}`)).toEqual(missing);
    }
  });
});
