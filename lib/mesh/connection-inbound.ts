/**
 * @module lib/mesh/connection-inbound — inbound messages of one presence: queued in sequence order,
 * handed to the handler one at a time, and acknowledged (`delivered`, or `delivery_failed` with the
 * handler's error) after it finishes.
 */

import { MESH_LIMITS } from './limits.ts';
import { truncateUtf8, type MeshMessage } from './wire.ts';

/** The queue of one presence; `ack` writes the acknowledgement frame (dropped once closed). */
export class InboundQueue {
  readonly #queue: MeshMessage[] = [];
  #draining = false;

  constructor(
    private readonly handle: (m: MeshMessage) => unknown,
    private readonly ack: (frame: object) => void,
  ) {}

  /** Queues a message at its place by sequence and starts the handler if it is idle. */
  push(m: MeshMessage): void {
    let i = this.#queue.length;
    while (i > 0 && this.#queue[i - 1]!.sequence > m.sequence) i--;
    this.#queue.splice(i, 0, m);
    void this.#drain();
  }

  /** Drops what is queued (the connection ended); a running handler finishes, its ack is dropped. */
  clear(): void {
    this.#queue.length = 0;
  }

  async #drain(): Promise<void> {
    if (this.#draining) return;
    this.#draining = true;
    while (this.#queue.length > 0) {
      const m = this.#queue.shift()!;
      try {
        await this.handle(m);
        this.ack({ type: 'delivered', messageId: m.messageId });
      } catch (e) {
        const text = e instanceof Error ? e.message : String(e);
        this.ack({
          type: 'delivery_failed',
          messageId: m.messageId,
          error: truncateUtf8(text || 'handler failed', MESH_LIMITS.maxDeliveryErrorBytes),
        });
      }
    }
    this.#draining = false;
  }
}
