/**
 * @module lib/a2a/store/write-queue — the task stores' writes, serialised per task: one write at a time,
 * and the changes made while one waits to start are coalesced into it.
 */

interface Slot {
  tail: Promise<void>;
  queued: Promise<void> | null;
  pending: number;
}

export class WriteQueue {
  private readonly slots = new Map<string, Slot>();

  /** `settled` runs after each write finishes (the stores trim their caches then). */
  constructor(private readonly settled: () => void) {}

  /** True while the task has a write queued or in flight. */
  has(id: string): boolean {
    return this.slots.has(id);
  }

  /** How many tasks have a write queued or in flight. */
  get size(): number {
    return this.slots.size;
  }

  /** Resolves when the task's writes started so far have finished; undefined when it has none. */
  tail(id: string): Promise<void> | undefined {
    return this.slots.get(id)?.tail;
  }

  /** Resolves when every write started so far has finished. */
  async flush(): Promise<void> {
    await Promise.all([...this.slots.values()].map((s) => s.tail));
  }

  /**
   * Runs `write` after the task's write in flight, or joins the write already waiting to start.
   * The slot exists when this returns and `write` runs later (never synchronously), so the
   * caller may still update what `write` will read. A write that reads the record later than its
   * start is given `taken`, and changes keep
   * joining it until it calls that; any other write has taken what it writes when it starts.
   */
  enqueue(id: string, write: (taken: () => void) => Promise<void>, late = false): Promise<void> {
    let slot = this.slots.get(id);
    if (!slot) {
      slot = { tail: Promise.resolve(), queued: null, pending: 0 };
      this.slots.set(id, slot);
    }
    if (slot.queued) return slot.queued;
    const s = slot;
    const taken = () => {
      if (s.queued === run) s.queued = null;
    };
    const run: Promise<void> = s.tail.then(() => {
      if (!late) taken();
      return write(taken);
    });
    s.queued = run;
    s.pending++;
    const settle = () => {
      taken();
      s.pending--;
      if (s.pending === 0 && !s.queued) this.slots.delete(id);
      this.settled();
    };
    s.tail = run.then(settle, settle);
    return run;
  }
}
