/**
 * @module hub/workbench/hub-agent — how the hub answers A2A messages: a text question goes to Ask Agent
 * (the hub plans which nodes to ask), a data part `{"skill", "args"}` calls one of the hub's
 * capabilities, `task.delegate` hands a job to an executor, and reading or canceling a delegated
 * task advances or stops it.
 */

import { isPlainObject } from '../../lib/json/guards.ts';
import type { Agent, AgentContext } from '../../lib/a2a/agent.ts';
import { ok } from '../../lib/errors/result.ts';
import { failureParts } from '../../lib/errors/as-data.ts';
import { callOf, catalogAgent } from '../../lib/agents/keyword-agent.ts';
import { MAX_TEXT_CHARS } from '../../lib/catalog/text-args.ts';
import type { Catalog } from '../../lib/catalog/catalog.ts';
import type { AskAnswer } from './ask.ts';
import type { DelegateArgs, Delegator } from './delegate.ts';
import type { Fields } from './fleet-answers.ts';

interface HubAgentDeps {
  catalog: Catalog;
  delegator: Delegator;
  ask: (question: string) => Promise<AskAnswer>;
}

const str = (v: unknown) => (typeof v === 'string' ? v : undefined);
/** The task metadata key that keeps a question Ask could not answer without one more argument. */
const ASKED = 'askNeeds';

/** task.delegate's arguments, checked against its specs; a wrong type or length is BAD_ARGS. */
function checkedDelegateArgs(
  deps: HubAgentDeps,
  delegateSpec: ReturnType<HubAgentDeps['catalog']['find']>,
  ctx: AgentContext,
  raw: unknown,
  base?: DelegateArgs,
): DelegateArgs | undefined {
  const given: Fields = isPlainObject(raw) ? raw : {};
  // A continuation may leave the prompt out: the waiting request keeps its own.
  const withPrompt = base && given.prompt === undefined ? { ...given, prompt: base.prompt } : given;
  if (str(withPrompt.prompt)?.trim() === '' || withPrompt.prompt === undefined) {
    // The request waits for its prompt: the next text sent to this task becomes it.
    const waiting: DelegateArgs = { prompt: '' };
    for (const k of ['executor', 'recipe', 'model', 'taskId'] as const) {
      const v = str(withPrompt[k]) ?? (base ? str(base[k]) : undefined);
      if (v !== undefined) waiting[k] = v;
    }
    ctx.setMetadata({ delegationRequest: waiting });
    ctx.requireInput('task.delegate needs a prompt: what should the executor do?');
    return undefined;
  }
  const checked = delegateSpec ? deps.catalog.checkArgs(delegateSpec, withPrompt) : ok(withPrompt);
  if (!checked.ok) {
    const { message } = checked.error;
    ctx.status(
      'rejected',
      failureParts({ ...checked.error, message: `task.delegate: ${message}` }),
    );
    return undefined;
  }
  const a = checked.result;
  const pick = (k: keyof DelegateArgs) => str(a[k]) ?? (base ? str(base[k]) : undefined);
  const args: DelegateArgs = { prompt: str(a.prompt)! };
  for (const k of ['executor', 'recipe', 'model', 'taskId'] as const) {
    const v = pick(k);
    if (v !== undefined) args[k] = v;
  }
  // A continuation adds to the waiting request's prompt; it never replaces it.
  if (base?.prompt && given.prompt !== undefined && args.prompt !== base.prompt)
    args.prompt = `${base.prompt}\n\n${args.prompt}`;
  return args;
}

export function hubAgent(deps: HubAgentDeps): Agent {
  const byCatalog = catalogAgent(deps.catalog);
  const delegateSpec = deps.catalog.find('task.delegate');

  const delegateArgs = (ctx: AgentContext, raw: unknown, base?: DelegateArgs) =>
    checkedDelegateArgs(deps, delegateSpec, ctx, raw, base);

  return {
    // task.delegate and negotiation.start are not read-only: the catalog's rule decides.
    needsPrincipal: (message) => byCatalog.needsPrincipal?.(message),
    async handle(ctx) {
      const call = callOf(ctx.message);
      // A task whose job is submitted takes no second job in its place (its metadata would lose the first).
      if (ctx.continued && deps.delegator.delegated(ctx.task)) {
        return ctx.status(
          'working',
          failureParts({
            code: 'DELEGATE_TASK_ACTIVE',
            message:
              'This task already has a job; it settles when read. To go on from its answer, send task.delegate with {"taskId": this task\'s id} in a new task.',
          }),
        );
      }
      // A delegation that waited for its executor is retried when the client continues the task;
      // text or a new prompt is added to the waiting prompt.
      const pending = ctx.continued ? deps.delegator.pending(ctx.task) : undefined;
      if (pending) {
        const raw =
          call?.skill === 'task.delegate' ? call.args : ctx.text ? { prompt: ctx.text } : {};
        const args = delegateArgs(ctx, raw, pending);
        return args && deps.delegator.submit(ctx, args);
      }
      if (call?.skill === 'task.delegate') {
        const args = delegateArgs(ctx, call.args);
        return args && deps.delegator.submit(ctx, args);
      }
      if (call || !ctx.text) return byCatalog.handle(ctx);
      // A reply to Ask's question is read together with the question it answers.
      const first = ctx.continued
        ? str((ctx.task.metadata?.[ASKED] as Fields | undefined)?.text)
        : undefined;
      const question = first ? `${first}\n${ctx.text}` : ctx.text;
      ctx.working('Planning which nodes to ask');
      const answer = await deps.ask(question);
      if (answer.needs) {
        ctx.setMetadata({ [ASKED]: { text: question.slice(0, MAX_TEXT_CHARS) } });
        return ctx.requireInput(answer.answer);
      }
      if (first) ctx.setMetadata({ [ASKED]: null });
      ctx.artifact(
        {
          name: 'answer',
          parts: [
            { data: answer, mediaType: 'application/json' },
            { text: answer.answer, mediaType: 'text/plain' },
          ],
        },
        { lastChunk: true },
      );
      ctx.complete();
    },
    observe: (task) => deps.delegator.observe(task),
    cancel: (task) => deps.delegator.cancel(task),
    // A delegation outlives the hub: the executor runs the job, and reading the task advances it.
    resumes: (task) => deps.delegator.resumable(task),
  };
}
