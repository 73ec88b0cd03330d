/**
 * @module lib/sse/queue — the queue of one SSE stream, between its source and the connection:
 * frames leave it only when the connection takes them, so its size in bytes is exactly how far
 * the client is behind. It keeps the stream alive with comments, ends it with one final frame
 * when the server says so, and cuts a client that does not take even that.
 */

import type { SseStreams, StreamEndCode } from './streams.ts';

const HEARTBEAT_MS = 15_000;
/** How long a stream ended by the server waits for its client to take the final frame before the connection is cut. */
const FINAL_FRAME_GRACE_MS = 30_000;
const encoder = new TextEncoder();

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

/**
 * A frame made once for many streams (a fan-out to every watcher): sent as its bytes, so each
 * event is serialised once however many streams carry it.
 */
export class ReadyFrame {
  constructor(readonly bytes: Uint8Array) {}
}

/** One SSE frame: an optional event name and one `data:` line of JSON. */
export function sseFrame(data: unknown, event?: string, id?: string): Uint8Array {
  const head = `${id ? `id: ${id}\n` : ''}${event ? `event: ${event}\n` : ''}`;
  return encoder.encode(`${head}data: ${JSON.stringify(data)}\n\n`);
}

/**
 * The frames of one stream not yet taken by its connection. `stop` runs once when the stream ends
 * before its source does (the client went away, fell behind, or the server shuts down).
 */
export class SseQueue {
  private readonly frames: Uint8Array[] = [];
  /** Bytes waiting for the client. */
  queued = 0;
  /** No more frames will be added: the source ended or the server ended the stream. */
  finished = false;
  private canceled = false;
  private stopped = false;
  private wake: (() => void) | null = null;
  private heartbeat: ReturnType<typeof setInterval> | undefined;
  private grace: ReturnType<typeof setTimeout> | undefined;
  private unregister = () => {};
  private streams: SseStreams | undefined;
  private abort: ((reason: Error) => void) | undefined;

  constructor(
    private readonly stop: () => void,
    private readonly ending: StreamEnding,
  ) {}

  /**
   * The stream's start: registers it with `streams` (so a shutdown ends it after its backlog),
   * sends the opening comment and starts the heartbeat.
   */
  open(
    controller: ReadableStreamDefaultController<Uint8Array>,
    streams: SseStreams | undefined,
    owner: string | undefined,
  ): void {
    this.abort = (reason) => {
      try {
        controller.error(reason);
      } catch {}
      this.cleanup();
    };
    this.streams = streams;
    if (streams)
      this.unregister = streams.add((code, message) => this.end(code, message, true), owner);
    // A comment first, so the headers and the stream reach the client before any event.
    controller.enqueue(encoder.encode(': stream open\n\n'));
    this.heartbeat = setInterval(() => {
      if (!this.finished && this.queued === 0) this.enqueue(encoder.encode(': keep-alive\n\n'));
    }, HEARTBEAT_MS);
  }

  enqueue(bytes: Uint8Array): void {
    this.frames.push(bytes);
    this.queued += bytes.byteLength;
    this.notify();
  }

  /** The server ends the stream: one final frame after `keepBacklog ? the queue : nothing`. */
  end(code: StreamEndCode, message: string, keepBacklog: boolean): void {
    if (this.finished) return;
    this.finished = true;
    this.streams?.noteEnd(code);
    this.stopSource();
    if (!keepBacklog) {
      this.frames.length = 0;
      this.queued = 0;
    }
    const last = this.ending(code, message);
    this.enqueue(sseFrame(last.data, last.event));
    // A client that does not take even the final frame is cut off, so nothing of it stays.
    this.grace = setTimeout(
      () => this.abort?.(new Error('stream ended by the server')),
      FINAL_FRAME_GRACE_MS,
    );
  }

  /** The source has nothing more (or failed): the stream ends once the queue is taken. */
  sourceEnded(): void {
    this.finished = true;
    this.notify();
  }

  /** The connection wants the next frame: waits for one, or closes the stream after the last. */
  async pull(controller: ReadableStreamDefaultController<Uint8Array>): Promise<void> {
    while (!this.frames.length && !this.finished && !this.canceled)
      await new Promise<void>((resolve) => (this.wake = resolve));
    const next = this.frames.shift();
    if (next) {
      this.queued -= next.byteLength;
      controller.enqueue(next);
      return;
    }
    if (!this.canceled) {
      this.cleanup();
      controller.close();
    }
  }

  /** The client went away: nothing more is queued and the source is stopped. */
  cancel(): void {
    this.canceled = true;
    this.finished = true;
    this.frames.length = 0;
    this.queued = 0;
    this.cleanup();
    this.notify();
    this.stopSource();
  }

  private notify(): void {
    this.wake?.();
    this.wake = null;
  }

  private stopSource(): void {
    if (this.stopped) return;
    this.stopped = true;
    this.stop();
  }

  private cleanup(): void {
    clearInterval(this.heartbeat);
    clearTimeout(this.grace);
    this.unregister();
  }
}
