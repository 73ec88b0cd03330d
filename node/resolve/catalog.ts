/**
 * @module node/resolve/catalog — the fleet's capability catalog, read from the same declarations the
 * nodes serve: each node file listed in the fleet file is imported and its catalog's descriptors
 * and tags are read. Re-read when the fleet file changes, so a new node shows up without a rebuild.
 */

import { statSync } from 'node:fs';
import type { CapabilityDescriptor } from '../../lib/catalog/catalog.ts';
import { loadFleet } from '../../lib/config/fleet-file.ts';
import type { NodeDefinition } from '../../lib/node/node-types.ts';
import { loadNode } from '../../lib/node/load-node.ts';

/** One capability as the catalog shows it: exactly what the node's own descriptors say. */
type CatalogEntry = CapabilityDescriptor;
export interface FleetNodeCatalog {
  node: string;
  role: string;
  /** `a2a+peer`: card, /a2a and the signed channel; `peer`: the signed channel only. */
  transport: 'a2a+peer' | 'peer';
  agentBacked: boolean;
  capabilities: CatalogEntry[];
  /** Set when the node's file could not be loaded; its capabilities are then unknown (empty). */
  error?: string;
}

/** A tool of the agent surface: read-only and taking no arguments. */
export const isSnapshotTool = (c: { readOnly: boolean; args: Record<string, unknown> }) =>
  c.readOnly && Object.keys(c.args).length === 0;

function describeNode(node: string, role: string, def: NodeDefinition): FleetNodeCatalog {
  return {
    node,
    role,
    transport: def.a2a === false ? 'peer' : 'a2a+peer',
    agentBacked:
      typeof def.agentBacked === 'function' ? def.agentBacked() : (def.agentBacked ?? false),
    capabilities: def.catalog.descriptors(),
  };
}

interface FleetCatalogOptions {
  fleetFile: string;
  /** Node files in the fleet file are relative to this folder (the project root). */
  root: string;
  fixturesDir: string;
  /** The resolve node itself: described from its own definition, not re-imported. */
  self: { name: string; definition: () => NodeDefinition };
}

/** Loads every default fleet node's catalog (the hub and opt-in members such as conformance are not nodes of the catalog). */
export function fleetCatalog(opts: FleetCatalogOptions): () => Promise<FleetNodeCatalog[]> {
  let cached: { mtimeMs: number; nodes: Promise<FleetNodeCatalog[]> } | undefined;
  const load = async (): Promise<FleetNodeCatalog[]> => {
    const fleet = await loadFleet(opts.fleetFile);
    return Promise.all(
      fleet.nodes
        .filter((m) => m.default)
        .map(async (m): Promise<FleetNodeCatalog> => {
          if (m.name === opts.self.name)
            return describeNode(m.name, m.role, opts.self.definition());
          try {
            // No data folder: a node built only to be described keeps no state.
            return describeNode(
              m.name,
              m.role,
              await loadNode(
                m.file,
                { fixturesDir: opts.fixturesDir, fleetFile: opts.fleetFile },
                opts.root,
              ),
            );
          } catch (e) {
            // One broken node file must not hide the rest of the fleet.
            const why = e instanceof Error ? e.message : 'unknown error';
            return {
              node: m.name,
              role: m.role,
              transport: 'peer',
              agentBacked: false,
              capabilities: [],
              error: `could not load ${m.file}: ${why}`,
            };
          }
        }),
    );
  };
  return () => {
    const { mtimeMs } = statSync(opts.fleetFile);
    if (!cached || cached.mtimeMs !== mtimeMs) {
      const nodes = load();
      cached = { mtimeMs, nodes };
      // A failed read is not kept: the next call tries again.
      nodes.catch(() => (cached = undefined));
    }
    return cached.nodes;
  };
}
