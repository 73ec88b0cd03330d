/**
 * Test support: a second executor besides resolve, a node of its own that offers exec.* and
 * finishes every job at once, its output naming the prompt (and the earlier turns it was sent).
 */

import { capability } from '../../lib/catalog/capability.ts';
import { Catalog } from '../../lib/catalog/catalog.ts';
import type { NodeDefinition } from '../../lib/node/node-types.ts';

export function builderNode(): NodeDefinition {
  const jobs = new Map<string, string>();
  return {
    name: 'builder',
    description: 'Test executor',
    catalog: new Catalog([
      capability({
        id: 'exec.submit',
        name: 'Submit',
        description: 'Runs a job',
        tags: ['test'],
        keywords: [],
        readOnly: false,
        args: {
          prompt: { type: 'string', description: 'what', required: true },
          recipe: { type: 'string', description: 'r' },
          model: { type: 'string', description: 'm' },
          context: { type: 'string', description: 'c', maxLength: 16000 },
        },
        run: (a) => {
          const id = `job-${jobs.size + 1}`;
          jobs.set(
            id,
            `built: ${a.prompt}${a.context ? ` after ${JSON.parse(a.context).length} turn(s)` : ''}`,
          );
          return { job_id: id, recipe: 'build' };
        },
      }),
      capability({
        id: 'exec.status',
        name: 'Status',
        description: 'A job',
        tags: ['test'],
        keywords: [],
        readOnly: false,
        args: { job_id: { type: 'string', description: 'id', required: true } },
        run: (a) => ({
          job: {
            job_id: a.job_id,
            recipe: 'build',
            state: 'succeeded',
            output: jobs.get(a.job_id) ?? '',
            exitCode: 0,
          },
        }),
      }),
    ]),
  };
}
