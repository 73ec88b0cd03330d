/**
 * @module lib/a2a/engine/watched-tasks — lazy advancement for a task somebody is watching: while a
 * `SubscribeToTask` stream is open on a task the agent can advance (`observe`, e.g. a hub task
 * whose job runs on an executor), the task is observed once at once and then at most once every
 * `everyMs`, one loop per task however many subscribers it has. The loop ends with the last
 * subscriber or the task's final state: nobody watching, nothing polls.
 */

import { isFinalState } from '../types.ts';
import type { Live } from './live-tasks.ts';

export class WatchedTasks {
  private readonly loops = new Set<string>();

  constructor(
    private readonly observe: (id: string) => Promise<void>,
    private readonly everyMs: number,
  ) {}

  /** Tasks being advanced for their subscribers right now. */
  get size(): number {
    return this.loops.size;
  }

  /** Advances `live`'s task while it has subscribers (a second call for the same task adds nothing). */
  watch(live: Live): void {
    const id = live.rec.task.id;
    if (this.loops.has(id)) return;
    this.loops.add(id);
    const watched = () => live.subscribers.size > 0 && !isFinalState(live.rec.task.status.state);
    const tick = async (): Promise<void> => {
      if (watched()) await this.observe(id);
      if (!watched()) return void this.loops.delete(id);
      setTimeout(() => void tick(), this.everyMs).unref();
    };
    void tick();
  }
}
