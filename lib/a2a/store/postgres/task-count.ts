/**
 * @module lib/a2a/store/postgres/task-count — the PostgreSQL store's count of its node's tasks,
 * kept in memory for the hard bound (docs/limits.md): counted at start and at each retention run,
 * plus this process's inserts since and the new tasks whose insert has not landed.
 */

import type { SQL } from 'bun';
import { hardBound } from '../task-store.ts';

/**
 * The terminal states: a task in one has no turn left to guard, so its write takes no lease and
 * retention may delete it at once.
 */
export const TERMINAL: ReadonlySet<string> = new Set([
  'completed',
  'failed',
  'canceled',
  'rejected',
]);

export class TaskCount {
  /** The node's tasks as this process last counted them, plus its inserts since. */
  private stored = 0;
  /** Inserts this process made in all; a retention run adds those made while it ran. */
  private insertsTotal = 0;
  /** New tasks saved whose insert has not landed: they count against the hard bound. */
  private readonly creating = new Set<string>();
  /** Tasks this process inserted since retention last ran: it runs again after 1 % of the bound. */
  private sinceRetention = 0;
  /** When a refusal last started retention (at most once a second, not once per request). */
  private recountAt = 0;

  /** `bound()` is the retention bound (read late: the store sets it after its fields). */
  constructor(private readonly bound: () => number) {}

  /** Reads the node's count once, at start. */
  async start(sql: SQL, node: string): Promise<void> {
    const [row] = await sql<
      { n: string }[]
    >`SELECT count(*) AS n FROM lume_a2a_tasks WHERE node = ${node}`;
    this.stored += Number(row!.n);
  }

  /** True while one more new task fits, with `pending` more begun and not yet saved. */
  fits(pending: number): boolean {
    return this.stored + this.creating.size + pending < hardBound(this.bound());
  }

  /**
   * Room for one more new task. Full as far as this process knows: the retention run under way,
   * or a new one (`start`, at most once a second however many requests are refused), recounts
   * what other processes inserted or deleted and deletes what finished; the answer follows it.
   */
  room(
    pending: () => number,
    running: Promise<number> | undefined,
    start: () => Promise<number> | undefined,
  ): boolean | Promise<boolean> {
    const fits = () => this.fits(pending());
    if (fits()) return true;
    const now = Date.now();
    let run = running;
    if (!run && now - this.recountAt >= 1000) {
      this.recountAt = now;
      run = start();
    }
    return run ? run.then(fits, () => false) : false;
  }

  /** A task was written in `state`: true when it finished past the retention bound (room can be made). */
  finishedOver(state: string): boolean {
    return this.stored > this.bound() && TERMINAL.has(state);
  }

  saving(id: string): void {
    this.creating.add(id);
  }

  /**
   * A new task's insert: counted once it lands, no longer pending whatever happens. True when
   * 1 % of the bound has been inserted since retention last ran: it is due again.
   */
  async inserting(id: string, insert: Promise<void>): Promise<boolean> {
    try {
      await insert;
      this.stored++;
      this.insertsTotal++;
      return ++this.sinceRetention >= Math.max(1, this.bound() / 100);
    } finally {
      this.creating.delete(id);
    }
  }

  /** A retention run, after which the count is what it counted less what it deleted. */
  async recount(run: () => Promise<{ deleted: number; counted: number }>): Promise<number> {
    this.sinceRetention = 0;
    const mark = this.insertsTotal;
    const { deleted, counted } = await run();
    // Inserts that landed while the run went on may be counted twice: the estimate errs high.
    this.stored = counted - deleted + (this.insertsTotal - mark);
    return deleted;
  }
}
