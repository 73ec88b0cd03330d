/**
 * @module hub/fleet/ai-catalog — the fleet's AI Catalog (`GET /.well-known/ai-catalog.json`,
 * `application/ai-catalog+json`, the catalog manifest of the Agentic Resource Discovery
 * specification v0.9 and its published JSON Schema): one `application/a2a-agent-card+json` entry
 * per fleet member with its card's URL (a member of the signed channel only, which serves no card,
 * is an `application/json` entry for its public `/capabilities`), its skills' ids as
 * `capabilities`, and in `metadata` (scalar values, `dev.lume-a2a.*` keys) its role, transport,
 * whether it answered and what is known of its card's signature; plus one
 * `application/ai-registry+json` entry naming the fleet's ARD search. Identifiers follow
 * `urn:air:{publisher}:{name}` (`{publisher}` the host name the hub is reached at). `?skill=<id>`
 * keeps the members offering that skill, `?q=<words>` those whose name, role, description or skills
 * mention every word. A hub that serves tenants serves one catalog per tenant as well
 * (`/{tenant}/.well-known/ai-catalog.json`): the members whose cards list interfaces in that
 * tenant, each entry naming the tenant and those interfaces' bindings in `metadata`.
 */

import { signatureOf, type Card, type MemberCard } from './cards.ts';

export const AI_CATALOG_PATH = '/.well-known/ai-catalog.json';
export const AI_CATALOG_MEDIA_TYPE = 'application/ai-catalog+json';
/** The one value the published schema allows (`specVersion: enum ["1.0"]`). */
const SPEC_VERSION = '1.0';
/** Where the fleet's ARD search is served (`/ard/search`, `/ard/agents`). */
export const ARD_BASE_PATH = '/ard';
const META = 'dev.lume-a2a.';

/** A metadata value, as the published schema allows them (scalars only). */
type Scalar = string | number | boolean | null;

export interface CatalogEntry {
  identifier: string;
  displayName: string;
  type: 'application/a2a-agent-card+json' | 'application/json' | 'application/ai-registry+json';
  url: string;
  description: string;
  tags: string[];
  /** The member's skills' ids. */
  capabilities: string[];
  version?: string;
  metadata: Record<string, Scalar>;
}

export interface AiCatalog {
  specVersion: typeof SPEC_VERSION;
  host: { displayName: string; identifier: string };
  entries: CatalogEntry[];
}

export type CatalogQuery = { skill?: string; q?: string[] };

/**
 * Whose catalog it is: the whole fleet's, or one tenant's (made from the members that serve the
 * tenant, its identifiers carrying the tenant as the URN's namespace,
 * `urn:air:{publisher}:{tenant}:{name}`, and its host naming it).
 */
export interface CatalogScope {
  tenant?: string;
}

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

/**
 * The URN's `{publisher}`: the host name the hub is reached at (a domain name, or an address; an
 * IPv6 literal is written with `-` for `:` so it stays one segment of the grammar).
 */
function publisherOf(baseUrl: string): string {
  const host = new URL(baseUrl).hostname.replace(/^\[|\]$/g, '').toLowerCase();
  const safe = host.replace(/[^a-z0-9.-]/g, '-');
  return safe || 'localhost';
}

/** A URN segment: the characters the grammar allows, anything else written as `-`. */
const segment = (s: string) => s.replace(/[^a-zA-Z0-9._-]/g, '-') || '-';

function identifierOf(publisher: string, name: string, scope: CatalogScope = {}): string {
  const ns = scope.tenant ? `${segment(scope.tenant)}:` : '';
  return `urn:air:${publisher}:${ns}${segment(name)}`;
}

export interface MemberSkill {
  id: string;
  name: string;
  tags: string[];
}

const skillsOf = (card: Card | undefined): MemberSkill[] =>
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

/** An entry with the words it is found by (name, role, description, skills and their tags). */
export interface IndexedEntry {
  entry: CatalogEntry;
  /** Lower-case words by weight: the member's name and skills 3, tags 2, the rest 1. */
  words: { strong: string; tags: string; weak: string };
}

/** The bindings of a card's interfaces in `tenant` (`JSONRPC HTTP+JSON GRPC`), none when it lists none. */
function tenantBindings(card: Card | undefined, tenant: string): string[] {
  const list = card?.supportedInterfaces;
  if (!Array.isArray(list)) return [];
  return list.flatMap((i) => {
    const o = (i ?? {}) as { tenant?: unknown; protocolBinding?: unknown };
    return o.tenant === tenant && typeof o.protocolBinding === 'string' ? [o.protocolBinding] : [];
  });
}

/** The members in a catalog's scope: every member, or those whose cards list the tenant's interfaces. */
function membersIn(members: MemberCard[], scope: CatalogScope): MemberCard[] {
  const { tenant } = scope;
  return tenant === undefined
    ? members
    : members.filter((m) => tenantBindings(m.card, tenant).length > 0);
}

function entryOf(m: MemberCard, publisher: string, scope: CatalogScope): IndexedEntry {
  const skills = m.peer
    ? m.peer.skills.map((id) => ({ id, name: id, tags: [] }))
    : skillsOf(m.card);
  const description = text(m.card?.description) ?? m.role;
  const version = text(m.card?.version);
  const tags = [...new Set(skills.flatMap((s) => s.tags))];
  const signature = signatureOf(m.card, m.checked);
  const entry: CatalogEntry = {
    identifier: identifierOf(publisher, m.name, scope),
    displayName: text(m.card?.name) ?? m.name,
    type: m.peer ? 'application/json' : 'application/a2a-agent-card+json',
    url: m.peer ? m.peer.url : m.cardUrl,
    description,
    tags,
    capabilities: skills.map((s) => s.id),
    ...(version ? { version } : {}),
    metadata: {
      [`${META}node`]: m.name,
      [`${META}role`]: m.role,
      /** `a2a`: card and A2A; `peer`: the signed peer channel only. */
      [`${META}transport`]: m.peer ? 'peer' : 'a2a',
      [`${META}online`]: m.online,
      [`${META}signature`]: signature,
      // The key a verified signature was made with, or why a checked one failed.
      ...(m.checked?.state === 'verified' && m.checked.kid
        ? { [`${META}signatureKid`]: m.checked.kid }
        : {}),
      ...(m.checked?.state === 'failed' && m.checked.code
        ? { [`${META}signatureError`]: m.checked.code }
        : {}),
      // In a tenant's catalog: the tenant a client names in its requests, and where it may.
      ...(scope.tenant !== undefined
        ? {
            [`${META}tenant`]: scope.tenant,
            [`${META}tenantBindings`]: tenantBindings(m.card, scope.tenant).join(' '),
          }
        : {}),
    },
  };
  const lower = (xs: string[]) => xs.join(' ').toLowerCase();
  return {
    entry,
    words: {
      strong: lower([m.name, entry.displayName, ...skills.flatMap((s) => [s.id, s.name])]),
      tags: lower(tags),
      weak: lower([m.role, description]),
    },
  };
}

/** Every member's entry, indexed for search (the catalog and ARD search read the same entries). */
export function indexMembers(
  members: MemberCard[],
  baseUrl: string,
  scope: CatalogScope = {},
): IndexedEntry[] {
  const publisher = publisherOf(baseUrl);
  return membersIn(members, scope).map((m) => entryOf(m, publisher, scope));
}

/** The entry that names the fleet's ARD search (`application/ai-registry+json`). */
function registryEntry(baseUrl: string, hubName: string, scope: CatalogScope): CatalogEntry {
  return {
    identifier: identifierOf(publisherOf(baseUrl), `${hubName}-registry`, scope),
    displayName: `lume-a2a fleet search (hub ${hubName})`,
    type: 'application/ai-registry+json',
    url: `${baseUrl}${scope.tenant !== undefined ? `/${scope.tenant}` : ''}${ARD_BASE_PATH}`,
    description: "Agentic Resource Discovery search over this fleet's members and skills",
    tags: ['registry'],
    capabilities: [],
    metadata: {
      [`${META}federation`]: 'none',
      ...(scope.tenant !== undefined ? { [`${META}tenant`]: scope.tenant } : {}),
    },
  };
}

/** The catalog of `members` served from `baseUrl`, narrowed by `query`. */
export function aiCatalog(
  members: MemberCard[],
  baseUrl: string,
  hubName: string,
  query: CatalogQuery = {},
  scope: CatalogScope = {},
): AiCatalog {
  const narrowed = query.skill !== undefined || query.q !== undefined;
  const entries = indexMembers(members, baseUrl, scope)
    .filter(
      ({ entry, words }) =>
        (!query.skill || entry.capabilities.includes(query.skill)) &&
        (query.q ?? []).every((w) => `${words.strong} ${words.tags} ${words.weak}`.includes(w)),
    )
    .map((e) => e.entry);
  const tenant = scope.tenant ? `, tenant ${scope.tenant}` : '';
  return {
    specVersion: SPEC_VERSION,
    host: { displayName: `lume-a2a fleet of hub ${hubName}${tenant}`, identifier: baseUrl },
    entries: narrowed ? entries : [registryEntry(baseUrl, hubName, scope), ...entries],
  };
}
