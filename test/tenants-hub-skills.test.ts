/**
 * The hub's own capabilities in a tenant (hub/workbench/skills/in-tenant.ts): `sector.movement`,
 * `customer.reach` and `entity.coverage` run through `/{tenant}/api/hub` call their nodes for the
 * caller in that tenant, so each node's capability sees the owner key `tenant:acme/…`; run outside
 * a tenant, the same calls are the hub's own (no tenant).
 */

import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { capability, defineNode } from '../lib/kit/node.ts';
import { startFleet, type RunningFleet } from './support/fleet.ts';
import { TEST_TOKEN } from './support/node.ts';

setDefaultTimeout(30_000); // per file (Bun scopes it so): a hub and two nodes on a busy machine

/** What each node's capability was called for: `<capability> <owner key or "hub">`. */
const seen: string[] = [];
const seenBy = (id: string, context?: { onBehalfOf?: string }) =>
  seen.push(`${id} ${context?.onBehalfOf ?? 'hub'}`);

const probe = (id: string, answer: Record<string, unknown>) =>
  capability({
    id,
    name: id,
    description: `Answers ${id} and notes whom it was called for`,
    tags: ['test'],
    keywords: [id],
    readOnly: true,
    args: {},
    run: (_args, _signal, context) => {
      seenBy(id, context);
      return { asOf: '2026-01-01', ...answer };
    },
  });

const scanner = defineNode(() => ({
  name: 'scanner',
  description: 'A test scanner',
  capabilities: [
    probe('sector.movement', {
      sectors: [{ sector: 'tech', name: 'Tech', avgChangePct: 1.5, signaled: 1 }],
    }),
    probe('sector.stocks', { stocks: [] }),
  ],
}));
const crm = defineNode(() => ({
  name: 'crm',
  description: 'A test crm',
  capabilities: [
    probe('crm.industries', {
      industries: [{ industry: 'tech', customers: 1, followUp: { new: 1 } }],
    }),
    probe('crm.companies', { companies: [] }),
  ],
}));

let f: RunningFleet;
beforeAll(async () => {
  f = await startFleet([scanner(), crm()], {
    hub: { tenants: ['acme'] },
    nodes: () => ({ tenants: ['acme'] }),
  });
});
afterAll(async () => {
  await f?.stop();
});

const run = async (path: string, skill: string) => {
  seen.length = 0;
  const res = await fetch(`${f.hubUrl}${path}`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${TEST_TOKEN}`,
      origin: f.hubUrl,
      'content-type': 'application/json',
    },
    body: JSON.stringify({ skill, args: {} }),
  });
  expect([skill, res.status]).toEqual([skill, 200]);
  return [...seen].sort();
};

describe("the hub's own capabilities in a tenant", () => {
  test('each call they make reaches the node for the caller in that tenant', async () => {
    expect(await run('/acme/api/hub', 'sector.movement')).toEqual([
      'sector.movement tenant:acme/user:tester',
    ]);
    expect(await run('/acme/api/hub', 'customer.reach')).toEqual([
      'crm.industries tenant:acme/user:tester',
      'sector.movement tenant:acme/user:tester',
    ]);
    expect(await run('/acme/api/hub', 'entity.coverage')).toEqual([
      'crm.companies tenant:acme/user:tester',
      'sector.stocks tenant:acme/user:tester',
    ]);
  });

  test('outside a tenant the calls are the hub’s own', async () => {
    expect(await run('/api/hub', 'sector.movement')).toEqual(['sector.movement hub']);
  });
});
