/**
 * @module lib/node/model-node — a node answered by its model: the model agent wired into a node
 * definition, and the choice between the model and the keyword agent from the node's settings.
 */

import type { Principal } from '../auth/principal.ts';
import type { Log } from '../log.ts';
import {
  modelAgent,
  type AgentTool,
  type ModelAgentOptions,
  type ModelMode,
} from '../agents/model-agent.ts';
import type { ModelEndpoint } from '../model/chat.ts';
import { modelHealth, type ModelHealth } from '../model/health.ts';
import type { NodeDefinition } from './node-types.ts';

/**
 * A node definition answered by its model: the model agent, and a card that is agent-backed
 * while the model answers. The health's pings are started by whoever runs the node.
 */
function withModelAgent(
  def: NodeDefinition,
  o: Omit<ModelAgentOptions, 'name' | 'description' | 'catalog'>,
): NodeDefinition {
  return {
    ...def,
    agent: modelAgent({ ...o, name: def.name, description: def.description, catalog: def.catalog }),
    agentBacked: () => o.health.up,
  };
}

/**
 * Decides how a node answers: with its model when one is configured and the mode (the config's
 * `models.<node>.agent`, else the node's own `modelMode`) is `model` or `dynamic`, by keywords
 * otherwise. The returned health is to be started once the node serves.
 */
export function modelBackedNode(
  def: NodeDefinition,
  o: {
    endpoint?: ModelEndpoint;
    agent?: ModelMode | 'keyword';
    pingMs: number;
    log: Log;
    timeoutMs?: number;
    maxSteps?: number;
    tools?: AgentTool[];
    toolsFor?: (caller: Principal) => AgentTool[];
    fetch?: typeof fetch;
  },
): { definition: NodeDefinition; health?: ModelHealth } {
  const mode = o.agent ?? def.modelMode ?? 'keyword';
  if (!o.endpoint || mode === 'keyword') return { definition: def };
  const health = modelHealth(o.endpoint, {
    pingMs: o.pingMs,
    log: o.log,
    name: def.name,
    fetch: o.fetch,
  });
  const definition = withModelAgent(def, {
    endpoint: o.endpoint,
    health,
    mode,
    log: o.log,
    ...(o.timeoutMs ? { timeoutMs: o.timeoutMs } : {}),
    ...(o.maxSteps ? { maxSteps: o.maxSteps } : {}),
    tools: o.tools,
    toolsFor: o.toolsFor,
    fetch: o.fetch,
  });
  return { definition, health };
}
