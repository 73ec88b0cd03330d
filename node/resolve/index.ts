/**
 * @module node/resolve/index — the fleet's capability catalog (`resolve.*`): what every node offers, read from
 * the nodes' own declarations; it shows the menu (ids, argument specs), never argument values.
 * It is also the fleet's one executor (`exec.*`, node/resolve/executor.ts) when given a data folder.
 */

import { PROJECT_ROOT } from '../../lib/project-root.ts';
import { capability } from '../../lib/catalog/capability.ts';
import {
  defineNode,
  toDefinition,
  type NodeSetup,
  type NodeSpec,
} from '../../lib/node/define-node.ts';
import { writableFleetFile } from '../../lib/config/fleet-file.ts';
import { fleetCatalog } from './catalog.ts';
import { execCapabilities } from './exec-capabilities.ts';
import { createExecutor, type ExecutorOptions } from './executor.ts';
import * as q from './queries.ts';
import { loadRecipes, modelRecipe } from './recipes.ts';

const NAME = 'resolve';

interface ResolveOptions extends Pick<NodeSetup, 'fixturesDir' | 'dataDir' | 'model' | 'limits'> {
  /** Default `<fixturesDir>/fleet.json`. */
  fleetFile?: string;
  /** The folder node files are named from; default the project root. */
  root?: string;
  /** Default `<fixturesDir>/resolve/recipes.json`. */
  recipesFile?: string;
  /** Clock, kill grace, concurrency and fetch of the executor (tests). */
  exec?: Pick<
    ExecutorOptions,
    | 'now'
    | 'killGraceMs'
    | 'maxRunning'
    | 'maxRunningPerCaller'
    | 'fetch'
    | 'maxJobRecords'
    | 'maxJobAgeHours'
  >;
}

// long: the node's catalog, one capability per entry: a table, read top to bottom
export default defineNode((opts: ResolveOptions) => {
  const root = opts.root ?? PROJECT_ROOT;
  const fleetFile = opts.fleetFile ?? `${opts.fixturesDir}/fleet.json`;
  const recipesFile = opts.recipesFile ?? `${opts.fixturesDir}/resolve/recipes.json`;
  const recipes = loadRecipes(recipesFile, {
    bun: process.execPath,
    root,
    data: opts.dataDir ?? root,
    fleet: fleetFile,
  });
  if (opts.model) recipes.push(modelRecipe());
  // Without a data folder there is no executor and the exec.* capabilities answer EXECUTOR_UNAVAILABLE.
  const executor = opts.dataDir
    ? createExecutor({
        dataDir: opts.dataDir,
        recipes,
        model: opts.model,
        ...(opts.limits?.jobMaxStored ? { maxJobRecords: opts.limits.jobMaxStored } : {}),
        ...(opts.limits?.jobMaxAgeHours ? { maxJobAgeHours: opts.limits.jobMaxAgeHours } : {}),
        ...opts.exec,
      })
    : undefined;
  // resolve describes itself from this spec (called only when a capability runs, after it exists).
  const nodes = fleetCatalog({
    fleetFile,
    // Joins are written beside the data (DATA_DIR/fleet.json when the file read is the fixtures').
    ...(opts.dataDir ? { followed: writableFleetFile(fleetFile, opts.dataDir, root) } : {}),
    root,
    fixturesDir: opts.fixturesDir,
    self: { name: NAME, definition: () => toDefinition(spec) },
  });

  const spec: NodeSpec = {
    name: NAME,
    dataPaths: [fleetFile, recipesFile],
    description:
      'The capability catalog of the whole fleet: every node, its transport and its capabilities, from the nodes\' own declarations. A text question picks a tool by keyword, a data part {"skill", "args"} calls that capability.',
    // A clean stop cancels running jobs; a crash leaves them to the next start (marked failed).
    ...(executor ? { shutdown: () => executor.close() } : {}),
    capabilities: [
      capability({
        id: 'resolve.nodes',
        name: 'Fleet nodes',
        description:
          'Every fleet node with its role, transport (A2A + signed peer, or signed peer only), whether a model answers, and how many capabilities and snapshot tools it offers.',
        tags: ['catalog', 'fleet'],
        keywords: ['nodes', 'fleet', 'transport', 'members', 'which apps'],
        readOnly: true,
        args: {},
        run: async () => q.nodes(await nodes()),
        summarize: ({ nodes: rows }) => {
          const broken = rows.filter((n) => n.error).length;
          return `${rows.length} fleet nodes${broken ? `, ${broken} could not be read` : ''}`;
        },
      }),
      capability({
        id: 'resolve.catalog',
        name: 'Fleet capability catalog',
        description:
          'Every capability of every fleet node: id, name, description, tags, read-only or not, and its argument specs.',
        tags: ['catalog', 'capabilities'],
        keywords: ['catalog', 'capabilities', 'capability', 'skills', 'what can'],
        readOnly: true,
        args: {},
        run: async () => q.catalog(await nodes()),
        summarize: (r) => `${r.total} capabilities across ${r.nodes.length} nodes`,
      }),
      capability({
        id: 'resolve.tools',
        name: 'Agent surface',
        description:
          "The fleet's read-only, no-argument snapshot tools: what an agent may call freely on any node.",
        tags: ['catalog', 'tools'],
        keywords: ['tools', 'tool', 'agent surface', 'snapshot', 'snapshots'],
        readOnly: true,
        args: {},
        run: async () => q.tools(await nodes()),
        summarize: (r) =>
          `${r.total} snapshot tools on ${new Set(r.tools.map((t) => t.node)).size} nodes`,
      }),
      capability({
        id: 'resolve.capability',
        name: 'Find a capability',
        description:
          'Which node offers a capability id, and its full descriptor; found:false when no node does.',
        tags: ['catalog', 'capabilities'],
        examples: [
          'Which node offers crm.industry?',
          '{"skill":"resolve.capability","args":{"id":"crm.industry"}}',
        ],
        keywords: ['which node', 'where is', 'who offers'],
        readOnly: true,
        args: {
          id: {
            type: 'string',
            description: 'Capability id, e.g. sector.movement',
            required: true,
            pattern: '[a-z][a-z0-9-]*(?:\\.[a-z][a-z0-9-]*)+',
          },
        },
        run: async (args) => q.capability(await nodes(), args.id),
        summarize: ({ matches }) =>
          matches[0]
            ? `${matches[0].id} is offered by ${matches.map((m) => m.node).join(', ')}`
            : 'No node offers that capability',
      }),
      capability({
        id: 'resolve.search',
        name: 'Search capabilities',
        description:
          'Capabilities whose id, name, description or tags contain every word of a query.',
        tags: ['catalog', 'search'],
        examples: ['{"skill":"resolve.search","args":{"query":"deploy"}}'],
        keywords: ['search', 'find', 'look up'],
        readOnly: true,
        args: { query: { type: 'string', description: 'Words to look for', required: true } },
        run: async (args) => q.search(await nodes(), args.query),
        summarize: (r) => `${r.total} matching capabilities`,
      }),
      ...execCapabilities(executor, recipes),
    ],
  };
  return spec;
});
