/**
 * The hub's workbench through its HTTP API, on the real fleet on port 0: Customer Ops ranked
 * against hand-computed fixture numbers, Ask Agent over POST /api/ask, entity resolution and
 * coverage, and negotiations started, recorded and listed.
 */

import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { realNodeDefs, startFleet, type RunningFleet } from './support/fleet.ts';
import { TEST_AUTH } from './support/node.ts';

setDefaultTimeout(20_000); // per file (Bun scopes it so): real servers and processes are slow on a busy machine

let f: RunningFleet;
beforeAll(async () => {
  f = await startFleet(await realNodeDefs());
});
afterAll(() => f.stop());

const post = async (path: string, body: unknown) => {
  const res = await fetch(`${f.hubUrl}${path}`, {
    method: 'POST',
    headers: { Origin: f.hubUrl, 'Content-Type': 'application/json', ...TEST_AUTH },
    body: JSON.stringify(body),
  });
  return { status: res.status, json: (await res.json()) as any };
};

describe('Customer Ops', () => {
  test('ranks the rising sectors that have open crm customers, with the numbers and a reason', async () => {
    const r = await post('/api/hub', { skill: 'customer.reach' });
    expect(r.status).toBe(200);
    // By hand from fixtures/scanner/sectors.json (average change of each sector's stocks, stocks
    // with a signal) and fixtures/crm/companies.json (customers per industry that are new,
    // contacted or in follow-up). Falling sectors (consumer, new-energy, steel) are left out.
    expect(
      r.json.result.recommendations.map((x: any) => [
        x.rank,
        x.industry,
        x.avgChangePct,
        x.signaledStocks,
        x.openCustomers,
        x.inFollowUp,
      ]),
    ).toEqual([
      [1, 'robotics', 7, 2, 2, 1],
      [2, 'software', 5.87, 2, 3, 2],
      [3, 'semiconductors', 3.93, 3, 5, 2],
      [4, 'pharma', 0.47, 1, 3, 1],
      [5, 'banking', 0.17, 0, 3, 2],
    ]);
    expect(r.json.result.recommendations[0].why).toBe(
      'Robotics & Automation is up 7% today with 2 signaled stock(s); 2 open customer(s) there, 1 in follow-up',
    );
    const trace = (await (await fetch(`${f.hubUrl}/api/trace?limit=2`)).json()).records;
    expect(trace.map((x: any) => `${x.to}/${x.capability}`).sort()).toEqual([
      'crm/crm.industries',
      'scanner/sector.movement',
    ]);
  });
});

describe('Ask Agent over HTTP', () => {
  test('POST /api/ask answers with facts and trace ids; bad bodies are refused', async () => {
    const r = await post('/api/ask', { question: 'What is the DNS setup of the LAN?' });
    expect(r.json.answered).toBe(true);
    expect(r.json.facts.map((x: any) => `${x.node}/${x.tool}`)).toContain('lan/lan.dns');
    expect(typeof r.json.facts[0].traceId).toBe('number');
    expect((await post('/api/ask', { question: '' })).status).toBe(400);
    expect((await post('/api/ask', { q: 'x' })).status).toBe(400);
  });
});

describe('Entity Alignment', () => {
  test('entity.resolve answers matched, ambiguous and unmatched', async () => {
    const byCode = await post('/api/hub', { skill: 'entity.resolve', args: { code: '688981' } });
    expect(byCode.json.result.status).toBe('matched');
    const unknown = await post('/api/hub', { skill: 'entity.resolve', args: { code: '999999' } });
    expect(unknown.json.result.status).toBe('unmatched');
    const bad = await post('/api/hub', { skill: 'entity.resolve', args: { code: 1 } });
    expect([bad.status, bad.json.error.code]).toEqual([400, 'BAD_ARGS']);
  });

  test('entity.coverage lists every kind of gap the fixtures hold', async () => {
    const r = await post('/api/hub', { skill: 'entity.coverage' });
    const kinds = new Set(r.json.result.gaps.map((g: any) => g.kind));
    expect([...kinds].sort()).toEqual([
      'ambiguous-name',
      'bad-check-digit',
      'no-uscc',
      'stock-not-on-scanner',
      'stock-without-entity',
    ]);
  });
});

describe('A2A Negotiation', () => {
  test('one customer reaches a deal, the other ends with coded vetoes; both are recorded and listed', async () => {
    const started = await post('/api/hub', {
      skill: 'negotiation.start',
      args: { customer: 'c-012' },
    });
    expect(started.json.error).toBeUndefined();
    const deal = started.json.result;
    const noDeal = (
      await post('/api/hub', { skill: 'negotiation.start', args: { customer: 'c-014' } })
    ).json.result;
    expect([deal.outcome, noDeal.outcome]).toEqual(['deal', 'no-deal']);
    expect(noDeal.vetoes.length).toBeGreaterThan(0);
    expect(noDeal.vetoes.every((v: any) => /^[A-Z_]+$/.test(v.code) && v.reason.length > 0)).toBe(
      true,
    );
    const listed = (
      await (await fetch(`${f.hubUrl}/api/negotiations`, { headers: TEST_AUTH })).json()
    ).negotiations.map((n: any) => n.id);
    expect(listed).toEqual(expect.arrayContaining([deal.id, noDeal.id]));
    const read = await (
      await fetch(`${f.hubUrl}/api/negotiations/${noDeal.id}`, { headers: TEST_AUTH })
    ).json();
    expect(read.contextId).toBe(noDeal.contextId);
    expect((await fetch(`${f.hubUrl}/api/negotiations/..%2F..%2Fetc%2Fpasswd`)).status).toBe(404);
  });
});
