/**
 * The fleet's AI Catalog and ARD search. In process: what each entry says of its member's card
 * signature (checked by the hub, carried without a check, or absent), how a member of the signed
 * channel only and an offline one are listed, the `skill` / `q` search with its refusals, and the
 * catalog against the published manifest schema (fixtures/ard). Over HTTP against a running hub
 * and fleet: the media type, the schema again, `POST /ard/search` (scored, filtered, paged),
 * `GET /ard/agents`, and ARD's `INVALID_ARGUMENT` for a 1 MB query, 10,000 filters and the rest.
 */

import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { readFileSync } from 'node:fs';
import Ajv2020 from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { aiCatalog, parseCatalogQuery } from '../hub/fleet/ai-catalog.ts';
import type { MemberCard } from '../hub/fleet/cards.ts';
import { FIXTURES } from './support/node.ts';
import { realNodeDefs, startFleet, type RunningFleet } from './support/fleet.ts';

setDefaultTimeout(30_000); // per file (Bun scopes it so): real servers and processes are slow on a busy machine

const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats(ajv);
const validCatalog = ajv.compile(
  JSON.parse(readFileSync(`${FIXTURES}/ard/ai-catalog.schema.json`, 'utf8')),
);
const schemaErrors = (doc: unknown) => (validCatalog(doc) ? [] : validCatalog.errors);

const card = (name: string, skills: string[], signed: boolean) => ({
  name,
  description: `${name} agent`,
  version: '1.0.0',
  skills: skills.map((id) => ({ id, name: id, tags: [id.split('.')[0]] })),
  ...(signed ? { signatures: [{ protected: 'e30', signature: 'AA' }] } : {}),
});
const member = (name: string, extra: Partial<MemberCard>): MemberCard => ({
  name,
  role: `the ${name} role`,
  cardUrl: `http://127.0.0.1:1/${name}/.well-known/agent-card.json`,
  online: true,
  ...extra,
});

const MEMBERS: MemberCard[] = [
  member('checked', {
    card: card('checked', ['sector.movement'], true),
    checked: { state: 'verified', kid: 'k1' },
  }),
  member('forged', {
    card: card('forged', ['crm.industries'], true),
    checked: { state: 'failed', code: 'CARD_BAD_SIGNATURE' },
  }),
  member('carried', {
    card: card('carried', ['exec.submit'], true),
    checked: { state: 'unpinned' },
  }),
  member('plain', { card: card('plain', ['lan.hosts'], false) }),
  member('channel', {
    peer: { url: 'http://127.0.0.1:1/channel/capabilities', skills: ['tsm.health'] },
  }),
  member('gone', { online: false, error: 'unreachable' }),
];
const meta = (e: any, key: string) => e.metadata[`dev.lume-a2a.${key}`];
const members = (c: { entries: any[] }) =>
  c.entries.filter((e) => e.type !== 'application/ai-registry+json');

describe('the AI Catalog', () => {
  test('says verified or invalid only after a check, else what the card carries', () => {
    const c = aiCatalog(MEMBERS, 'http://127.0.0.1:4100', 'a2a');
    expect(
      members(c).map((e) => [
        meta(e, 'node'),
        meta(e, 'signature'),
        meta(e, 'signatureKid') ?? meta(e, 'signatureError') ?? null,
      ]),
    ).toEqual([
      ['checked', 'verified', 'k1'],
      ['forged', 'invalid', 'CARD_BAD_SIGNATURE'],
      ['carried', 'unverified', null],
      ['plain', 'unsigned', null],
      ['channel', 'unsigned', null],
      ['gone', 'unsigned', null],
    ]);
    const [registry, ...entries] = c.entries;
    expect(registry).toMatchObject({
      identifier: 'urn:air:127.0.0.1:a2a-registry',
      type: 'application/ai-registry+json',
      url: 'http://127.0.0.1:4100/ard',
    });
    expect(entries[0]).toMatchObject({
      identifier: 'urn:air:127.0.0.1:checked',
      type: 'application/a2a-agent-card+json',
      version: '1.0.0',
      tags: ['sector'],
      capabilities: ['sector.movement'],
    });
    expect([entries[4]!.type, entries[4]!.url, meta(entries[4], 'transport')]).toEqual([
      'application/json',
      'http://127.0.0.1:1/channel/capabilities',
      'peer',
    ]);
    expect([meta(entries[5], 'online'), entries[5]!.description]).toEqual([false, 'the gone role']);
  });

  test('validates against the published manifest schema; what breaks it is caught', () => {
    const c = aiCatalog(MEMBERS, 'http://[::1]:4100', 'a2a');
    expect(schemaErrors(c)).toEqual([]);
    expect(c.entries[1]!.identifier).toBe('urn:air:--1:checked');
    // A tenant's catalog: the members whose cards list its interfaces, the tenant the URN's namespace.
    const inBilling = MEMBERS.map((m) =>
      m.card && m.name !== 'forged'
        ? {
            ...m,
            card: {
              ...m.card,
              supportedInterfaces: [
                { url: 'x', protocolBinding: 'JSONRPC', protocolVersion: '1.0', tenant: 'billing' },
              ],
            },
          }
        : m,
    );
    const t = aiCatalog(inBilling, 'https://hub.example.com', 'a2a', {}, { tenant: 'billing' });
    expect(schemaErrors(t)).toEqual([]);
    expect(t.entries[1]!.identifier).toBe('urn:air:hub.example.com:billing:checked');
    expect(t.entries.map((e) => e.metadata['dev.lume-a2a.node'])).not.toContain('forged');
    expect(t.entries[1]!.metadata['dev.lume-a2a.tenantBindings']).toBe('JSONRPC');
    // The schema is not a formality: the former shapes fail it.
    expect(schemaErrors({ ...c, specVersion: '0.9' })).not.toEqual([]);
    const withPort = {
      ...c,
      entries: [{ ...c.entries[1], identifier: 'urn:air:127.0.0.1:4100:a2a:crm' }],
    };
    expect(
      schemaErrors({
        ...withPort,
        entries: [{ ...withPort.entries[0], identifier: 'urn:ai:x:y' }],
      }),
    ).not.toEqual([]);
    const nested = {
      ...c,
      entries: [{ ...c.entries[1], metadata: { 'dev.lume-a2a.fleet': { node: 'x' } } }],
    };
    expect(schemaErrors(nested)).not.toEqual([]);
    expect(schemaErrors({ ...c, extensions: {} })).not.toEqual([]);
  });

  test('finds a skill exactly and words anywhere; a malformed query is refused', () => {
    const find = (qs: string) => {
      const q = parseCatalogQuery(new URLSearchParams(qs));
      if (typeof q === 'string') return q;
      return aiCatalog(MEMBERS, 'http://127.0.0.1:4100', 'a2a', q).entries.map((e) =>
        meta(e, 'node'),
      );
    };
    expect(find('skill=exec.submit')).toEqual(['carried']);
    expect(find('skill=exec')).toBe('skill must be a skill id such as sector.movement');
    expect(find('q=TSM')).toEqual(['channel']);
    expect(find('q=the%20role')).toEqual(MEMBERS.map((m) => m.name));
    expect(find('q=role%20forged')).toEqual(['forged']);
    expect(find(`q=${'x'.repeat(201)}`)).toBe('q must be at most 200 characters');
    expect(find('where=1')).toBe('unknown parameter where; use skill or q');
  });
});

describe('the catalog and ARD search on a running hub', () => {
  let f: RunningFleet;
  beforeAll(async () => {
    f = await startFleet(await realNodeDefs(['scanner', 'crm', 'tsm-hub']));
  });
  afterAll(() => f?.stop());

  const search = (body: unknown) =>
    fetch(`${f.hubUrl}/ard/search`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });
  const refusal = async (res: Response) => {
    const b = await res.json();
    return [res.status, b.errorCode, b.error.code];
  };

  test('serves application/ai-catalog+json that the published schema accepts', async () => {
    const res = await fetch(`${f.hubUrl}/.well-known/ai-catalog.json`);
    expect(res.headers.get('content-type')).toBe('application/ai-catalog+json');
    const c = await res.json();
    expect(schemaErrors(c)).toEqual([]);
    expect(members(c).map((e) => meta(e, 'node'))).toEqual([
      'a2a',
      ...f.fleet.nodes.map((n) => n.name),
    ]);
    expect(c.entries[0].url).toBe(`${f.hubUrl}/ard`);
  });

  test('POST /ard/search ranks the members by the text, filters, pages', async () => {
    const res = await search({ query: { text: 'customer follow-up' }, federation: 'none' });
    expect(res.status).toBe(200);
    const page = await res.json();
    expect(page.results[0]).toMatchObject({ displayName: 'crm', source: `${f.hubUrl}/ard` });
    expect(page.results[0].score).toBeGreaterThan(0);
    expect(page.results[0].score).toBeLessThanOrEqual(100);
    expect(page.referrals).toEqual([]);
    for (const r of page.results)
      expect(schemaErrors({ specVersion: '1.0', entries: [r] })).toEqual([]);
    const scores = page.results.map((r: any) => r.score);
    expect(scores).toEqual([...scores].sort((a, b) => b - a));
    // A skill id is a capability: found by its words and filtered exactly.
    const bySkill = await (
      await search({
        query: { text: 'sector movement', filter: { capabilities: 'sector.movement' } },
      })
    ).json();
    expect(bySkill.results.map((r: any) => r.displayName)).toContain('scanner');
    for (const r of bySkill.results) expect(r.capabilities).toContain('sector.movement');
    expect(bySkill.results.map((r: any) => r.displayName)).not.toContain('crm');
    const peerOnly = await (
      await search({ query: { text: 'node', filter: { type: ['application/json'] } } })
    ).json();
    expect(peerOnly.results.map((r: any) => meta(r, 'node'))).toEqual(['tsm-hub']);
    // Paged: one at a time, the token carries on, and belongs to its query only.
    const first = await (await search({ query: { text: 'node' }, pageSize: 1 })).json();
    expect(first.results).toHaveLength(1);
    const second = await (
      await search({ query: { text: 'node' }, pageSize: 1, pageToken: first.pageToken })
    ).json();
    expect(second.results[0].identifier).not.toBe(first.results[0].identifier);
    expect(
      await refusal(await search({ query: { text: 'crm' }, pageToken: first.pageToken })),
    ).toEqual([400, 'INVALID_ARGUMENT', 'INVALID_ARGUMENT']);
  });

  test('GET /ard/agents lists, filters and orders without scores', async () => {
    const all = await (await fetch(`${f.hubUrl}/ard/agents?orderBy=displayName%20DESC`)).json();
    expect(all.total).toBe(4);
    expect(all.items.map((e: any) => e.displayName)).toEqual(
      [...all.items.map((e: any) => e.displayName)].sort().reverse(),
    );
    expect(all.items[0].score).toBeUndefined();
    const filtered = await (
      await fetch(
        `${f.hubUrl}/ard/agents?filter=${encodeURIComponent('type=application/json,application/x AND displayName=TSM')}`,
      )
    ).json();
    expect(filtered.items.map((e: any) => meta(e, 'node'))).toEqual(['tsm-hub']);
    const paged = await (await fetch(`${f.hubUrl}/ard/agents?pageSize=3`)).json();
    expect([paged.items.length, typeof paged.pageToken]).toEqual([3, 'string']);
    const rest = await (
      await fetch(`${f.hubUrl}/ard/agents?pageSize=3&pageToken=${paged.pageToken}`)
    ).json();
    expect([rest.items.length, rest.pageToken]).toEqual([1, undefined]);
    for (const qs of [
      'filter=createdAfter=2026-01-01',
      'orderBy=score',
      'pageSize=0',
      'filter=x',
      'pageToken=zz',
    ])
      expect(await refusal(await fetch(`${f.hubUrl}/ard/agents?${qs}`))).toEqual([
        400,
        'INVALID_ARGUMENT',
        'INVALID_ARGUMENT',
      ]);
  });

  test('a 1 MB query, 10,000 filters and malformed ones are INVALID_ARGUMENT; the hub answers on', async () => {
    const huge = JSON.stringify({ query: { text: 'x'.repeat(1024 * 1024) } });
    const manyKeys = Object.fromEntries(
      Array.from({ length: 10_000 }, (_, i) => [`metadata.k${i}`, 'v']),
    );
    const manyValues = { tags: Array.from({ length: 10_000 }, (_, i) => `t${i}`) };
    for (const body of [
      huge,
      { query: { text: 'crm', filter: manyKeys } },
      { query: { text: 'crm', filter: manyValues } },
      { query: { text: 'x '.repeat(400) } },
      { query: { filter: {} } },
      { query: { text: 'crm', filter: { 'trustManifest.identity': 'x' } } },
      { query: { text: 'crm' }, federation: 'everywhere' },
      { query: { text: 'crm' }, pageSize: 101 },
      { query: { text: 'crm' }, extra: 1 },
      'not json',
    ])
      expect(await refusal(await search(body))).toEqual([
        400,
        'INVALID_ARGUMENT',
        'INVALID_ARGUMENT',
      ]);
    const after = await search({ query: { text: 'crm' } });
    expect(after.status).toBe(200);
  });
});
