/**
 * @module hub/fleet/ai-catalog — the fleet's AI Catalog (`GET /.well-known/ai-catalog.json`, the
 * shape of the AI Catalog specification 1.0 that a2aproject/A2A#2240 points agent discovery to):
 * one `application/a2a-agent-card+json` entry per fleet member with its card's URL (a member of the
 * signed channel only, which serves no card, is an `application/json` entry for its public
 * `/capabilities`), and in the `dev.lume-a2a.fleet` extension its skills' ids, its transport,
 * whether it answered and what is known of its card's signature. `?skill=<id>` keeps the members
 * offering that skill, `?q=<words>` those whose name, role, description or skills mention every
 * word.
 */

import { signatureOf, type Card, type MemberCard } from './cards.ts';

export const AI_CATALOG_PATH = '/.well-known/ai-catalog.json';
const FLEET_EXTENSION = 'dev.lume-a2a.fleet';

export interface CatalogEntry {
  identifier: string;
  displayName: string;
  type: 'application/a2a-agent-card+json' | 'application/json';
  url: string;
  description: string;
  tags: string[];
  version?: string;
  extensions: {
    [FLEET_EXTENSION]: {
      node: string;
      role: string;
      /** `a2a`: card and A2A; `peer`: the signed peer channel only. */
      transport: 'a2a' | 'peer';
      online: boolean;
      skills: string[];
      signature: ReturnType<typeof signatureOf>;
      /** The key a verified signature was made with, or why a checked one failed. */
      signatureKid?: string;
      signatureError?: string;
    };
  };
}

export interface AiCatalog {
  specVersion: '1.0';
  host: { displayName: string; identifier: string };
  entries: CatalogEntry[];
}

export type CatalogQuery = { skill?: string; q?: string[] };

const SKILL = /^[a-z][a-z0-9-]*(\.[a-z][a-z0-9-]*)+$/;

/** The search a query string asks for, or why it is refused. */
export function parseCatalogQuery(params: URLSearchParams): CatalogQuery | string {
  const out: CatalogQuery = {};
  for (const [key, value] of params) {
    if (key === 'skill') {
      if (!SKILL.test(value) || value.length > 128)
        return 'skill must be a skill id such as sector.movement';
      out.skill = value;
    } else if (key === 'q') {
      if (value.length > 200) return 'q must be at most 200 characters';
      out.q = value.toLowerCase().split(/\s+/).filter(Boolean);
    } else return `unknown parameter ${key.slice(0, 32)}; use skill or q`;
  }
  return out;
}

const skillsOf = (card: Card | undefined): { id: string; name: string; tags: string[] }[] =>
  Array.isArray(card?.skills)
    ? (card.skills as unknown[]).flatMap((s) => {
        if (!s || typeof s !== 'object') return [];
        const o = s as Record<string, unknown>;
        if (typeof o.id !== 'string') return [];
        return [
          {
            id: o.id,
            name: typeof o.name === 'string' ? o.name : o.id,
            tags: Array.isArray(o.tags)
              ? o.tags.filter((t): t is string => typeof t === 'string')
              : [],
          },
        ];
      })
    : [];
const text = (v: unknown) => (typeof v === 'string' ? v : undefined);

function entryOf(m: MemberCard, host: string): { entry: CatalogEntry; haystack: string } {
  const skills = m.peer
    ? m.peer.skills.map((id) => ({ id, name: id, tags: [] }))
    : skillsOf(m.card);
  const description = text(m.card?.description) ?? m.role;
  const version = text(m.card?.version);
  const entry: CatalogEntry = {
    identifier: `urn:air:${host}:a2a:${m.name}`,
    displayName: text(m.card?.name) ?? m.name,
    type: m.peer ? 'application/json' : 'application/a2a-agent-card+json',
    url: m.peer ? m.peer.url : m.cardUrl,
    description,
    tags: [...new Set(skills.flatMap((s) => s.tags))],
    ...(version ? { version } : {}),
    extensions: {
      [FLEET_EXTENSION]: {
        node: m.name,
        role: m.role,
        transport: m.peer ? 'peer' : 'a2a',
        online: m.online,
        skills: skills.map((s) => s.id),
        signature: signatureOf(m.card, m.checked),
        ...(m.checked?.state === 'verified' && m.checked.kid
          ? { signatureKid: m.checked.kid }
          : {}),
        ...(m.checked?.state === 'failed' && m.checked.code
          ? { signatureError: m.checked.code }
          : {}),
      },
    },
  };
  const haystack = [
    m.name,
    m.role,
    description,
    ...skills.flatMap((s) => [s.id, s.name, ...s.tags]),
  ]
    .join(' ')
    .toLowerCase();
  return { entry, haystack };
}

/** The catalog of `members` served from `baseUrl`, narrowed by `query`. */
export function aiCatalog(
  members: MemberCard[],
  baseUrl: string,
  hubName: string,
  query: CatalogQuery = {},
): AiCatalog {
  const host = new URL(baseUrl).host;
  const entries = members
    .map((m) => entryOf(m, host))
    .filter(
      ({ entry, haystack }) =>
        (!query.skill || entry.extensions[FLEET_EXTENSION].skills.includes(query.skill)) &&
        (query.q ?? []).every((w) => haystack.includes(w)),
    )
    .map((e) => e.entry);
  return {
    specVersion: '1.0',
    host: { displayName: `lume-a2a fleet of hub ${hubName}`, identifier: baseUrl },
    entries,
  };
}
