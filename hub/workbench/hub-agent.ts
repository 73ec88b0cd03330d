/**
 * @module hub/hub-agent — how the hub answers A2A messages: a text question goes to Ask Agent
 * (the hub plans which nodes to ask), a data part `{"skill", "args"}` calls one of the hub's
 * capabilities, `task.delegate` hands a job to the executor, and reading or canceling a delegated
 * task advances or stops it.
 */

import type { Agent } from '../../lib/a2a/agent.ts';
import { catalogAgent, skillCall } from '../../lib/catalog/keyword-agent.ts';
import type { Catalog } from '../../lib/catalog/catalog.ts';
import type { AskAnswer } from './ask.ts';
import type { Delegator } from './delegate.ts';
import { isObject, type Fields } from './fleet-answers.ts';

interface HubAgentDeps {
  catalog: Catalog;
  delegator: Delegator;
  ask: (question: string) => Promise<AskAnswer>;
}

const str = (v: unknown) => (typeof v === 'string' ? v : undefined);

export function hubAgent(deps: HubAgentDeps): Agent {
  const byCatalog = catalogAgent(deps.catalog);
  return {
    async handle(ctx) {
      const call = skillCall(ctx.data);
      if (call?.skill === 'task.delegate') {
        const args: Fields = isObject(call.args) ? call.args : {};
        return deps.delegator.submit(ctx, str(args.prompt) ?? '', str(args.recipe));
      }
      // A delegation that waited for its executor is retried when the client continues the task.
      const pending = ctx.continued ? deps.delegator.pending(ctx.task) : undefined;
      if (pending) return deps.delegator.submit(ctx, ctx.text || pending.prompt, pending.recipe);
      if (call || !ctx.text) return byCatalog.handle(ctx);
      ctx.working('Planning which nodes to ask');
      const answer = await deps.ask(ctx.text);
      ctx.artifact({ name: 'answer', parts: [{ data: answer, mediaType: 'application/json' }, { text: answer.answer, mediaType: 'text/plain' }] }, { lastChunk: true });
      ctx.complete(answer.answer);
    },
    observe: (task) => deps.delegator.observe(task),
    cancel: (task) => deps.delegator.cancel(task),
    // A delegation outlives the hub: the executor runs the job, and reading the task advances it.
    resumes: (task) => deps.delegator.resumable(task),
  };
}
