/**
 * @module lib/sse/sse — Server-Sent Events with a bounded queue per client: one `data: <json>` frame
 * per event, written as fast as the client reads. A client that falls more than `maxQueuedBytes`
 * behind gets its backlog dropped, one final frame saying why (`STREAM_TOO_SLOW`), and the end; a
 * server that shuts down ends every open stream with a final frame (`SHUTTING_DOWN`). A process
 * holds a bounded number of streams, and one principal a bounded share of them: past either a new
 * stream is answered 503 `STREAMS_FULL` / `PRINCIPAL_STREAMS_FULL`. The queue is
 * lib/sse/queue.ts, the registry of open streams lib/sse/streams.ts.
 */

import { LIMIT_ERRORS } from '../errors/limits.ts';
import { LIMITS } from '../limits.ts';
import { closeEvent, ReadyFrame, SseQueue, sseFrame, type StreamEnding } from './queue.ts';
import type { SseStreams } from './streams.ts';

export type { StreamEnding } from './queue.ts';
export { SseStreams, type SseStreamLimits, type StreamEndCode } from './streams.ts';

const SSE_HEADERS = {
  'Content-Type': 'text/event-stream',
  'Cache-Control': 'no-cache',
  'X-Accel-Buffering': 'no',
} as const;

export interface SseOptions {
  /** Bytes the client may fall behind before the stream is ended (default LIMITS.sseQueueBytes). */
  maxQueuedBytes?: number;
  /** Where the stream registers so a shutdown can end it. */
  streams?: SseStreams;
  /** The final frame when the server ends the stream (default `closeEvent`). */
  ending?: StreamEnding;
  /** Whose stream this is (an owner key), counted against the per-principal bound of `streams`. */
  owner?: string;
}

/**
 * Streams `source` as SSE. `frame` turns each item into the JSON of one `data:` line (or gives a
 * `ReadyFrame`, sent as is); `idOf` gives an item's `id:` line (the cursor a client resumes
 * from with `Last-Event-ID`), when it has one. `stop`
 * runs once when the stream ends before the source does (the client went away, fell behind, or
 * the server shuts down), so the subscription is dropped.
 *
 * The body is pulled: a frame leaves the queue only when the connection takes it, so the queue's
 * size is exactly how far behind the client is (the kernel's socket buffers come first).
 */
export function sseResponse<T>(
  source: AsyncIterable<T>,
  frame: (item: T) => unknown,
  stop: () => void,
  opts: SseOptions = {},
  idOf?: (item: T) => string | undefined,
): Response {
  const maxQueued = opts.maxQueuedBytes ?? LIMITS.sseQueueBytes;
  // Past the process's or the principal's bound of open streams: 503, and the source is dropped.
  const full = opts.streams?.full(opts.owner);
  if (full) {
    stop();
    return Response.json(
      { error: { code: full, message: LIMIT_ERRORS[full].message } },
      {
        status: LIMIT_ERRORS[full].http,
        headers: { 'retry-after': '5', 'cache-control': 'no-store' },
      },
    );
  }
  const queue = new SseQueue(stop, opts.ending ?? closeEvent);
  const body = new ReadableStream<Uint8Array>(
    {
      start(controller) {
        queue.open(controller, opts.streams, opts.owner);
        void pump(source, frame, queue, maxQueued, idOf);
      },
      pull: (controller) => queue.pull(controller),
      cancel: () => queue.cancel(),
    },
    { highWaterMark: 0 },
  );
  return new Response(body, { status: 200, headers: SSE_HEADERS });
}

/** Moves the source's items into the queue; a client more than `maxQueued` bytes behind is ended. */
async function pump<T>(
  source: AsyncIterable<T>,
  frame: (item: T) => unknown,
  queue: SseQueue,
  maxQueued: number,
  idOf?: (item: T) => string | undefined,
): Promise<void> {
  try {
    for await (const item of source) {
      if (queue.finished) break;
      const data = frame(item);
      queue.enqueue(
        data instanceof ReadyFrame ? data.bytes : sseFrame(data, undefined, idOf?.(item)),
      );
      if (queue.queued > maxQueued)
        queue.end(
          'STREAM_TOO_SLOW',
          `${LIMIT_ERRORS.STREAM_TOO_SLOW.message} (more than ${maxQueued} bytes queued)`,
          false,
        );
    }
  } catch {
    // The source failed; the stream ends with what it has.
  }
  queue.sourceEnded();
}

/**
 * A stream of one `event: error` frame carrying `error` (a JSON-RPC error answer), then the end:
 * how the official SDK refuses a v0.3 `tasks/resubscribe`, whose clients read only SSE.
 */
export function sseErrorResponse(error: unknown): Response {
  return new Response(`event: error\ndata: ${JSON.stringify(error)}\n\n`, {
    status: 200,
    headers: SSE_HEADERS,
  });
}
