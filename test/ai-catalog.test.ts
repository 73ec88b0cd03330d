/**
 * The fleet's AI Catalog in process: what each entry says of its member's card signature (checked
 * by the hub, carried without a check, or absent), how a member of the signed channel only and an
 * offline one are listed, and the `skill` / `q` search with its refusals.
 */

import { describe, expect, setDefaultTimeout, test } from 'bun:test';
import { aiCatalog, parseCatalogQuery } from '../hub/fleet/ai-catalog.ts';
import type { MemberCard } from '../hub/fleet/cards.ts';

setDefaultTimeout(20_000); // per file (Bun scopes it so): real servers and processes are slow on a busy machine

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
const ext = (e: any) => e.extensions['dev.lume-a2a.fleet'];

describe('the AI Catalog', () => {
  test('says verified or invalid only after a check, else what the card carries', () => {
    const c = aiCatalog(MEMBERS, 'http://127.0.0.1:4100', 'a2a');
    expect(
      c.entries.map((e) => [
        ext(e).node,
        ext(e).signature,
        ext(e).signatureKid ?? ext(e).signatureError ?? null,
      ]),
    ).toEqual([
      ['checked', 'verified', 'k1'],
      ['forged', 'invalid', 'CARD_BAD_SIGNATURE'],
      ['carried', 'unverified', null],
      ['plain', 'unsigned', null],
      ['channel', 'unsigned', null],
      ['gone', 'unsigned', null],
    ]);
    expect(c.entries[0]).toMatchObject({
      identifier: 'urn:air:127.0.0.1:4100:a2a:checked',
      type: 'application/a2a-agent-card+json',
      version: '1.0.0',
      tags: ['sector'],
    });
    expect([c.entries[4]!.type, c.entries[4]!.url, ext(c.entries[4]).transport]).toEqual([
      'application/json',
      'http://127.0.0.1:1/channel/capabilities',
      'peer',
    ]);
    expect([ext(c.entries[5]).online, c.entries[5]!.description]).toEqual([false, 'the gone role']);
  });

  test('finds a skill exactly and words anywhere; a malformed query is refused', () => {
    const find = (qs: string) => {
      const q = parseCatalogQuery(new URLSearchParams(qs));
      if (typeof q === 'string') return q;
      return aiCatalog(MEMBERS, 'http://127.0.0.1:4100', 'a2a', q).entries.map((e) => ext(e).node);
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
