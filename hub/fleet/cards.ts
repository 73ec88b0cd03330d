/**
 * @module hub/fleet/cards — the agent card of every fleet member as the hub reads it (the hub's own
 * from its node; each node's from its `/.well-known/agent-card.json`, at most 256 KiB, within
 * 1.5 s), reused for a few seconds; and what can be said of a card's signature. The MCP resources
 * and the AI Catalog are made from these.
 */

import { readBodyBytes } from '../../lib/body.ts';
import type { Fleet } from '../../lib/fleet/invoke.ts';

export type Card = Record<string, unknown>;

export interface MemberCard {
  name: string;
  role: string;
  cardUrl: string;
  /** The card as it arrived; absent when the member did not answer with one. */
  card?: Card;
  /** Why there is no card. */
  error?: string;
}

/**
 * What is known of a card's signature: `unsigned` (no `signatures`), `unverified` (it carries
 * signatures this hub does not check yet). A verifier of A2A 1.0 §8.4 card signatures adds
 * `verified` and `invalid`.
 */
export type SignatureState = 'unsigned' | 'unverified' | 'verified' | 'invalid';

export function signatureOf(card: Card | undefined): SignatureState {
  const s = card?.signatures;
  return Array.isArray(s) && s.length > 0 ? 'unverified' : 'unsigned';
}

const MAX_CARD_BYTES = 256 * 1024;
export const CARD_PATH = '/.well-known/agent-card.json';

export interface CardReaderDeps {
  fleet: Fleet;
  /** The hub's own card (its node makes it) and where it is served. */
  own: () => { card: Card; baseUrl: string };
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

  async function readOne(m: { name: string; role: string; url: string }): Promise<MemberCard> {
    const cardUrl = `${m.url}${CARD_PATH}`;
    const base = { name: m.name, role: m.role, cardUrl };
    try {
      const res = await f(cardUrl, {
        signal: AbortSignal.timeout(deps.timeoutMs ?? 1_500),
        headers: { accept: 'application/json' },
      });
      const bytes = await readBodyBytes(res, MAX_CARD_BYTES);
      if (res.status !== 200 || !bytes) return { ...base, error: `HTTP ${res.status}` };
      const card: unknown = JSON.parse(new TextDecoder().decode(bytes));
      return card && typeof card === 'object' && !Array.isArray(card)
        ? { ...base, card: card as Card }
        : { ...base, error: 'the card is not a JSON object' };
    } catch (e) {
      return {
        ...base,
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
      card: self.card,
    };
    return [own, ...(await Promise.all(deps.fleet.nodes.map(readOne)))];
  }

  return {
    cards(): Promise<MemberCard[]> {
      if (!cached || now() - cached.at >= ttl) cached = { at: now(), cards: readAll() };
      return cached.cards;
    },
  };
}
