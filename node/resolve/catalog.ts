/**
 * @module resolve-catalog — the fleet's capability catalog, read from the same declarations the
 * nodes serve: each node file listed in the fleet file is imported and its catalog's descriptors
 * and tags are read. Re-read when the fleet file changes, so a new node shows up without a rebuild.
 */

import { statSync } from 'node:fs';
import { resolve } from 'node:path';
import type { CapabilityDescriptor } from '../../lib/catalog/catalog.ts';
import { loadFleet } from '../../lib/fleet/invoke.ts';
import type { NodeDefinition } from '../../lib/node/create-node.ts';

/** One capability as the catalog shows it: exactly what the node's own descriptors say. */
export type CatalogEntry = CapabilityDescriptor;
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
export const isSnapshotTool = (c: { readOnly: boolean; args: Record<string, unknown> }) => c.readOnly && Object.keys(c.args).length === 0;

export function describeNode(node: string, role: string, def: NodeDefinition): FleetNodeCatalog {
  return {
    node,
    role,
    transport: def.a2a === false ? 'peer' : 'a2a+peer',
    agentBacked: def.agentBacked ?? false,
    capabilities: def.catalog.descriptors(),
  };
}

export interface FleetCatalogOptions {
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
    return Promise.all(fleet.nodes.filter((m) => m.default).map(async (m) => {
      if (m.name === opts.self.name) return describeNode(m.name, m.role, opts.self.definition());
      try {
        const mod = await import(resolve(opts.root, m.file));
        return describeNode(m.name, m.role, (mod.default as (o: { fixturesDir: string }) => NodeDefinition)({ fixturesDir: opts.fixturesDir }));
      } catch (e) {
        // One broken node file must not hide the rest of the fleet.
        return { node: m.name, role: m.role, transport: 'peer' as const, agentBacked: false, capabilities: [], error: `could not load ${m.file}: ${(e as Error)?.message ?? 'unknown error'}` };
      }
    }));
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
