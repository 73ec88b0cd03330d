/**
 * @module lib/a2a/engine/live-tasks — the in-memory state of the tasks that have a running agent
 * turn, a subscriber or a reader right now: one entry per task, taken with `withLive` (or held by
 * a turn or a subscription) and forgotten when nobody uses it, so memory does not grow with the
 * task count. It also stores a live task's changes and fans its events out, in order, to its
 * streams and webhooks.
 */

import { EventQueue } from '../../event-queue.ts';
import type { Message, PushConfig, Task, TaskEvent } from '../types.ts';
import type { TaskRecord, TaskStore } from '../store/task-store.ts';
import { appendEvent, DEFAULT_EVENT_LOG, type EventLogBound } from '../store/event-log.ts';
import { endsStream, snapshot } from './task-rules.ts';

/** A live subscription: the queue of events, ending after a terminal or interrupted state. */
export type Subscription = EventQueue<TaskEvent>;

/** The generation an event made (a Task's own), or undefined for a Message. */
function generationOfEvent(e: TaskEvent): number | undefined {
  return e.kind === 'task' ? e.task.generation : e.kind === 'message' ? undefined : e.generation;
}

/**
 * A subscription that passes each generation once, in order: an event at or below the last
 * generation it passed is dropped, so a replay from the event log and the live events after it
 * meet without a duplicate.
 */
export class TaskSubscription extends EventQueue<TaskEvent> {
  private seen = 0;

  override push(event: TaskEvent): void {
    const g = generationOfEvent(event);
    if (g !== undefined) {
      if (g <= this.seen) return;
      this.seen = g;
    }
    super.push(event);
  }
}

/** Receives a task's events in order; `close` ends a stream after its final event. */
export interface Listener {
  push(event: TaskEvent): void;
  close(): void;
}

/** In-memory state of a task that has a running agent turn or a subscriber. */
export interface Live {
  rec: TaskRecord;
  /** False until the first event of a brand-new task; until then nothing is stored or visible. */
  stored: boolean;
  subscribers: Set<Listener>;
  turns: Set<AbortController>;
  lastSave: Promise<void>;
  /** Set when the agent answered a brand-new task with a Message; no task is created then. */
  reply?: Message;
  /** Called when a brand-new task is first stored (a shared store's stream waits for it). */
  onStored?: () => void;
  /** An observation in progress (the engine's `observe`), shared by concurrent reads. */
  observing?: Promise<void> | undefined;
  /** Stored size of the task's artifacts, measured on the first artifact update. */
  artifactBytes?: number;
}

export interface LiveTasksOptions {
  store: TaskStore;
  /** How much of each task's events its stored log keeps (default LIMITS). */
  eventLog?: EventLogBound;
  /** Sees every event a live task makes here (the node's metrics count state changes). */
  onEvent?: ((event: TaskEvent) => void) | undefined;
  /** Webhook delivery, when the node has it. */
  notify?: ((configs: readonly PushConfig[], event: TaskEvent) => void) | undefined;
  /** Hears that a task changed, live here or not (held long-polls wake on it). */
  changed?: ((task: Task) => void) | undefined;
}

function fresh(rec: TaskRecord, stored: boolean): Live {
  return { rec, stored, subscribers: new Set(), turns: new Set(), lastSave: Promise.resolve() };
}

export class LiveTasks {
  private readonly map = new Map<string, Live>();
  /** Brand-new tasks begun here and not yet stored: they count against the store's hard bound. */
  private readonly unstored = new Set<string>();

  constructor(private readonly opts: LiveTasksOptions) {}

  /** The live entry of a task, stored or not, without taking it. */
  get(id: string): Live | undefined {
    return this.map.get(id);
  }

  /** How many brand-new tasks are begun and not yet stored. */
  get creating(): number {
    return this.unstored.size;
  }

  /** Every live entry (shutdown aborts their turns and ends their streams). */
  all(): IterableIterator<Live> {
    return this.map.values();
  }

  /** The entry of a brand-new task: not stored, invisible to readers until its first event. */
  create(rec: TaskRecord): Live {
    const live = fresh(rec, false);
    this.map.set(rec.task.id, live);
    this.unstored.add(rec.task.id);
    return live;
  }

  /** The live state for a record just read from a shared store; a live copy present takes it. */
  adopt(rec: TaskRecord): Live {
    const live = this.map.get(rec.task.id);
    if (live) {
      live.rec = rec;
      live.stored = true;
      return live;
    }
    return this.put(fresh(rec, true));
  }

  /**
   * Runs `fn` with the live state of a stored task (read from the store when nobody has it) and
   * lets it go afterwards, whatever `fn` does; `missing` answers for a task that is not stored.
   */
  async withLive<T>(id: string, missing: () => T, fn: (live: Live) => T | Promise<T>): Promise<T> {
    return this.within(await this.acquire(id), missing, fn);
  }

  /** `withLive` for an entry already in hand (adopted from a shared store). */
  async within<T>(
    live: Live | undefined,
    missing: () => T,
    fn: (live: Live) => T | Promise<T>,
  ): Promise<T> {
    if (!live) return missing();
    try {
      return await fn(live);
    } finally {
      this.release(live);
    }
  }

  /**
   * The entry a turn continues (taken until the turn ends, `endTurn`); a caller that does not start
   * the turn after all lets it go with `letGo`.
   */
  async forTurn(id: string): Promise<Live | undefined> {
    return this.acquire(id);
  }

  letGo(live: Live): void {
    this.release(live);
  }

  /** A turn of this process starts on the task: its abort controller. */
  startTurn(live: Live): AbortController {
    const controller = new AbortController();
    live.turns.add(controller);
    return controller;
  }

  /** The turn ended; `keep` is false when the task was answered with a Message (already forgotten). */
  endTurn(live: Live, controller: AbortController, keep = true): void {
    live.turns.delete(controller);
    if (keep) this.release(live);
  }

  /** A brand-new task answered with a Message: it never existed, nobody will read it. */
  forget(live: Live): void {
    this.map.delete(live.rec.task.id);
    this.unstored.delete(live.rec.task.id);
  }

  /** A stream of the task's events; closing it (either side) unsubscribes. */
  subscribe(live: Live, onClose?: () => void): Subscription {
    const sub: Subscription = new TaskSubscription(() => {
      live.subscribers.delete(sub);
      onClose?.();
      this.release(live);
    });
    live.subscribers.add(sub);
    return sub;
  }

  /** Adds a plain listener (one that decides inside publish, in order); the result removes it. */
  listen(live: Live, listener: Listener): () => void {
    live.subscribers.add(listener);
    return () => {
      live.subscribers.delete(listener);
      this.release(live);
    };
  }

  /**
   * Writes the task's record, with the change's event in its log (the same write); callers that
   * must know it is durable await `live.lastSave`.
   */
  store(live: Live, event?: TaskEvent): void {
    if (event) appendEvent(live.rec, event, this.opts.eventLog ?? DEFAULT_EVENT_LOG);
    const save = this.opts.store.save(live.rec);
    save.catch(() => {}); // reported by the store's log; callers awaiting lastSave see the failure
    live.lastSave = save;
  }

  /** An event this process made: to the metrics, this process's streams and the webhooks. */
  publish(live: Live, event: TaskEvent): void {
    this.opts.onEvent?.(event);
    this.publishLocal(live, event);
    if (live.rec.push.length && event.kind !== 'message') this.opts.notify?.(live.rec.push, event);
  }

  /** To this process's streams only. */
  publishLocal(live: Live, event: TaskEvent): void {
    for (const sub of live.subscribers) {
      sub.push(event);
      if (endsStream(event)) sub.close();
    }
    this.changed(live.rec.task);
  }

  /** A task changed, here or on another process: the reads held on it hear it. */
  changed(task: Task): void {
    this.opts.changed?.(task);
  }

  /** Stores a brand-new task and announces it; from here on it is visible to every reader. */
  materialize(live: Live): void {
    if (live.stored) return;
    live.stored = true;
    this.unstored.delete(live.rec.task.id);
    this.store(live);
    live.onStored?.();
    this.publish(live, { kind: 'task', task: snapshot(live.rec.task) });
  }

  /** The live state of a stored task, created on demand; paired with `release` by its callers here. */
  private async acquire(id: string): Promise<Live | undefined> {
    const live = this.map.get(id);
    if (live) return live.stored ? live : undefined;
    const rec = await this.opts.store.get(id);
    if (!rec) return undefined;
    const again = this.map.get(id); // another call may have made it meanwhile
    if (again) return again.stored ? again : undefined;
    return this.put(fresh(rec, true));
  }

  private put(live: Live): Live {
    this.map.set(live.rec.task.id, live);
    return live;
  }

  /** Forgets live state nobody uses any more, once its last write is done. */
  private release(live: Live): void {
    if (!this.unused(live)) return;
    const forget = () => {
      if (!this.unused(live)) return;
      this.map.delete(live.rec.task.id);
      if (!live.stored) this.unstored.delete(live.rec.task.id);
    };
    // Forget after the last write whether it worked or not; a failed write is the store's to log
    // and its callers' to answer, never an unhandled rejection here.
    live.lastSave.then(forget, forget);
  }

  private unused(live: Live): boolean {
    return (
      live.turns.size === 0 &&
      live.subscribers.size === 0 &&
      live.observing === undefined &&
      this.map.get(live.rec.task.id) === live
    );
  }
}

/** A subscription that holds a terminal task's snapshot and is already closed. */
export function finalOnly(task: Task): Subscription {
  const sub: Subscription = new TaskSubscription();
  sub.push({ kind: 'task', task: snapshot(task) });
  sub.close();
  return sub;
}
