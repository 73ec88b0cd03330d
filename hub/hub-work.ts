/**
 * @module hub/hub-work — the hub's own work as the hub wires it: the delegator (which continues
 * an earlier delegation from the hub's own tasks), the Ask Agent with its model's health, and the
 * definition of the hub's A2A node over them (hub/workbench/hub-node.ts).
 */

import { isA2AError } from '../lib/a2a/errors.ts';
import type { FleetInvoker } from '../lib/fleet/invoke.ts';
import type { Limits } from '../lib/limits.ts';
import type { NodeApp } from '../lib/node/node-types.ts';
import type { FleetSnapshot } from './fleet/view.ts';
import type { HubOptions } from './hub-types.ts';
import { createDelegator } from './workbench/delegate.ts';
import { hubAsk } from './workbench/hub-ask.ts';
import { hubNode } from './workbench/hub-node.ts';

export interface HubWorkParts {
  invoker: FleetInvoker;
  view: { snapshot(): Promise<FleetSnapshot> };
  limits: Limits;
  /** The hub's own tasks, once its node exists (it is made from this definition). */
  ownTasks: () => NodeApp['engine'] | undefined;
}

export function hubWork(opts: HubOptions, p: HubWorkParts) {
  const { fleet, log } = opts;
  const { invoker, view, limits } = p;
  const self = fleet.hub.name;
  const delegator = createDelegator({
    invoker,
    nodeNames: () => fleet.nodes.map((n) => n.name),
    members: async () => (await view.snapshot()).nodes,
    findTask: async (id, caller) => {
      const t = await p.ownTasks()?.getTask(id, undefined, caller);
      return t && !isA2AError(t) ? t : undefined;
    },
  });
  const asker = hubAsk({
    self,
    log,
    model: opts.model,
    invoker,
    view,
    catalog: () => definition.catalog,
    fetch: opts.fetch,
  });
  const definition = hubNode({
    name: self,
    invoker,
    view,
    delegator,
    ask: asker.ask,
    agentBacked: () => asker.health?.up ?? false,
    dataDir: opts.dataDir,
    negotiationRetention: {
      maxStored: limits.negotiationMaxStored,
      maxAgeMs: limits.negotiationMaxAgeHours * 3_600_000,
    },
  });
  return { definition, ask: asker.ask, model: asker.health };
}
