/**
 * @module hub/fleet/cards — the agent card of every fleet member as the hub reads it (the hub's own
 * from its node; each node's from its `/.well-known/agent-card.json`, at most 256 KiB, within
 * 1.5 s), reused for a few seconds; and what can be said of a card's signature. The MCP resources
 * and the AI Catalog are made from these.
 */

import { isPlainObject } from '../../lib/json/guards.ts';
import { readBodyBytes } from '../../lib/body.ts';
import type { Fleet } from '../../lib/config/fleet-file.ts';

export type Card = Record<string, unknown>;

export interface MemberCard {
  name: string;
  role: string;
  cardUrl: string;
  /** Whether the member answered at all. */
  online: boolean;
  /** The card as it arrived; absent when the member did not answer with one. */
  card?: Card;
  /**
   * A member that answers without a card speaks only the signed peer channel: its public
   * `/capabilities` (where it is read, and the skills' ids there).
   */
  peer?: { url: string; skills: string[] };
  /** Why there is no card. */
  error?: string;
  /** The hub's check of the card's signature, when it made one. */
  checked?: CheckedSignature;
}

/** What the hub's own check of a member's card said, when it checks them against its pinned keys. */
export interface CheckedSignature {
  state: 'verified' | 'failed' | 'unpinned';
  kid?: string;
  code?: string;
}

/**
 * What is known of a card's signature: `verified` or `invalid` when the hub checked it against the
 * key it pinned for the member; otherwise `unverified` (it carries signatures nobody here
 * checked) or `unsigned` (no `signatures`). Never `verified` without a check.
 */
export type SignatureState = 'unsigned' | 'unverified' | 'verified' | 'invalid';

export function signatureOf(card: Card | undefined, checked?: CheckedSignature): SignatureState {
  if (checked?.state === 'verified') return 'verified';
  if (checked?.state === 'failed') return 'invalid';
  const s = card?.signatures;
  return Array.isArray(s) && s.length > 0 ? 'unverified' : 'unsigned';
}

const MAX_CARD_BYTES = 256 * 1024;
const CARD_PATH = '/.well-known/agent-card.json';

export interface CardReaderDeps {
  fleet: Fleet;
  /** The hub's own card (its node makes it) and where it is served. */
  own: () => { card: Card; baseUrl: string };
  /** The hub's checks of its members' card signatures, by member name (absent: none made). */
  checks?: () => Promise<ReadonlyMap<string, CheckedSignature | undefined>>;
  fetch?: typeof fetch;
  ttlMs?: number;
  timeoutMs?: number;
  now?: () => number;
}

export function createCardReader(deps: CardReaderDeps) {
  const f = deps.fetch ?? fetch;
  const now = deps.now ?? Date.now;
  const ttl = deps.ttlMs ?? 5_000;
  let cached: { at: number; cards: Promise<MemberCard[]> } | undefined;

  /** A JSON object at `url`: `{status}` with the object when it is one. */
  async function getObject(
    url: string,
    signal: AbortSignal,
  ): Promise<{ status: number; body?: Card }> {
    const res = await f(url, { signal, headers: { accept: 'application/json' } });
    const bytes = await readBodyBytes(res, MAX_CARD_BYTES);
    if (res.status !== 200 || !bytes) return { status: res.status };
    try {
      const v: unknown = JSON.parse(new TextDecoder().decode(bytes));
      return isPlainObject(v) ? { status: 200, body: v as Card } : { status: 200 };
    } catch {
      return { status: 200 };
    }
  }

  async function readOne(m: { name: string; role: string; url: string }): Promise<MemberCard> {
    const cardUrl = `${m.url}${CARD_PATH}`;
    const base = { name: m.name, role: m.role, cardUrl };
    const signal = AbortSignal.timeout(deps.timeoutMs ?? 1_500);
    try {
      const card = await getObject(cardUrl, signal);
      if (card.body) return { ...base, online: true, card: card.body };
      // No card: a member of the signed channel only still lists what it offers.
      const capsUrl = `${m.url}/capabilities`;
      const caps = await getObject(capsUrl, signal);
      const listed = Array.isArray(caps.body?.capabilities)
        ? (caps.body.capabilities as unknown[])
        : [];
      const skills = listed.flatMap((c) =>
        c && typeof c === 'object' && typeof (c as Card).id === 'string'
          ? [(c as Card).id as string]
          : [],
      );
      return caps.body
        ? { ...base, online: true, peer: { url: capsUrl, skills } }
        : { ...base, online: true, error: `no card (HTTP ${card.status})` };
    } catch (e) {
      return {
        ...base,
        online: false,
        error: (e as Error).name === 'TimeoutError' ? 'no answer in time' : 'unreachable',
      };
    }
  }

  async function readAll(): Promise<MemberCard[]> {
    const hub = deps.fleet.hub;
    const self = deps.own();
    const own: MemberCard = {
      name: hub.name,
      role: hub.role,
      cardUrl: `${self.baseUrl}${CARD_PATH}`,
      online: true,
      card: self.card,
    };
    const [members, checks] = await Promise.all([
      Promise.all(deps.fleet.nodes.map(readOne)),
      deps.checks?.().catch(() => undefined),
    ]);
    const withChecks = members.map((m) => {
      const checked = checks?.get(m.name);
      return checked ? { ...m, checked } : m;
    });
    return [own, ...withChecks];
  }

  return {
    /** Drops the cached cards: the fleet changed. */
    invalidate(): void {
      cached = undefined;
    },
    cards(): Promise<MemberCard[]> {
      if (!cached || now() - cached.at >= ttl) cached = { at: now(), cards: readAll() };
      return cached.cards;
    },
  };
}
