/**
 * @module hub/mcp/resources — what an MCP client may read besides calling tools: each fleet
 * member's agent card (`lume://card/<name>`) and the recent call trace (`lume://trace`, the newest
 * 100 records, as the console's Agent Process page shows them).
 */

import type { TraceStore } from '../../lib/fleet/trace.ts';
import type { McpResource, ResourceContents } from '../../lib/mcp/protocol.ts';
import type { MemberCard } from '../fleet/cards.ts';

export interface ResourceDeps {
  cards: () => Promise<MemberCard[]>;
  trace: TraceStore;
}

const CARD_PREFIX = 'lume://card/';
const TRACE_URI = 'lume://trace';
const TRACE_ROWS = 100;
const JSON_TYPE = 'application/json';

export function createResources(deps: ResourceDeps) {
  return {
    async list(): Promise<McpResource[]> {
      const cards = (await deps.cards()).filter((c) => c.card);
      return [
        ...cards.map((c) => ({
          uri: `${CARD_PREFIX}${c.name}`,
          name: `${c.name} card`,
          title: `Agent card of ${c.name}`,
          description: c.role,
          mimeType: JSON_TYPE,
        })),
        {
          uri: TRACE_URI,
          name: 'trace',
          title: 'Recent cross-node calls',
          description: `The newest ${TRACE_ROWS} records of the hub's call trace (who called what, outcome, duration)`,
          mimeType: JSON_TYPE,
        },
      ];
    },
    async read(uri: string): Promise<ResourceContents | undefined> {
      if (uri === TRACE_URI)
        return {
          uri,
          mimeType: JSON_TYPE,
          text: JSON.stringify(deps.trace.page({ limit: TRACE_ROWS })),
        };
      if (!uri.startsWith(CARD_PREFIX)) return undefined;
      const name = uri.slice(CARD_PREFIX.length);
      const found = (await deps.cards()).find((c) => c.name === name);
      return found?.card
        ? { uri, mimeType: JSON_TYPE, text: JSON.stringify(found.card) }
        : undefined;
    },
  };
}
