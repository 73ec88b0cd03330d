/**
 * @module lib/sse/streams — the open streams of one process: a shutdown ends each with its
 * final frame, and no process holds more than a bounded number of them, nor one principal more
 * than a bounded share (LIMITS.sseStreams, LIMITS.sseStreamsPerPrincipal).
 */

import { LIMIT_ERRORS, type LimitErrorCode } from '../errors/limits.ts';
import { LIMITS } from '../limits.ts';

/** Why the server ended a stream before its source did. */
export type StreamEndCode = Extract<LimitErrorCode, 'STREAM_TOO_SLOW' | 'SHUTTING_DOWN'>;

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

  private tooSlow = 0;

  get size(): number {
    return this.open.size;
  }

  /** Streams ended so far because their client fell more than the queue bound behind. */
  get endedTooSlow(): number {
    return this.tooSlow;
  }

  /** @internal a stream of this registry was ended by the server, with `code` */
  noteEnd(code: StreamEndCode): void {
    if (code === 'STREAM_TOO_SLOW') this.tooSlow++;
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

  /** @internal used by sseResponse and the gRPC binding's streams */
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
