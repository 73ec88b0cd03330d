/**
 * @module hub/workbench/hub-ask — the hub's Ask Agent as the hub wires it: planned by the model
 * when one is configured (whose health decides whether the card says agent-backed), over the
 * fleet's capabilities and the hub's own.
 */

import type { FleetInvoker } from '../../lib/fleet/invoke.ts';
import type { Log } from '../../lib/log.ts';
import type { Catalog } from '../../lib/catalog/catalog.ts';
import { modelHealth, type ModelHealth } from '../../lib/model/health.ts';
import type { FleetSnapshot } from '../fleet/view.ts';
import { ask } from './ask.ts';
import { capabilitiesFromNodes } from './ask-catalog.ts';
import { modelPlanner, type ModelConfig } from './ask-model.ts';

export interface HubAskOptions {
  self: string;
  log: Log;
  model?: ModelConfig;
  invoker: FleetInvoker;
  view: { snapshot(): Promise<FleetSnapshot> };
  /** The hub's own catalog, read when a question comes (it is made after the asker). */
  catalog: () => Catalog;
  fetch?: typeof fetch;
}

export function hubAsk(o: HubAskOptions): {
  health?: ModelHealth;
  ask: (question: string, opts?: { onBehalfOf?: string }) => ReturnType<typeof ask>;
} {
  const fetchOpt = o.fetch ? { fetch: o.fetch } : {};
  // With a model, the card is agent-backed only while it answers (pinged, and every planning call counts).
  const health = o.model
    ? modelHealth(o.model, {
        pingMs: o.model.pingMs ?? 30_000,
        log: o.log,
        name: o.self,
        ...fetchOpt,
      })
    : undefined;
  const plan = o.model ? modelPlanner(o.model, { log: o.log, health, ...fetchOpt }) : undefined;
  const askQuestion = (question: string, opts?: { onBehalfOf?: string }) =>
    ask(
      {
        invoker: o.invoker,
        own: {
          name: o.self,
          tools: () => o.catalog().descriptors(),
          invoke: (id, args) => o.catalog().invoke(id, args),
        },
        planner: plan,
        fallbackCatalog: capabilitiesFromNodes(
          async () => (await o.view.snapshot()).nodes,
          o.fetch,
        ),
      },
      question,
      opts,
    );
  return { health, ask: askQuestion };
}
