/**
 * @module node/resolve/catalog — the fleet's capability catalog, read from the same declarations the
 * nodes serve: each node file listed in the fleet file is imported and its catalog's descriptors
 * and tags are read; a member run elsewhere (joined, or added with `fleet add`) is read from its
 * public `/capabilities`. Re-read when the fleet file changes (the one the hub writes joins to,
 * once it exists), so a member that joins shows up without a restart, and again after
 * `REMOTE_RETRY_MS` while a member run elsewhere did not answer.
 */

import { existsSync, statSync } from 'node:fs';
import type { CapabilityDescriptor } from '../../lib/catalog/catalog.ts';
import { loadFleet, type FleetMember } from '../../lib/config/fleet-file.ts';
import { wireDescriptorsOf } from '../../lib/catalog/wire-descriptor.ts';
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

/** How long a catalog with an unanswered member run elsewhere is kept before it is read again. */
const REMOTE_RETRY_MS = 2_000;

/** A member run elsewhere, described by what its public `/capabilities` lists. */
async function describeRemote(m: FleetMember, f: typeof fetch): Promise<FleetNodeCatalog> {
  const base = { node: m.name, role: m.role, transport: 'a2a+peer' as const, agentBacked: false };
  try {
    const res = await f(`${m.url}/capabilities`, { signal: AbortSignal.timeout(2000) });
    const listed = res.ok ? wireDescriptorsOf(await res.json()) : undefined;
    if (listed)
      return {
        ...base,
        capabilities: listed.map((c) => ({ tags: [], examples: [], keywords: [], ...c })),
      };
    return { ...base, capabilities: [], error: `${m.url}/capabilities answered ${res.status}` };
  } catch (e) {
    const why = e instanceof Error ? e.name : 'unknown error';
    return { ...base, capabilities: [], error: `${m.url}/capabilities did not answer (${why})` };
  }
}

interface FleetCatalogOptions {
  /** The fleet file read at start, and the one joins are written to (followed once it exists). */
  fleetFile: string;
  followed?: string;
  fetch?: typeof fetch;
  /** Node files in the fleet file are relative to this folder (the project root). */
  root: string;
  fixturesDir: string;
  /** The resolve node itself: described from its own definition, not re-imported. */
  self: { name: string; definition: () => NodeDefinition };
}

/** Loads every default fleet node's catalog (the hub and opt-in members such as conformance are not nodes of the catalog). */
export function fleetCatalog(opts: FleetCatalogOptions): () => Promise<FleetNodeCatalog[]> {
  let cached: { key: string; until: number; nodes: Promise<FleetNodeCatalog[]> } | undefined;
  const f = opts.fetch ?? fetch;
  const load = async (file: string): Promise<FleetNodeCatalog[]> => {
    const fleet = await loadFleet(file);
    return Promise.all(
      fleet.nodes
        .filter((m) => m.default)
        .map(async (m): Promise<FleetNodeCatalog> => {
          if (m.name === opts.self.name)
            return describeNode(m.name, m.role, opts.self.definition());
          if (m.remote) return describeRemote(m, f);
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
    const file = opts.followed && existsSync(opts.followed) ? opts.followed : opts.fleetFile;
    const key = `${file} ${statSync(file).mtimeMs}`;
    if (!cached || cached.key !== key || Date.now() > cached.until) {
      const nodes = load(file);
      const entry = { key, until: Number.POSITIVE_INFINITY, nodes };
      cached = entry;
      // A failed read is not kept: the next call tries again; nor, for long, a silent member.
      nodes.then(
        (list) => {
          if (list.some((n) => n.error && !n.capabilities.length))
            entry.until = Date.now() + REMOTE_RETRY_MS;
        },
        () => cached === entry && (cached = undefined),
      );
    }
    return cached.nodes;
  };
}
