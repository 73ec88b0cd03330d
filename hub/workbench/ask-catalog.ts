/**
 * @module hub/workbench/ask-catalog — the tools Ask Agent plans over: the fleet catalog
 * (`resolve.catalog`, a traced call) or, when it does not answer, each online node's public
 * /capabilities; and the hub's own read-only capabilities added to them.
 */

import { isPlainObject } from '../../lib/json/guards.ts';
import type { CapabilityDescriptor } from '../../lib/catalog/catalog.ts';
import type { FleetInvoker } from '../../lib/fleet/invoke.ts';
import {
  isCatalogAnswer,
  isWireDescriptor,
  readFrom,
  type WireDescriptor,
} from './fleet-answers.ts';
import type { CatalogTool } from './ask-planner.ts';

/**
 * The fleet's tools: from the catalog node (`resolve.catalog`, a traced call), or, when it does
 * not answer, from `fallback` (the nodes' own public /capabilities).
 */
export async function loadCatalog(
  invoker: FleetInvoker,
  fallback?: () => Promise<CatalogTool[]>,
): Promise<CatalogTool[] | { error: string }> {
  const r = await readFrom(invoker, 'resolve', 'resolve.catalog', isCatalogAnswer);
  if (!r.ok) {
    const tools = fallback ? await fallback().catch(() => []) : [];
    return tools.length
      ? tools
      : { error: `the fleet catalog (resolve.catalog) is unavailable: ${r.error.code}` };
  }
  return r.result.nodes.flatMap((n) =>
    n.capabilities.filter(isWireDescriptor).map((c) => toolOf(n.node, c)),
  );
}

/** A descriptor from the wire as the planner reads it; a malformed descriptor was left out before. */
const toolOf = (node: string, c: WireDescriptor): CatalogTool => ({
  ...c,
  tags: c.tags ?? [],
  examples: c.examples ?? [],
  keywords: c.keywords ?? [],
  node,
});

/**
 * The tools a question is planned over: the nodes', then the hub's own read-only ones that no node
 * already offers under the same id (the hub's sector.movement only relays scanner's).
 */
export function withOwnTools(
  nodes: CatalogTool[],
  own: { name: string; tools: CapabilityDescriptor[] },
): CatalogTool[] {
  const ids = new Set(nodes.map((t) => t.id));
  return [
    ...nodes,
    ...own.tools.filter((t) => t.readOnly && !ids.has(t.id)).map((t) => ({ ...t, node: own.name })),
  ];
}

/** Reads every online node's public /capabilities (the same declarations its card is made from). */
export function capabilitiesFromNodes(
  nodes: () => Promise<{ name: string; url: string; online: boolean }[]>,
  f: typeof fetch = fetch,
): () => Promise<CatalogTool[]> {
  return async () => {
    const list = (await nodes()).filter((n) => n.online);
    const per = await Promise.all(
      list.map(async (n) => {
        try {
          const res = await f(`${n.url}/capabilities`, { signal: AbortSignal.timeout(2000) });
          const body: unknown = await res.json();
          const listed =
            isPlainObject(body) && Array.isArray(body.capabilities) ? body.capabilities : [];
          return listed.filter(isWireDescriptor).map((c) => toolOf(n.name, c));
        } catch {
          return [];
        }
      }),
    );
    return per.flat();
  };
}
