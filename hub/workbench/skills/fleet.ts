/**
 * @module hub/workbench/skills/fleet — the hub's capabilities about the fleet itself: which nodes
 * there are and what they offer, and `task.delegate`, which only an A2A message can start.
 */

import { capability } from '../../../lib/catalog/capability.ts';
import { CapabilityError } from '../../../lib/catalog/catalog.ts';
import type { FleetSnapshot } from '../../fleet/view.ts';

export const nodeCapabilities = (view: { snapshot(): Promise<FleetSnapshot> }) => capability({
  id: 'node.capabilities',
  name: 'Node capabilities',
  description: 'Every fleet node with its skills, online state and whether a model answers it.',
  tags: ['fleet'],
  keywords: ['capabilities', 'nodes', 'fleet', 'skills'],
  readOnly: true,
  args: {},
  run: async () => {
    const snap = await view.snapshot();
    return { nodes: snap.nodes.map((n) => ({ name: n.name, kind: n.kind, online: n.online, agentBacked: n.agentBacked, skills: n.skills.map((s) => s.id) })) };
  },
  summarize: (r) => `${r.nodes.length} nodes`,
});

export const taskDelegate = () => capability({
  id: 'task.delegate',
  name: 'Delegate a task',
  description: 'Hands a job to the executor node and tracks it until it settles.',
  tags: ['tasks', 'fleet'],
  keywords: ['delegate', 'run', 'execute', 'job'],
  readOnly: false,
  args: {
    prompt: { type: 'string', description: 'What the executor should do', required: true },
    recipe: { type: 'string', description: 'A recipe name from the executor\'s allow-list (optional)' },
  },
  // A delegation is a hub task that lives on; it needs an A2A message, not a one-shot peer call.
  run: (): never => {
    throw new CapabilityError('USE_A2A', 'task.delegate creates a hub task: send it as an A2A message with a data part {"skill":"task.delegate","args":{"prompt":…}}');
  },
});
