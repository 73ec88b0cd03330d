/**
 * @module lib/a2a/store/postgres/task-count — the PostgreSQL store's count of its node's tasks and
 * of their stored bytes, kept in memory for the hard bounds (docs/limits.md): counted at start and
 * at each retention run, plus this process's inserts since and the new tasks whose insert has not
 * landed.
 */

import type { SQL } from 'bun';
import { LIMITS } from '../../../limits.ts';
import { hardBound } from '../task-store.ts';

/** A row's stored bytes, as the byte bound measures them: the task, its push configs, its events. */
export const ROW_BYTES =
  'octet_length(task) + octet_length(push) + coalesce(octet_length(events), 0)';

/** The node's tasks and their stored bytes. */
export async function countTasks(sql: SQL, node: string): Promise<{ n: number; bytes: number }> {
  const [row] = await sql.unsafe(
    `SELECT count(*) AS n, coalesce(sum(${ROW_BYTES}), 0) AS bytes FROM lume_a2a_tasks WHERE node = $1`,
    [node],
  );
  return { n: Number(row.n), bytes: Number(row.bytes) };
}

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
  /** Their stored bytes, counted likewise (an update's growth counts at the next run). */
  private bytes = 0;
  private insertedBytes = 0;
  /** Bytes of stored tasks past which new tasks are refused and finished ones pruned (`TASK_MAX_BYTES`). */
  maxBytes: number = LIMITS.taskMaxBytes;
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
    const { n, bytes } = await countTasks(sql, node);
    this.stored += n;
    this.bytes += bytes;
  }

  /** True while one more new task fits, with `pending` more begun and not yet saved. */
  fits(pending: number): boolean {
    return (
      this.stored + this.creating.size + pending < hardBound(this.bound()) &&
      this.bytes < this.maxBytes
    );
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
    return (this.stored > this.bound() || this.bytes > this.maxBytes) && TERMINAL.has(state);
  }

  saving(id: string): void {
    this.creating.add(id);
  }

  /**
   * A new task's insert: counted once it lands, no longer pending whatever happens. True when
   * 1 % of the bound has been inserted since retention last ran: it is due again.
   */
  async inserting(id: string, insert: Promise<void>, bytes: number): Promise<boolean> {
    try {
      await insert;
      this.stored++;
      this.insertsTotal++;
      this.bytes += bytes;
      this.insertedBytes += bytes;
      if (this.bytes > this.maxBytes) return true;
      return ++this.sinceRetention >= Math.max(1, this.bound() / 100);
    } finally {
      this.creating.delete(id);
    }
  }

  /** A retention run, after which the count is what it counted less what it deleted. */
  async recount(run: () => Promise<Pruned>): Promise<number> {
    this.sinceRetention = 0;
    const mark = this.insertsTotal;
    const markBytes = this.insertedBytes;
    const { deleted, counted, bytes } = await run();
    // Inserts that landed while the run went on may be counted twice: the estimate errs high.
    this.stored = counted - deleted + (this.insertsTotal - mark);
    this.bytes = bytes + (this.insertedBytes - markBytes);
    return deleted;
  }
}

/** What a retention run did: tasks deleted, tasks counted first, stored bytes left after it. */
export interface Pruned {
  deleted: number;
  counted: number;
  bytes: number;
}
