/**
 * @module lib/a2a/engine/long-polls — A2A 1.1's long-poll (`GetTask` with `currentGeneration`,
 * the `dev-1.1` branch §3.2.7): a read that is held until the task's generation passes the one
 * the caller names, or until a bounded wait ends, and then answers the task as it is. Held reads
 * are counted per principal and per process (refused past either bound, nothing held), and each
 * costs a small waiter: no live copy of the task, no queue. On a shared store the held task is
 * watched so another process's change wakes it. A read whose client goes away (the request's
 * abort signal) ends at once and frees its slot.
 */

import { ownerKey, type Principal } from '../../auth/principal.ts';
import { A2A_ERRORS, a2aError, type A2AError } from '../errors.ts';
import type { TaskCluster, TaskRecord } from '../store/task-store.ts';
import { TERMINAL_STATES, generationOf, type Task } from '../types.ts';
import type { LiveTasks } from './live-tasks.ts';

export interface LongPollBounds {
  /** How long a read is held at most (ms). */
  waitMs: number;
  /** Reads held at once in this process. */
  max: number;
  /** Reads held at once for one principal (all anonymous callers are one). */
  perPrincipal: number;
}

/** What a held read needs: the current record, the live tasks (to await a save), the cluster. */
export interface LongPollDeps {
  record(id: string): Promise<TaskRecord | undefined>;
  live: LiveTasks;
  cluster: TaskCluster | undefined;
  /**
   * Lets an agent that advances tasks on read (`Agent.observe`) advance a held task: called at
   * most once every `observeEveryMs` per task while reads are held on it, however many.
   */
  observe?: ((id: string) => Promise<void>) | undefined;
  observeEveryMs?: number;
}

interface Waiter {
  after: number;
  wake(): void;
}

/** True when a read naming `after` answers at once: the task moved past it, or can move no more. */
export function passed(task: Task, after: number): boolean {
  return generationOf(task) > after || TERMINAL_STATES.has(task.status.state);
}

export class LongPolls {
  /** Waiters by task id. */
  private readonly waiting = new Map<string, Set<Waiter>>();
  private readonly perOwner = new Map<string, number>();
  private heldNow = 0;

  constructor(
    private readonly bounds: LongPollBounds,
    private readonly deps: LongPollDeps,
  ) {}

  /** Reads held right now in this process. */
  get held(): number {
    return this.heldNow;
  }

  /** A task changed (here, or on another process of the node): wakes the reads it passed. */
  changed(task: Task): void {
    const set = this.waiting.get(task.id);
    if (!set) return;
    for (const w of set) if (passed(task, w.after)) w.wake();
  }

  /** Ends every held read (shutdown): each answers the task as it is. */
  close(): void {
    for (const set of this.waiting.values()) for (const w of set) w.wake();
  }

  /**
   * Holds the read of task `id` until its generation passes `after` or the wait ends, then answers
   * its record as stored; the refusal past a bound. `rec` is the record read before. When `gone`
   * aborts (the client went away) the read ends at once with `rec`, which nobody reads.
   */
  async hold(
    id: string,
    after: number,
    caller: Principal,
    rec: TaskRecord,
    gone?: AbortSignal,
  ): Promise<TaskRecord | A2AError | undefined> {
    if (gone?.aborted) return rec;
    const owner = ownerKey(caller);
    const mine = this.perOwner.get(owner) ?? 0;
    if (this.heldNow >= this.bounds.max)
      return a2aError('LONG_POLLS_FULL', A2A_ERRORS.LONG_POLLS_FULL.message);
    if (mine >= this.bounds.perPrincipal)
      return a2aError('TOO_MANY_LONG_POLLS', A2A_ERRORS.TOO_MANY_LONG_POLLS.message);
    this.perOwner.set(owner, mine + 1);
    this.heldNow++;
    const { cluster } = this.deps;
    try {
      // On a shared store: register for other processes' changes and read again, in one step.
      const current = cluster ? await cluster.watch(id) : rec;
      try {
        if (!current) return undefined;
        if (!passed(current.task, after)) await this.wait(id, after, gone);
      } finally {
        if (current && cluster) cluster.unwatch(id);
      }
      if (gone?.aborted) return rec;
      // A change made here is answered once its save is done: never a state a crash could take back.
      const live = this.deps.live.get(id);
      if (live?.stored) await live.lastSave.catch(() => {});
      return await this.deps.record(id);
    } finally {
      this.heldNow--;
      const left = (this.perOwner.get(owner) ?? 1) - 1;
      if (left > 0) this.perOwner.set(owner, left);
      else this.perOwner.delete(owner);
    }
  }

  /** One loop per held task: observed every `observeEveryMs` while `set` (its reads) is held. */
  private observeWhileHeld(id: string, set: Set<Waiter>): void {
    const { observe, observeEveryMs = 1_000 } = this.deps;
    if (!observe) return;
    const held = () => set.size > 0 && this.waiting.get(id) === set;
    const tick = async (): Promise<void> => {
      if (!held()) return;
      await observe(id);
      if (held()) setTimeout(() => void tick(), observeEveryMs).unref();
    };
    setTimeout(() => void tick(), observeEveryMs).unref();
  }

  /** Resolves once `changed` reports the task past `after`, after the wait bound, or on `gone`. */
  private wait(id: string, after: number, gone?: AbortSignal): Promise<void> {
    return new Promise<void>((resolve) => {
      let set = this.waiting.get(id);
      if (!set) this.waiting.set(id, (set = new Set()));
      const waiter: Waiter = {
        after,
        wake: () => {
          clearTimeout(timer);
          gone?.removeEventListener('abort', waiter.wake);
          set!.delete(waiter);
          if (!set!.size && this.waiting.get(id) === set) this.waiting.delete(id);
          resolve();
        },
      };
      const timer = setTimeout(waiter.wake, this.bounds.waitMs);
      gone?.addEventListener('abort', waiter.wake);
      set.add(waiter);
      if (set.size === 1) this.observeWhileHeld(id, set);
      // A change that landed while the record was read (the live copy is the newest here).
      const live = this.deps.live.get(id);
      if (live?.stored && passed(live.rec.task, after)) waiter.wake();
    });
  }
}
