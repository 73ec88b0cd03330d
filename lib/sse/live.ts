/**
 * @module lib/sse/live — any subscription sent as Server-Sent Events through a bounded queue per
 * consumer: the hub's live pages and the mesh's `/v1/watch` (whose fan-out sends each event as a
 * frame made once, `readyFrame`).
 */

import { EventQueue } from '../event-queue.ts';
import { ReadyFrame, sseFrame } from './queue.ts';
import { sseResponse, type SseOptions } from './sse.ts';

const encoder = new TextEncoder();

/**
 * `data` as one SSE frame made now, to be sent as is on every stream that carries it; with `id`,
 * the frame's `id:` line, which a browser's EventSource sends back as `Last-Event-ID` when it
 * reconnects.
 */
export function readyFrame(data: unknown, id?: string): ReadyFrame {
  const frame = sseFrame(data);
  if (id === undefined) return new ReadyFrame(frame);
  const head = encoder.encode(`id: ${id}\n`);
  const bytes = new Uint8Array(head.length + frame.length);
  bytes.set(head);
  bytes.set(frame, head.length);
  return new ReadyFrame(bytes);
}

/** Longest `Last-Event-ID` read; a longer one is not one this server sent. */
const MAX_EVENT_ID = 128;

/**
 * The `Last-Event-ID` a reconnecting EventSource sends: the id of the last frame it took;
 * undefined on a first connection, null when it is malformed (too long, control characters).
 */
export function lastEventId(req: Request): string | null | undefined {
  const v = req.headers.get('last-event-id');
  if (v === null || v === '') return undefined;
  return v.length > MAX_EVENT_ID || /[\u0000-\u001f]/.test(v) ? null : v;
}

/**
 * The frame that says a stream cannot go on from the client's `Last-Event-ID` (older than what
 * is kept, or not one this server sent): `event: reset` with `{code: "STREAM_RESET", message}`;
 * what follows is live, and the page reads what it missed afresh.
 */
export function resetFrame(message: string): ReadyFrame {
  return new ReadyFrame(sseFrame({ code: 'STREAM_RESET', message }, 'reset'));
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
