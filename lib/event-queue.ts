/**
 * @module lib/event-queue — a bounded single-consumer async queue: producers `push` without waiting,
 * the consumer iterates with `for await`, and `close` ends the iteration after the items already
 * queued. A consumer that lets more than `maxItems` pile up is cut off (`overflowed`): the queue
 * drops its items and closes, so a stalled reader never holds more than that.
 */

/** Items a queue holds by default before it gives up on its consumer. */
export const EVENT_QUEUE_MAX_ITEMS = 10_000;

export class EventQueue<T> implements AsyncIterable<T> {
  private readonly items: T[] = [];
  private wake: (() => void) | null = null;
  private closed = false;
  private overflow = false;
  private readonly maxItems: number;

  /** `onClose` runs once when the queue closes (by either side); used to unsubscribe. */
  constructor(
    private readonly onClose?: () => void,
    opts: { maxItems?: number } = {},
  ) {
    this.maxItems = opts.maxItems ?? EVENT_QUEUE_MAX_ITEMS;
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /** True when the queue closed because its consumer fell more than `maxItems` behind. */
  get overflowed(): boolean {
    return this.overflow;
  }

  push(item: T): void {
    if (this.closed) return;
    if (this.items.length >= this.maxItems) {
      this.overflow = true;
      this.items.length = 0;
      this.close();
      return;
    }
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
