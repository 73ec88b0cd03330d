/**
 * @module lib/a2a/sse — Server-Sent Events with a bounded queue per client: one `data: <json>` frame
 * per event, written as fast as the client reads. A client that falls more than `maxQueuedBytes`
 * behind gets its backlog dropped, one final frame saying why (`STREAM_TOO_SLOW`), and the end; a
 * server that shuts down ends every open stream with a final frame (`SHUTTING_DOWN`). A process
 * holds a bounded number of streams, and one principal a bounded share of them: past either a new
 * stream is answered 503 `STREAMS_FULL` / `PRINCIPAL_STREAMS_FULL`.
 */

import { LIMIT_ERRORS, type LimitErrorCode } from '../errors/limits.ts';
import { LIMITS } from '../limits.ts';

const HEARTBEAT_MS = 15_000;
/** How long a stream ended by the server waits for its client to take the final frame before the connection is cut. */
const FINAL_FRAME_GRACE_MS = 30_000;
const encoder = new TextEncoder();

const SSE_HEADERS = {
  'Content-Type': 'text/event-stream',
  'Cache-Control': 'no-cache',
  'X-Accel-Buffering': 'no',
} as const;

/** Why the server ended a stream before its source did. */
export type StreamEndCode = Extract<LimitErrorCode, 'STREAM_TOO_SLOW' | 'SHUTTING_DOWN'>;

/** The last frame of a stream the server ends: an optional event name and the JSON of its data line. */
export type StreamEnding = (
  code: StreamEndCode,
  message: string,
) => { event?: string; data: unknown };

/** The default last frame: `event: close` with `{code, message}`. */
export const closeEvent: StreamEnding = (code, message) => ({
  event: 'close',
  data: { code, message },
});

/** Bounds of the open streams of one process (LIMITS.sseStreams, LIMITS.sseStreamsPerPrincipal). */
export interface SseStreamLimits {
  max?: number;
  maxPerOwner?: number;
}

/**
 * The open streams of one server, so a shutdown can end each with its final frame, and so no
 * process holds more than `max` streams, nor one principal more than `maxPerOwner` of them.
 */
export class SseStreams {
  private readonly open = new Set<(code: StreamEndCode, message: string) => void>();
  private readonly perOwner = new Map<string, number>();
  private readonly max: number;
  private readonly maxPerOwner: number;

  constructor(limits: SseStreamLimits = {}) {
    this.max = limits.max ?? LIMITS.sseStreams;
    this.maxPerOwner = limits.maxPerOwner ?? LIMITS.sseStreamsPerPrincipal;
  }

  get size(): number {
    return this.open.size;
  }

  /** Streams open for `owner` (an owner key). */
  openFor(owner: string): number {
    return this.perOwner.get(owner) ?? 0;
  }

  /** Why a new stream for `owner` would be refused, or undefined when there is room. */
  full(owner: string | undefined): 'STREAMS_FULL' | 'PRINCIPAL_STREAMS_FULL' | undefined {
    if (this.open.size >= this.max) return 'STREAMS_FULL';
    if (owner !== undefined && this.openFor(owner) >= this.maxPerOwner)
      return 'PRINCIPAL_STREAMS_FULL';
    return undefined;
  }

  /** Ends every open stream with `code`: each gets its final frame after what it already has queued. */
  endAll(code: StreamEndCode, message: string = LIMIT_ERRORS[code].message): void {
    for (const end of [...this.open]) end(code, message);
  }

  /** @internal used by sseResponse */
  add(end: (code: StreamEndCode, message: string) => void, owner?: string): () => void {
    this.open.add(end);
    if (owner !== undefined) this.perOwner.set(owner, this.openFor(owner) + 1);
    let gone = false;
    return () => {
      if (gone) return;
      gone = true;
      this.open.delete(end);
      if (owner === undefined) return;
      const left = this.openFor(owner) - 1;
      if (left > 0) this.perOwner.set(owner, left);
      else this.perOwner.delete(owner);
    };
  }
}

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

function sseFrame(data: unknown, event?: string): Uint8Array {
  return encoder.encode(`${event ? `event: ${event}\n` : ''}data: ${JSON.stringify(data)}\n\n`);
}

/**
 * Streams `source` as SSE. `frame` turns each item into the JSON of one `data:` line. `stop`
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
  const ending = opts.ending ?? closeEvent;
  const queue: Uint8Array[] = [];
  let queued = 0;
  /** No more frames will be added: the source ended or the server ended the stream. */
  let finished = false;
  let canceled = false;
  let stopped = false;
  let wake: (() => void) | null = null;
  let heartbeat: ReturnType<typeof setInterval> | undefined;
  let grace: ReturnType<typeof setTimeout> | undefined;
  let unregister = () => {};
  let abort: ((reason: Error) => void) | undefined;

  const notify = () => {
    wake?.();
    wake = null;
  };
  const stopSource = () => {
    if (stopped) return;
    stopped = true;
    stop();
  };
  const cleanup = () => {
    clearInterval(heartbeat);
    clearTimeout(grace);
    unregister();
  };
  const enqueue = (bytes: Uint8Array) => {
    queue.push(bytes);
    queued += bytes.byteLength;
    notify();
  };
  /** The server ends the stream: one final frame after `keepBacklog ? the queue : nothing`. */
  const end = (code: StreamEndCode, message: string, keepBacklog: boolean) => {
    if (finished) return;
    finished = true;
    stopSource();
    if (!keepBacklog) {
      queue.length = 0;
      queued = 0;
    }
    const last = ending(code, message);
    enqueue(sseFrame(last.data, last.event));
    // A client that does not take even the final frame is cut off, so nothing of it stays.
    grace = setTimeout(
      () => abort?.(new Error('stream ended by the server')),
      FINAL_FRAME_GRACE_MS,
    );
  };

  const body = new ReadableStream<Uint8Array>(
    {
      start(controller) {
        abort = (reason) => {
          try {
            controller.error(reason);
          } catch {}
          cleanup();
        };
        if (opts.streams)
          unregister = opts.streams.add((code, message) => end(code, message, true), opts.owner);
        // A comment first, so the headers and the stream reach the client before any event.
        controller.enqueue(encoder.encode(': stream open\n\n'));
        heartbeat = setInterval(() => {
          if (!finished && queued === 0) enqueue(encoder.encode(': keep-alive\n\n'));
        }, HEARTBEAT_MS);
        void (async () => {
          try {
            for await (const item of source) {
              if (finished) break;
              enqueue(sseFrame(frame(item)));
              if (queued > maxQueued)
                end(
                  'STREAM_TOO_SLOW',
                  `${LIMIT_ERRORS.STREAM_TOO_SLOW.message} (more than ${maxQueued} bytes queued)`,
                  false,
                );
            }
          } catch {
            // The source failed; the stream ends with what it has.
          }
          finished = true;
          notify();
        })();
      },
      async pull(controller) {
        while (!queue.length && !finished && !canceled)
          await new Promise<void>((resolve) => (wake = resolve));
        const next = queue.shift();
        if (next) {
          queued -= next.byteLength;
          controller.enqueue(next);
          return;
        }
        if (!canceled) {
          cleanup();
          controller.close();
        }
      },
      cancel() {
        canceled = true;
        finished = true;
        queue.length = 0;
        queued = 0;
        cleanup();
        notify();
        stopSource();
      },
    },
    { highWaterMark: 0 },
  );
  return new Response(body, { status: 200, headers: SSE_HEADERS });
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
