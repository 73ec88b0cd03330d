/**
 * @module resolve — the fleet's capability catalog (`resolve.*`): what every node offers, read from
 * the nodes' own declarations; it shows the menu (ids, argument specs), never argument values.
 * It is also the fleet's one executor (`exec.*`, node/resolve/executor.ts) when given a data folder.
 */

import { resolve as resolvePath } from 'node:path';
import { Catalog } from '../../lib/catalog/catalog.ts';
import type { NodeDefinition } from '../../lib/node/create-node.ts';
import { fleetCatalog, isSnapshotTool, type FleetNodeCatalog } from './catalog.ts';
import { createExecutor, type ExecutorOptions } from './executor.ts';
import { execCapabilities } from './exec-capabilities.ts';
import type { ModelEndpoint } from './model.ts';
import { loadRecipes, modelRecipe } from './recipes.ts';

const NAME = 'resolve';
const DESCRIPTION = 'The capability catalog of the whole fleet: every node, its transport and its capabilities, from the nodes\' own declarations. A text question picks a tool by keyword, a data part {"skill", "args"} calls that capability.';

export interface ResolveOptions {
  fixturesDir: string;
  fleetFile?: string;
  root?: string;
  /** DATA_DIR; without it the exec.* capabilities answer EXECUTOR_UNAVAILABLE. */
  dataDir?: string;
  /** Default `<fixturesDir>/resolve/recipes.json`. */
  recipesFile?: string;
  /** Adds the `model` recipe. */
  model?: ModelEndpoint;
  /** Clock, kill grace, concurrency and fetch of the executor (tests). */
  exec?: Pick<ExecutorOptions, 'now' | 'killGraceMs' | 'maxRunning' | 'fetch'>;
}

export default function resolve(opts: ResolveOptions): NodeDefinition {
  const root = opts.root ?? resolvePath(import.meta.dir, '../..');
  const fleetFile = opts.fleetFile ?? `${opts.fixturesDir}/fleet.json`;
  const recipes = loadRecipes(opts.recipesFile ?? `${opts.fixturesDir}/resolve/recipes.json`, { bun: process.execPath, root, data: opts.dataDir ?? root, fleet: fleetFile });
  if (opts.model) recipes.push(modelRecipe());
  const executor = opts.dataDir ? createExecutor({ dataDir: opts.dataDir, recipes, ...(opts.model ? { model: opts.model } : {}), ...opts.exec }) : undefined;
  const nodes = fleetCatalog({
    fleetFile,
    root,
    fixturesDir: opts.fixturesDir,
    // Called only when a capability runs, after `definition` below exists.
    self: { name: NAME, definition: () => definition },
  });
  const everyCapability = async () => (await nodes()).flatMap((n) => n.capabilities.map((c) => ({ node: n.node, ...c })));

  const catalog = new Catalog([
    {
      id: 'resolve.nodes',
      name: 'Fleet nodes',
      description: 'Every fleet node with its role, transport (A2A + signed peer, or signed peer only), whether a model answers, and how many capabilities and snapshot tools it offers.',
      tags: ['catalog', 'fleet'],
      keywords: ['nodes', 'fleet', 'transport', 'members', 'which apps'],
      readOnly: true,
      args: {},
      run: async () => {
        const rows = (await nodes()).map(({ capabilities, ...n }) => ({
          ...n,
          capabilities: capabilities.length,
          readOnly: capabilities.filter((c) => c.readOnly).length,
          snapshotTools: capabilities.filter(isSnapshotTool).length,
        }));
        return { nodes: rows };
      },
      summarize: (r) => {
        const { nodes: rows } = r as { nodes: { node: string; error?: string }[] };
        const broken = rows.filter((n) => n.error).length;
        return `${rows.length} fleet nodes${broken ? `, ${broken} could not be read` : ''}`;
      },
    },
    {
      id: 'resolve.catalog',
      name: 'Fleet capability catalog',
      description: 'Every capability of every fleet node: id, name, description, tags, read-only or not, and its argument specs.',
      tags: ['catalog', 'capabilities'],
      keywords: ['catalog', 'capabilities', 'capability', 'skills', 'what can'],
      readOnly: true,
      args: {},
      run: async () => {
        const all: FleetNodeCatalog[] = await nodes();
        return { total: all.reduce((n, x) => n + x.capabilities.length, 0), nodes: all };
      },
      summarize: (r) => {
        const { total, nodes: all } = r as { total: number; nodes: unknown[] };
        return `${total} capabilities across ${all.length} nodes`;
      },
    },
    {
      id: 'resolve.tools',
      name: 'Agent surface',
      description: "The fleet's read-only, no-argument snapshot tools: what an agent may call freely on any node.",
      tags: ['catalog', 'tools'],
      keywords: ['tools', 'tool', 'agent surface', 'snapshot', 'snapshots'],
      readOnly: true,
      args: {},
      run: async () => {
        const tools = (await everyCapability()).filter(isSnapshotTool).map(({ node, id, name, description }) => ({ node, id, name, description }));
        return { total: tools.length, tools };
      },
      summarize: (r) => {
        const { total, tools } = r as { total: number; tools: { node: string }[] };
        return `${total} snapshot tools on ${new Set(tools.map((t) => t.node)).size} nodes`;
      },
    },
    {
      id: 'resolve.capability',
      name: 'Find a capability',
      description: 'Which node offers a capability id, and its full descriptor; found:false when no node does.',
      tags: ['catalog', 'capabilities'],
      examples: ['{"skill":"resolve.capability","args":{"id":"crm.industry"}}'],
      keywords: ['which node', 'where is', 'who offers'],
      readOnly: true,
      args: { id: { type: 'string', description: 'Capability id, e.g. sector.movement', required: true } },
      run: async (args) => {
        const matches = (await everyCapability()).filter((c) => c.id === args.id);
        return { found: matches.length > 0, matches };
      },
      summarize: (r) => {
        const { matches } = r as { matches: { node: string; id: string }[] };
        return matches.length ? `${matches[0]!.id} is offered by ${matches.map((m) => m.node).join(', ')}` : 'No node offers that capability';
      },
    },
    {
      id: 'resolve.search',
      name: 'Search capabilities',
      description: 'Capabilities whose id, name, description or tags contain every word of a query.',
      tags: ['catalog', 'search'],
      examples: ['{"skill":"resolve.search","args":{"query":"deploy"}}'],
      keywords: ['search', 'find', 'look up'],
      readOnly: true,
      args: { query: { type: 'string', description: 'Words to look for', required: true } },
      run: async (args) => {
        const words = String(args.query).toLowerCase().split(/\s+/).filter(Boolean);
        const matches = (await everyCapability())
          .filter((c) => words.length && words.every((w) => [c.id, c.name, c.description, ...c.tags].join(' ').toLowerCase().includes(w)))
          .map(({ node, id, name, readOnly }) => ({ node, id, name, readOnly }));
        return { total: matches.length, matches };
      },
      summarize: (r) => `${(r as { total: number }).total} matching capabilities`,
    },
    ...execCapabilities(executor, recipes),
  ]);
  const definition: NodeDefinition = {
    name: NAME,
    description: DESCRIPTION,
    catalog,
    agentBacked: false,
    // A clean stop cancels running jobs; a crash leaves them to the next start (marked failed).
    ...(executor ? { shutdown: () => executor.close() } : {}),
  };
  return definition;
}
