/**
 * @module node/resolve/queries — resolve's answers over the fleet's catalog (one entry per node, each
 * with its capability descriptors): the nodes, the whole catalog, the agent surface, a lookup by
 * id and a word search.
 */

import { isSnapshotTool, type FleetNodeCatalog } from './catalog.ts';

/** Every capability of the fleet with the node offering it. */
const everyCapability = (nodes: FleetNodeCatalog[]) =>
  nodes.flatMap((n) => n.capabilities.map((c) => ({ node: n.node, ...c })));

/** Each node with counts of its capabilities, read-only ones and snapshot tools. */
export function nodes(all: FleetNodeCatalog[]) {
  const rows = all.map(({ capabilities, ...n }) => ({
    ...n,
    capabilities: capabilities.length,
    readOnly: capabilities.filter((c) => c.readOnly).length,
    snapshotTools: capabilities.filter(isSnapshotTool).length,
  }));
  return { nodes: rows };
}

export function catalog(all: FleetNodeCatalog[]) {
  return { total: all.reduce((n, x) => n + x.capabilities.length, 0), nodes: all };
}

/** The agent surface: read-only, no-argument tools. */
export function tools(all: FleetNodeCatalog[]) {
  const rows = everyCapability(all)
    .filter(isSnapshotTool)
    .map(({ node, id, name, description }) => ({ node, id, name, description }));
  return { total: rows.length, tools: rows };
}

/** Which nodes offer a capability id, with the full descriptor. */
export function capability(all: FleetNodeCatalog[], id: string) {
  const matches = everyCapability(all).filter((c) => c.id === id);
  return { found: matches.length > 0, matches };
}

/** Capabilities whose id, name, description or tags contain every word of the query. */
export function search(all: FleetNodeCatalog[], query: string) {
  const words = query.toLowerCase().split(/\s+/).filter(Boolean);
  const matches = everyCapability(all)
    .filter(
      (c) =>
        words.length &&
        words.every((w) =>
          [c.id, c.name, c.description, ...c.tags].join(' ').toLowerCase().includes(w),
        ),
    )
    .map(({ node, id, name, readOnly }) => ({ node, id, name, readOnly }));
  return { total: matches.length, matches };
}
