/**
 * @module hub/workbench/hub-node — the hub as an A2A node named `a2a`: its card declares the fleet-level
 * capabilities (hub/workbench/skills/), and each one answers by calling nodes through
 * `fleet.invoke` only. This file wires them; the order here is the order on the card.
 */

import { Catalog } from '../../lib/catalog/catalog.ts';
import type { FleetInvoker } from '../../lib/fleet/invoke.ts';
import type { NodeDefinition } from '../../lib/node/node-types.ts';
import type { FleetSnapshot } from '../fleet/view.ts';
import type { AskAnswer } from './ask.ts';
import type { Delegator } from './delegate.ts';
import { hubAgent } from './hub-agent.ts';
import { negotiationsDir } from './negotiation.ts';
import type { NegotiationRetention } from './negotiation-store.ts';
import { entityCoverage, entityResolve } from './skills/entities.ts';
import { nodeCapabilities, taskDelegate } from './skills/fleet.ts';
import { customerReach, sectorMovement } from './skills/market.ts';
import { negotiationList, negotiationStart } from './skills/negotiations.ts';

interface HubNodeDeps {
  name: string;
  invoker: FleetInvoker;
  view: { snapshot(): Promise<FleetSnapshot> };
  delegator: Delegator;
  ask: (question: string) => Promise<AskAnswer>;
  /** True while a model answers Ask Agent questions; the card's agent-backed extension says so. */
  agentBacked: () => boolean;
  /** Negotiation records go to `<dataDir>/hub/negotiations/`. */
  dataDir: string;
  /** How many negotiation records are kept, and for how long. */
  negotiationRetention?: NegotiationRetention;
}

export function hubNode(deps: HubNodeDeps): NodeDefinition {
  const { invoker } = deps;
  const negotiations = negotiationsDir(deps.dataDir);
  const catalog = new Catalog([
    sectorMovement(invoker),
    customerReach(invoker),
    nodeCapabilities(deps.view),
    entityResolve(invoker),
    entityCoverage(invoker),
    negotiationStart(invoker, negotiations, deps.negotiationRetention),
    negotiationList(negotiations),
    taskDelegate(),
  ]);
  return {
    name: deps.name,
    description:
      'The hub of the fleet: aggregates every node, traces every cross-node call, and answers fleet-level questions by asking the nodes over the signed peer channel. A text message is a question the hub plans across the fleet; a data part {"skill", "args"} calls one of these capabilities.',
    catalog,
    agent: hubAgent({ catalog, delegator: deps.delegator, ask: deps.ask }),
    agentBacked: deps.agentBacked,
  };
}
