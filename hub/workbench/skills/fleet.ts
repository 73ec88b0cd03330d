/**
 * @module hub/workbench/skills/fleet — the hub's capabilities about the fleet itself: which nodes
 * there are and what they offer, and `task.delegate`, which only an A2A message can start.
 */

import { capability } from '../../../lib/catalog/capability.ts';
import { fail } from '../../../lib/errors/result.ts';
import type { FleetSnapshot } from '../../fleet/view.ts';

export const nodeCapabilities = (view: { snapshot(): Promise<FleetSnapshot> }) =>
  capability({
    id: 'node.capabilities',
    name: 'Node capabilities',
    description: 'Every fleet node with its skills, online state and whether a model answers it.',
    tags: ['fleet'],
    keywords: ['capabilities', 'nodes', 'fleet', 'skills'],
    readOnly: true,
    args: {},
    run: async () => {
      const snap = await view.snapshot();
      return {
        nodes: snap.nodes.map((n) => ({
          name: n.name,
          kind: n.kind,
          online: n.online,
          agentBacked: n.agentBacked,
          skills: n.skills.map((s) => s.id),
        })),
      };
    },
    summarize: (r) => `${r.nodes.length} nodes`,
  });

export const taskDelegate = () =>
  capability({
    id: 'task.delegate',
    name: 'Delegate a task',
    description:
      'Hands a job to an executor node (resolve unless another node offering exec.* is named) and tracks it until it settles; taskId continues an earlier delegation with its turns.',
    tags: ['tasks', 'fleet'],
    keywords: ['delegate', 'run', 'execute', 'job'],
    readOnly: false,
    args: {
      prompt: {
        type: 'string',
        description: 'What the executor should do',
        required: true,
        maxLength: 4000,
      },
      executor: {
        type: 'string',
        description: 'A fleet node that offers exec.* (default resolve)',
        maxLength: 64,
      },
      recipe: {
        type: 'string',
        description: "A recipe name from the executor's allow-list (optional)",
        maxLength: 64,
      },
      model: {
        type: 'string',
        description:
          "A model name for the executor's model recipe (picks that recipe when none is named)",
        maxLength: 128,
      },
      taskId: {
        type: 'string',
        description: 'A delegated hub task to continue: its prompts and answers go with this job',
        maxLength: 64,
      },
    },
    // A delegation is a hub task that lives on; it needs an A2A message, not a one-shot peer call.
    run: () =>
      fail(
        'USE_A2A',
        'task.delegate creates a hub task: send it as an A2A message with a data part {"skill":"task.delegate","args":{"prompt":…}}',
      ),
  });
