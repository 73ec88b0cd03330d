/**
 * @module lib/a2a/engine/local-tasks — task coordination on a store this process alone writes (the
 * task log): the live copy of a task is the newest, and every change goes through it.
 * The shared store's coordination (lib/a2a/engine/shared-tasks.ts) falls back to this for the
 * tasks whose turn runs here.
 */

import { isA2AError, type A2AError } from '../errors.ts';
import type { TaskRecord } from '../store/task-store.ts';
import { TERMINAL_STATES, type Message, type ProtocolVersion, type Task } from '../types.ts';
import { applyUpdate } from './agent-turn.ts';
import type { EngineCore, PushChange, TaskCoordination } from './core.ts';
import type { Live } from './live-tasks.ts';
import {
  CANCELED_NOTE,
  addToHistory,
  continuationProblem,
  notCancelable,
  notStored,
  samePush,
  snapshot,
  taskNotFound,
  withPush,
  type PushConfigInput,
} from './task-rules.ts';

/** Calls the agent's cancel hook; its failure is logged and does not stop the cancel. */
export async function agentCancelHook(core: EngineCore, task: Task): Promise<void> {
  try {
    await core.agent.cancel?.(snapshot(task));
  } catch (e) {
    core.log('warn', 'agent cancel hook failed', {
      task: task.id,
      error: (e as Error)?.message ?? String(e),
    });
  }
}

export class LocalTasks implements TaskCoordination {
  constructor(private readonly core: EngineCore) {}

  async record(id: string): Promise<TaskRecord | undefined> {
    const live = this.core.live.get(id);
    if (live) return live.stored ? live.rec : undefined;
    return this.core.store.get(id);
  }

  async continuation(message: Message, ifGenerationMatch?: number): Promise<Live | A2AError> {
    const id = message.taskId!;
    const live = await this.core.live.forTurn(id);
    if (!live) return taskNotFound(id, 'message.taskId');
    const refused = continuationProblem(live.rec.task, message, ifGenerationMatch);
    if (refused) {
      this.core.live.letGo(live);
      return refused;
    }
    addToHistory(live.rec.task, message, this.core.limits);
    this.core.live.store(live);
    return live;
  }

  cancel(id: string): Promise<Task | A2AError> {
    return this.core.live.withLive(
      id,
      () => taskNotFound(id, 'id'),
      async (live): Promise<Task | A2AError> => {
        try {
          const state = live.rec.task.status.state;
          if (state === 'canceled') return snapshot(live.rec.task);
          if (TERMINAL_STATES.has(state)) return notCancelable(id, state);
          for (const turn of live.turns) turn.abort();
          await agentCancelHook(this.core, live.rec.task);
          if (TERMINAL_STATES.has(live.rec.task.status.state)) return snapshot(live.rec.task);
          applyUpdate(this.core, live, { kind: 'status', state: 'canceled', note: CANCELED_NOTE });
          await live.lastSave;
          return snapshot(live.rec.task);
        } catch {
          return notStored();
        }
      },
    );
  }

  watch<T>(
    id: string,
    missing: () => T,
    fn: (live: Live, stop: (() => void) | undefined) => T | Promise<T>,
  ): Promise<T> {
    return this.core.live.withLive(id, missing, (live) => fn(live, undefined));
  }

  changePush(taskId: string, change: PushChange) {
    return this.core.live.withLive(
      taskId,
      () => taskNotFound(taskId, 'taskId'),
      async (live) => {
        const before = live.rec.push;
        const next = change(before);
        if (isA2AError(next) || samePush(before, next)) return next;
        live.rec.push = next;
        this.core.live.store(live);
        try {
          await live.lastSave;
        } catch {
          return notStored();
        }
        return next;
      },
    );
  }

  async pushOnSend(
    live: Live,
    cfg: Omit<PushConfigInput, 'taskId'>,
    version: ProtocolVersion,
  ): Promise<void> {
    live.rec.push = withPush(live.rec.push, { ...cfg, taskId: live.rec.task.id }, version).push;
  }

  turnStarted(): void {}
  turnEnded(): void {}

  async openStream(_live: Live, startTurn: () => Promise<void>): Promise<void> {
    void startTurn();
  }
}
