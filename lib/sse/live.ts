/**
 * @module lib/sse/live — any subscription sent as Server-Sent Events through a bounded queue per
 * consumer: the hub's live pages and the mesh's `/v1/watch` (whose fan-out sends each event as a
 * frame made once, `readyFrame`).
 */

import { EventQueue } from '../event-queue.ts';
import { ReadyFrame, sseFrame } from './queue.ts';
import { sseResponse, type SseOptions } from './sse.ts';

/** `data` as one SSE frame made now, to be sent as is on every stream that carries it. */
export function readyFrame(data: unknown): ReadyFrame {
  return new ReadyFrame(sseFrame(data));
}

/** Items one consumer may fall behind before its stream is cut (its EventSource reconnects afresh). */
const LIVE_QUEUE_LIMIT = 64;

/**
 * Streams what `subscribe` delivers as SSE (one JSON `data:` line each) until the client leaves;
 * a consumer more than `maxItems` behind is cut off.
 */
export function liveResponse<T>(
  req: Request,
  subscribe: (push: (item: T) => void) => () => void,
  sse?: SseOptions,
  maxItems = LIVE_QUEUE_LIMIT,
): Response {
  let unsubscribe = () => {};
  const queue = new EventQueue<T>(() => unsubscribe(), { maxItems });
  unsubscribe = subscribe((item) => queue.push(item));
  if (queue.isClosed) unsubscribe();
  req.signal.addEventListener('abort', () => queue.close(), { once: true });
  return sseResponse(
    queue,
    (item) => item,
    () => queue.close(),
    sse,
  );
}
