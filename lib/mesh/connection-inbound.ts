/**
 * @module lib/mesh/connection-inbound — inbound messages of one presence: queued in sequence order,
 * handed to the handler one at a time, and acknowledged (`delivered`, or `delivery_failed` with the
 * handler's error) after it finishes.
 */

import type { ConnectionContext } from './connection-context.ts';
import { sendFrame } from './connection-socket.ts';
import { MESH_LIMITS } from './limits.ts';
import { truncateUtf8, type MeshMessage } from './wire.ts';

/** Queues a message at its place by sequence and starts the handler if it is idle. */
export function enqueue(c: ConnectionContext, m: MeshMessage): void {
  let i = c.inbound.length;
  while (i > 0 && c.inbound[i - 1]!.sequence > m.sequence) i--;
  c.inbound.splice(i, 0, m);
  void drain(c);
}

async function drain(c: ConnectionContext): Promise<void> {
  if (c.draining) return;
  c.draining = true;
  while (c.inbound.length > 0 && !c.closed) {
    const m = c.inbound.shift()!;
    try {
      await c.o.onMessage?.(m);
      sendFrame(c, { type: 'delivered', messageId: m.messageId });
    } catch (e) {
      const text = e instanceof Error ? e.message : String(e);
      sendFrame(c, {
        type: 'delivery_failed',
        messageId: m.messageId,
        error: truncateUtf8(text || 'handler failed', MESH_LIMITS.maxDeliveryErrorBytes),
      });
    }
  }
  c.draining = false;
}
