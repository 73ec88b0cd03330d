/**
 * @module event-queue — a single-consumer async queue: producers `push` without waiting, the
 * consumer iterates with `for await`, and `close` ends the iteration after the items already
 * queued. Given a `limit`, a queue whose consumer falls that far behind closes instead of growing.
 */

export class EventQueue<T> implements AsyncIterable<T> {
  private readonly items: T[] = [];
  private wake: (() => void) | null = null;
  private closed = false;

  /**
   * `onClose` runs once when the queue closes (by either side); used to unsubscribe. `limit`: how
   * many items may wait; one more closes the queue (a live view the consumer reloads, never a backlog).
   */
  constructor(private readonly onClose?: () => void, private readonly limit = Infinity) {}

  get isClosed(): boolean {
    return this.closed;
  }

  push(item: T): void {
    if (this.closed) return;
    if (this.items.length >= this.limit) return this.close();
    this.items.push(item);
    this.wake?.();
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.wake?.();
    this.onClose?.();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<T> {
    try {
      while (true) {
        if (this.items.length) {
          yield this.items.shift()!;
          continue;
        }
        if (this.closed) return;
        await new Promise<void>((resolve) => (this.wake = resolve));
        this.wake = null;
      }
    } finally {
      this.close();
    }
  }
}
