/**
 * @module lib/a2a/engine/shared-tasks — task coordination on a store several processes of the node
 * share (lib/a2a/store/postgres-store.ts, docs/scale-out.md). The process running a task's turn
 * writes it through its live copy (lib/a2a/engine/local-tasks.ts); another process continues,
 * cancels or changes a task it does not run through the store's row-locked update, and its
 * streams get the other processes' events from the store. Tasks a gone process left running are
 * failed here.
 */

import { a2aError, isA2AError, type A2AError } from '../errors.ts';
import type { RemoteChange, TaskCluster, TaskRecord } from '../store/task-store.ts';
import { appendEvent, eventsAfter } from '../store/event-log.ts';
import {
  TERMINAL_STATES,
  generationOf,
  type Message,
  type ProtocolVersion,
  type PushConfig,
  type Task,
  type TaskEvent,
} from '../types.ts';
import type { EngineCore, PushChange, TaskCoordination } from './core.ts';
import type { Live } from './live-tasks.ts';
import { LocalTasks, agentCancelHook } from './local-tasks.ts';
import {
  CANCELED_NOTE,
  ORPHANED_NOTE,
  eventLogBound,
  addToHistory,
  continuationProblem,
  notCancelable,
  notStored,
  rebuiltEvents,
  setStatus,
  snapshot,
  taskNotFound,
  withPush,
  type PushConfigInput,
} from './task-rules.ts';

type Updated = Awaited<ReturnType<TaskCluster['update']>>;

export class SharedTasks implements TaskCoordination {
  private readonly local: LocalTasks;

  constructor(
    private readonly core: EngineCore,
    private readonly cluster: TaskCluster,
  ) {
    this.local = new LocalTasks(core);
    cluster.onChange((id, change) => this.remoteChange(id, change));
    cluster.onOrphans((ids) => void this.takeOrphans(ids));
  }

  async record(id: string): Promise<TaskRecord | undefined> {
    const live = this.core.live.get(id);
    if (live && !live.stored) return undefined;
    // Only a turn of this process makes the live copy the newest.
    if (live?.turns.size) return live.rec;
    return this.core.store.get(id);
  }

  /**
   * A task whose turn runs elsewhere is claimed under the row lock; one still working on another
   * live process is refused (UNSUPPORTED_OPERATION) rather than run twice.
   */
  async continuation(message: Message, ifGenerationMatch?: number): Promise<Live | A2AError> {
    const id = message.taskId!;
    if (this.runsHere(id)) return this.local.continuation(message, ifGenerationMatch);
    let out: Updated;
    try {
      out = await this.cluster.update(
        id,
        (rec, turn) => {
          const refused = continuationProblem(rec.task, message, ifGenerationMatch);
          if (refused) return refused;
          if (turn.busyElsewhere)
            return a2aError(
              'UNSUPPORTED_OPERATION',
              `Task ${id} is ${rec.task.status.state} on another process of this node; send the next message when it asks for input or has ended`,
            );
          addToHistory(rec.task, message, this.core.limits);
          return [];
        },
        { claim: true },
      );
    } catch {
      return notStored();
    }
    if (!out) return taskNotFound(id, 'message.taskId');
    return isA2AError(out) ? out : this.core.live.adopt(out.rec);
  }

  /**
   * For a task whose turn (if any) runs on another process, the canceled state is written under
   * the row lock; the process running the turn reads it and stops. Webhooks get the event from
   * here, where it was made.
   */
  async cancel(id: string): Promise<Task | A2AError> {
    if (this.runsHere(id)) return this.local.cancel(id);
    const current = await this.core.store.get(id);
    if (!current) return taskNotFound(id, 'id');
    const before = current.task.status.state;
    if (before === 'canceled') return snapshot(current.task);
    if (TERMINAL_STATES.has(before)) return notCancelable(id, before);
    await agentCancelHook(this.core, current.task);
    let out: Updated;
    try {
      out = await this.cluster.update(id, (rec) => {
        const state = rec.task.status.state;
        if (state === 'canceled') return [];
        if (TERMINAL_STATES.has(state)) return notCancelable(id, state);
        return this.logged(rec, [
          setStatus(rec.task, 'canceled', CANCELED_NOTE, this.core.now, this.core.limits),
        ]);
      });
    } catch {
      return notStored();
    }
    if (!out) return taskNotFound(id, 'id');
    if (isA2AError(out)) return out;
    this.madeHere(out.rec, out.events);
    return snapshot(out.rec.task);
  }

  async watch<T>(
    id: string,
    missing: () => T,
    fn: (live: Live, stop: (() => void) | undefined) => T | Promise<T>,
  ): Promise<T> {
    if (this.runsHere(id)) return this.local.watch(id, missing, fn);
    // Register for other processes' events and read the task in one step, so nothing falls between.
    const rec = await this.cluster.watch(id);
    const live = rec && this.core.live.adopt(rec);
    return this.core.live.within(live, missing, (l) => fn(l, () => this.cluster.unwatch(id)));
  }

  /** Under the row lock; the live copy follows. */
  async changePush(taskId: string, change: PushChange): Promise<PushConfig[] | A2AError> {
    let out: PushConfig[] | A2AError | undefined;
    try {
      out = await this.cluster.updatePush(taskId, change);
    } catch {
      return notStored();
    }
    if (!out) return taskNotFound(taskId, 'taskId');
    const live = this.core.live.get(taskId);
    if (live && !isA2AError(out)) live.rec.push = out;
    return out;
  }

  async pushOnSend(
    live: Live,
    cfg: Omit<PushConfigInput, 'taskId'>,
    version: ProtocolVersion,
  ): Promise<void> {
    if (!live.stored) return this.local.pushOnSend(live, cfg, version);
    const taskId = live.rec.task.id;
    await this.changePush(taskId, (push) => withPush(push, { ...cfg, taskId }, version).push);
  }

  /** On a shared store, this process now runs the task: its lease is renewed until the turn ends. */
  turnStarted(id: string): void {
    this.cluster.hold(id);
  }

  turnEnded(id: string): void {
    this.cluster.release(id);
  }

  /**
   * The stream answers once the task is stored, so that every process of the node finds the task
   * its first frame names.
   */
  async openStream(live: Live, startTurn: () => Promise<void>): Promise<void> {
    const stored = live.stored
      ? undefined
      : new Promise<void>((resolve) => (live.onStored = resolve));
    const turn = startTurn();
    if (stored) await Promise.race([stored, turn]);
    await live.lastSave.catch(() => {});
  }

  /** Whether a turn of this process runs the task (then this process writes it). */
  private runsHere(id: string): boolean {
    const live = this.core.live.get(id);
    return !!live && live.stored && live.turns.size > 0;
  }

  /**
   * Another process changed a task live here: the live copy takes the stored one, a turn of this
   * process on it stops (the task was canceled, or another process took it over), and this
   * process's streams get the events. Webhooks were sent by the process that made them.
   */
  private remoteChange(id: string, change: RemoteChange): void {
    if (change.task) this.core.live.changed(change.task);
    const live = this.core.live.get(id);
    if (!live?.stored) return;
    live.rec.push = change.push;
    if (!change.task) return;
    const before = live.rec.task;
    const { creator } = live.rec;
    live.rec = {
      task: change.task,
      push: change.push,
      version: change.version,
      ...(creator ? { creator } : {}),
      ...(change.log ? { events: change.log } : {}),
    };
    for (const turn of live.turns) turn.abort();
    // The stored log has every event since the copy this process had, unless it was cut.
    const events =
      eventsAfter(change.task, change.log, generationOf(before)) ??
      rebuiltEvents(before, change.task);
    for (const event of events) this.core.live.publishLocal(live, event);
  }

  /**
   * Tasks a gone process of the node left running: no turn runs them any more, so this process
   * fails each (its webhooks and the streams watching it get the final state).
   */
  private async takeOrphans(ids: string[]): Promise<void> {
    const { agent, log, now, limits } = this.core;
    for (const id of ids) {
      try {
        const out = await this.cluster.update(
          id,
          (rec, turn) => {
            // An agent that can resume the task (the hub's delegations) keeps it, as at a restart.
            if (!turn.orphaned || agent.resumes?.(rec.task)) return null;
            return this.logged(rec, [setStatus(rec.task, 'failed', ORPHANED_NOTE, now, limits)]);
          },
          { claim: true },
        );
        if (out && !isA2AError(out) && out.events.length) {
          log('warn', 'task left running by a stopped process failed', { task: id });
          this.madeHere(out.rec, out.events);
        }
      } catch (e) {
        log('warn', 'taking over a task failed', {
          task: id,
          error: (e as Error)?.message ?? String(e),
        });
      }
    }
  }

  /** Events made under the row lock join the record's event log, written in the same transaction. */
  private logged(rec: TaskRecord, events: TaskEvent[]): TaskEvent[] {
    for (const e of events) appendEvent(rec, e, eventLogBound(this.core.limits));
    return events;
  }

  /** Events this process made outside a turn: to its streams and to the webhooks. */
  private madeHere(rec: TaskRecord, events: TaskEvent[]): void {
    const live = this.core.live.get(rec.task.id);
    if (live?.stored) live.rec = rec;
    this.core.live.changed(rec.task);
    for (const event of events) {
      if (live?.stored) this.core.live.publishLocal(live, event);
      if (rec.push.length && event.kind !== 'message') this.core.push?.notify(rec.push, event);
    }
  }
}
