/**
 * @module lib/a2a/engine/send-message — what SendMessage and SendStreamingMessage share: the checks
 * of a message (media, webhook, principal), the task it starts or continues, and for a
 * non-streamed send the answer: a Message, the task once it is final, or with
 * `returnImmediately` the task once it exists.
 */

import { ownerKey, type Principal } from '../../auth/principal.ts';
import { A2A_ERRORS, a2aError, isA2AError, type A2AError } from '../errors.ts';
import { newTaskId, type TaskRecord } from '../store/task-store.ts';
import {
  nowIso,
  type Message,
  type ProtocolVersion,
  type SendParams,
  type Task,
} from '../types.ts';
import { runTurn, turnCrashed } from './agent-turn.ts';
import type { EngineCore, TaskCoordination } from './core.ts';
import type { Listener, Live } from './live-tasks.ts';
import { pushHostProblem, pushProblem } from './push-configs.ts';
import { mediaProblem, snapshot, taskNotFound, unauthenticated } from './task-rules.ts';
import type { TurnGate } from './turn-gate.ts';

export type SendResult = { task: Task } | { message: Message };

/**
 * What a non-streamed send answers with: a Message, or the task as it stood when the answer was
 * decided together with the write that stores that state (the answer waits for it, so it never
 * reports a state a crash could take back).
 */
export type SendAnswer = { message: Message } | { task: Task; stored: Promise<void> };

/** One SendMessage (or SendStreamingMessage): what was sent, in which protocol version, by whom. */
export interface SendContext {
  params: SendParams;
  version: ProtocolVersion;
  caller: Principal;
  /**
   * Whom the send acts for when that is not the task's owner: the access policy is applied to it,
   * and the agent's turn (its capability calls, the jobs they start) runs as it. A node's mesh inbox
   * owns its turns' tasks (invisible to every A2A caller) but acts for the message's sender.
   */
  actingFor?: Principal;
  /**
   * A retry of the same messageId answers the first send's task (idempotent sends, A2A 1.1): set
   * for callers that declared 1.1; a 1.0 caller's every send runs, as 1.0 says.
   */
  retry?: boolean;
}

/** What a send needs beside the engine's core. */
export interface SendDeps {
  core: EngineCore;
  coordination: TaskCoordination;
  inputModes: readonly string[];
  outputModes: readonly string[];
  mayAct(caller: Principal): boolean;
  owned(id: string, caller: Principal): Promise<TaskRecord | undefined>;
  /** The turns each principal has running (docs/limits.md). */
  turns: TurnGate;
}

/** A send that passed its checks: its live task, and the turn slot its turn gives back. */
export interface Began {
  live: Live;
  release: () => void;
}

/**
 * The checks of a send, a turn slot of the principal it acts for, then the live task it starts or
 * continues (with its push config). A refusal stores nothing and holds no slot.
 */
export async function beginSend(deps: SendDeps, ctx: SendContext): Promise<Began | A2AError> {
  const { params, caller, actingFor = caller } = ctx;
  const { core } = deps;
  const { message, configuration } = params;
  const accepted = configuration.acceptedOutputModes;
  const bad = mediaProblem(message.parts, accepted, deps.inputModes, deps.outputModes);
  if (bad) return bad;
  if (configuration.pushConfig) {
    const field = 'configuration.pushNotificationConfig.url';
    const problem = pushProblem(core.push, configuration.pushConfig.url, field);
    if (problem) return problem;
    if (!deps.mayAct(actingFor)) return unauthenticated('A webhook registration', actingFor);
    const host = await pushHostProblem(core.push, configuration.pushConfig.url, field);
    if (host) return host;
  }
  const why = core.agent.needsPrincipal?.(message);
  if (why !== undefined && !deps.mayAct(actingFor)) return unauthenticated(why, actingFor);
  const release = deps.turns.enter(ownerKey(actingFor));
  if (!release) return a2aError('TOO_MANY_TURNS', A2A_ERRORS.TOO_MANY_TURNS.message);
  try {
    const live = await liveFor(deps, ctx);
    if (isA2AError(live)) release();
    return isA2AError(live) ? live : { live, release };
  } catch (e) {
    release();
    throw e;
  }
}

/** The live task a checked send starts or continues. */
async function liveFor(
  deps: SendDeps,
  { params, version, caller }: SendContext,
): Promise<Live | A2AError> {
  const { core, coordination } = deps;
  const { message, configuration } = params;
  let live: Live;
  if (message.taskId) {
    // Only the task's creator may continue it; for anyone else it does not exist.
    if (!(await deps.owned(message.taskId, caller)))
      return taskNotFound(message.taskId, 'message.taskId');
    // A new task ignores `ifGenerationMatch` (A2A 1.1): there is nothing to compare.
    const found = await coordination.continuation(message, configuration.ifGenerationMatch);
    if (isA2AError(found)) return found;
    live = found;
  } else {
    // The store's hard bound (docs/limits.md): counts in memory, so this costs no query.
    if (!(await core.store.hasRoom(() => core.live.creating)))
      return a2aError('TASK_STORE_FULL', A2A_ERRORS.TASK_STORE_FULL.message);
    const id = newTaskId();
    message.taskId = id;
    message.contextId ??= crypto.randomUUID();
    const task: Task = {
      id,
      contextId: message.contextId,
      status: { state: 'submitted', timestamp: nowIso(core.now) },
      artifacts: [],
      history: [message],
      generation: 1,
    };
    if (params.metadata) task.metadata = params.metadata;
    live = core.live.create({ task, push: [], creator: ownerKey(caller) });
  }
  if (configuration.pushConfig)
    await coordination.pushOnSend(live, configuration.pushConfig, version);
  return live;
}

/** Runs the agent's turn on the task a send began; its slot is given back when the turn ends. */
export function sendTurn(
  deps: SendDeps,
  { live, release }: Began,
  { params, version, caller, actingFor = caller }: SendContext,
): Promise<void> {
  return runTurn(deps.core, deps.coordination, {
    live,
    message: params.message,
    continued: live.stored,
    version,
    caller: actingFor,
  }).finally(release);
}

/**
 * Runs the turn and resolves with the answer: a Message, or the task once it is final (or, when
 * `immediate`, once it exists). A plain listener rather than a queue: the answer is decided
 * inside publish, in order.
 */
export function answerSend(
  deps: SendDeps,
  began: Began,
  ctx: SendContext,
  immediate: boolean,
): Promise<SendAnswer> {
  const { core } = deps;
  const { live } = began;
  return new Promise<SendAnswer>((resolve) => {
    let settled = false;
    const watcher: Listener = {
      push: (ev) => {
        if (ev.kind === 'message') finish({ message: ev.message });
        else if (immediate || (ev.kind === 'status' && ev.final)) finish({ task: live.rec.task });
      },
      close: () => {},
    };
    const stop = core.live.listen(live, watcher);
    const finish = (r: SendResult) => {
      if (settled) return;
      settled = true;
      stop();
      // The task as it is now, and the save that holds it: every change to a live task is saved
      // as it is made, so the last save started includes this state. With `returnImmediately` the
      // turn goes on after this; a later state is answered by nobody until it is stored.
      resolve('message' in r ? r : { task: snapshot(r.task), stored: live.lastSave });
    };
    const turn = sendTurn(deps, began, ctx);
    if (immediate && live.stored) finish({ task: live.rec.task });
    if (immediate && !live.stored) {
      // Give an agent that answers with a Message one turn of the event loop, then create the task.
      setImmediate(() => {
        if (live.reply) return finish({ message: live.reply });
        if (!settled && !live.stored) core.live.materialize(live);
        if (!settled && live.stored) finish({ task: live.rec.task });
      });
    }
    const afterTurn = () => {
      if (settled) return;
      if (live.reply) return finish({ message: live.reply });
      if (!live.stored) core.live.materialize(live);
      finish({ task: live.rec.task });
    };
    turn
      .catch((e) => turnCrashed(core, live, e))
      .then(afterTurn)
      .catch((e) => {
        turnCrashed(core, live, e);
        finish({ task: live.rec.task });
      });
  });
}
