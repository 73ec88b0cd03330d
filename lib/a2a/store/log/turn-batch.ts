/**
 * @module lib/a2a/store/log/turn-batch — the tasks saved in one event-loop turn, and who waits for
 * them: the first save of a turn schedules one write for the end of it, later saves join it, and
 * each waiter learns how that write went.
 */

interface Waiter {
  resolve(): void;
  reject(e: unknown): void;
}

export class TurnBatch {
  private readonly waiting = new Map<string, Waiter[]>();
  private scheduled = false;
  private done: Promise<void> = Promise.resolve();
  private signal: () => void = () => {};

  /**
   * `write` gets the ids of the turn's saves and answers, per id, undefined (written) or the
   * error; `after` runs once the waiters are told.
   */
  constructor(
    private readonly write: (ids: string[]) => unknown,
    private readonly after: () => void,
  ) {}

  /** True while the task has a save not yet written. */
  has(id: string): boolean {
    return this.waiting.has(id);
  }

  get size(): number {
    return this.waiting.size;
  }

  /** Resolves once the saves made so far are written (or failed). */
  get written(): Promise<void> {
    return this.waiting.size ? this.done : Promise.resolve();
  }

  /** A save of the task: resolves when the write that takes it succeeds. */
  add(id: string): Promise<void> {
    const p = new Promise<void>((resolve, reject) => {
      const w = this.waiting.get(id);
      if (w) w.push({ resolve, reject });
      else this.waiting.set(id, [{ resolve, reject }]);
    });
    if (!this.scheduled) {
      this.scheduled = true;
      this.done = new Promise((r) => {
        this.signal = r;
      });
      setImmediate(() => this.run());
    }
    return p;
  }

  /** Writes what is waiting now (the end of the turn, or sooner when the store needs it). */
  run(): void {
    if (!this.scheduled) return;
    this.scheduled = false;
    const batch = [...this.waiting];
    this.waiting.clear();
    let error: unknown;
    try {
      this.write(batch.map(([id]) => id));
    } catch (e) {
      error = e;
    }
    for (const [, w] of batch)
      for (const x of w) {
        if (error === undefined) x.resolve();
        else x.reject(error);
      }
    this.signal();
    this.after();
  }
}
