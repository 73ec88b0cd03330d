/**
 * The fleet's fixtures agree across nodes, as the entity-alignment page expects: crm's industries
 * are scanner's sectors, stock codes link the two, USCC codes are valid, and the only mismatches
 * are the gaps fixtures/README.md documents.
 */

import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { isValidUscc } from '../lib/domain/uscc.ts';
import { startFleet, type RunningFleet } from './support/fleet-nodes.ts';
import { FIXTURES } from './support/node.ts';

setDefaultTimeout(20_000); // per file (Bun scopes it so): real servers and processes are slow on a busy machine

const crm = await Bun.file(`${FIXTURES}/crm/companies.json`).json();
const scanner = await Bun.file(`${FIXTURES}/scanner/sectors.json`).json();
const readme = await Bun.file(`${FIXTURES}/README.md`).text();
const sectorOf = new Map<string, string>(
  scanner.sectors.flatMap((s: any) => s.stocks.map((st: any) => [st.code, s.id])),
);
const companies: any[] = crm.companies;

/** The gaps fixtures/README.md documents. */
const GAPS = {
  scannerOnly: ['300274', '000898', '002747'],
  crmOnly: ['600703'],
  badUscc: ['c-025'],
  noUscc: ['c-027'],
  /** Two companies in different cities under the same trade name. */
  sameName: ['c-022', 'c-023'],
};

test('crm industries are exactly scanner sector ids, and every company has one', () => {
  expect(crm.industries.map((i: any) => i.id)).toEqual(scanner.sectors.map((s: any) => s.id));
  expect(companies.filter((c) => !crm.industries.some((i: any) => i.id === c.industry))).toEqual(
    [],
  );
});

test('stock codes link crm and scanner in the same sector, except the documented gaps', () => {
  const linked = companies.filter((c) => c.stockCode);
  expect(linked.filter((c) => !sectorOf.has(c.stockCode)).map((c) => c.stockCode)).toEqual(
    GAPS.crmOnly,
  );
  expect(
    linked.filter((c) => sectorOf.has(c.stockCode) && sectorOf.get(c.stockCode) !== c.industry),
  ).toEqual([]);
  const known = new Set(linked.map((c) => c.stockCode));
  expect([...sectorOf.keys()].filter((code) => !known.has(code))).toEqual(GAPS.scannerOnly);
  expect(new Set(linked.map((c) => c.stockCode)).size).toBe(linked.length);
});

test('every USCC is 18 characters, unique and valid, except the documented bad and missing ones', () => {
  expect(companies.filter((c) => c.uscc === undefined).map((c) => c.id)).toEqual(GAPS.noUscc);
  const coded = companies.filter((c) => c.uscc !== undefined);
  expect(coded.every((c) => typeof c.uscc === 'string' && c.uscc.length === 18)).toBe(true);
  expect(new Set(coded.map((c) => c.uscc)).size).toBe(coded.length);
  expect(coded.filter((c) => !isValidUscc(c.uscc)).map((c) => c.id)).toEqual(GAPS.badUscc);
});

test('names differ once the city and the legal suffix are set aside, except the documented pair', () => {
  const core = (c: any) =>
    c.name
      .replace(new RegExp(`^${c.city}\\s+`), '')
      .replace(/\s+(Co\.,\s*Ltd\.|Ltd\.|Corp\.|Inc\.)$/, '')
      .toLowerCase();
  const byCore = Map.groupBy(companies, core);
  expect(
    [...byCore.values()].filter((g) => g.length > 1).map((g) => g.map((c: any) => c.id)),
  ).toEqual([GAPS.sameName]);
});

test('fixtures/README.md documents each gap', () => {
  const bad = companies.find((c) => c.id === GAPS.badUscc[0]);
  for (const mention of [
    ...GAPS.scannerOnly,
    ...GAPS.crmOnly,
    ...GAPS.badUscc,
    bad.uscc,
    ...GAPS.noUscc,
    ...GAPS.sameName,
  ])
    expect([mention, readme.includes(`\`${mention}\``)]).toEqual([mention, true]);
});

describe('the hub-side join', () => {
  let f: RunningFleet;
  beforeAll(async () => {
    f = await startFleet();
  });
  afterAll(() => f.dispose());

  test('through the signed channel, each sector scanner reports has its customers at crm', async () => {
    const movement = await f.hub.peerFetch('scanner', 'sector.movement', {});
    if (!movement.ok) throw new Error(movement.error.message);
    for (const { sector } of (movement.result as any).sectors) {
      const customers = await f.hub.peerFetch('crm', 'crm.industry', { industry: sector });
      expect([sector, customers.ok && (customers.result as any).customers.length > 0]).toEqual([
        sector,
        true,
      ]);
    }
    const stock = await f.hub.peerFetch('scanner', 'stock.quote', { code: '600036' });
    const cmb = companies.find((c) => c.stockCode === '600036');
    const company = await f.hub.peerFetch('crm', 'crm.company', { uscc: cmb.uscc });
    expect([(stock as any).result.stock.sector, (company as any).result.company.industry]).toEqual([
      'banking',
      'banking',
    ]);
  });
});
