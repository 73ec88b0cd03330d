/**
 * @module lib/a2a/store/log/compact — the task log's compaction: a sealed segment whose live records
 * are under half its bytes has them copied forward to the newest segment, in bounded steps on the
 * event loop, and is deleted once the index no longer points into it (committed first, so a
 * crash never leaves a row pointing at a deleted file). Deletion records are copied too while an
 * older segment may still hold a record they delete; the oldest segment's are dropped.
 */

import type { Log } from '../../../log.ts';
import { KIND_RECORD, type Outgoing, encodeFrames } from './frame.ts';
import type { LogIndex } from './log-index.ts';
import type { Segments } from './segments.ts';

/** Bytes of a segment one compaction step reads (about a few milliseconds of work). */
const COMPACT_STEP_BYTES = 4 << 20;

export class Compactor {
  /** The segment being copied forward, and how far. */
  private cursor: { seg: number; off: number } | undefined;
  /** Segments that still hold live records after a full pass (an unreadable frame): left alone. */
  private readonly stuck = new Set<number>();
  private running = false;
  /** The segment being written when this pass began; the pass ends before it. */
  private passEnd: number | undefined;
  private stopped = false;

  constructor(
    private readonly segments: Segments,
    private readonly index: LogIndex,
    private readonly log: Log,
  ) {}

  /** The next segment worth compacting: sealed, oldest first, live records under half its bytes. */
  candidate(): number | undefined {
    for (const seg of this.segments.list()) {
      if (seg === this.segments.current || this.stuck.has(seg)) continue;
      const live = this.index.liveOf(seg);
      if (live.n <= 0 || live.bytes * 2 < (this.segments.sizeOf(seg) ?? 0)) return seg;
    }
    return undefined;
  }

  /** Runs steps in the background, one per event-loop turn, while one is due. */
  runSoon(): void {
    if (this.running || this.stopped || !this.due) return;
    this.running = true;
    const step = () => {
      let more = false;
      try {
        more = !this.stopped && this.step();
      } catch (e) {
        this.log('error', 'task log compaction failed', { error: (e as Error).message });
      }
      if (more) setImmediate(step);
      else this.running = false;
    };
    setImmediate(step);
  }

  /** No more background steps (the store closes). */
  stop(): void {
    this.stopped = true;
  }

  /** True while a segment is being copied forward or one is worth it. */
  get due(): boolean {
    if (this.cursor !== undefined) return true;
    const seg = this.candidate();
    return seg !== undefined && (this.passEnd === undefined || seg < this.passEnd);
  }

  /**
   * One bounded step: copies the live records of up to COMPACT_STEP_BYTES of the segment under
   * way forward with one append, or deletes a segment that holds none. True while more is due.
   * @throws the file-system error of the append (disk full); the step changes nothing then.
   */
  step(): boolean {
    if (!this.cursor) {
      // A pass takes only segments older than the one being written when it began: what it copies
      // forward (deletions an older segment still needs) may leave a new segment as thin as the
      // old, which must not become the same pass's next candidate (a pass that never ends).
      this.passEnd ??= this.segments.current;
      const seg = this.candidate();
      if (seg === undefined || seg >= this.passEnd) {
        this.passEnd = undefined;
        return false;
      }
      this.cursor = { seg, off: 0 };
    }
    const { seg } = this.cursor;
    if (this.index.liveOf(seg).n > 0) this.copyForward(seg);
    else this.cursor.off = this.segments.sizeOf(seg) ?? 0;
    if (this.cursor.off < (this.segments.sizeOf(seg) ?? 0)) return true;
    this.cursor = undefined;
    this.index.commit(); // the moves are committed before the file they left goes
    if (this.index.liveOf(seg).n > 0) {
      this.log('warn', 'task log segment still holds live records after compaction; kept', {
        segment: seg,
        records: this.index.liveOf(seg).n,
      });
      this.stuck.add(seg);
    } else {
      this.segments.remove(seg);
      this.index.forget(seg);
      this.index.commit();
    }
    const more = this.due;
    if (!more) this.passEnd = undefined; // the pass is over
    return more;
  }

  private copyForward(seg: number): void {
    const cur = this.cursor!;
    const oldest = this.segments.list()[0] === seg;
    const items: Outgoing[] = [];
    const { end, torn } = this.segments.scan(
      seg,
      cur.off,
      (f) => {
        const at = this.index.locate(f.id);
        if (f.kind === KIND_RECORD) {
          if (at && at.seg === seg && at.off === f.off)
            items.push({ kind: f.kind, id: f.id, raw: f.body });
        } else if (!oldest && !at) items.push({ kind: f.kind, id: f.id, raw: f.body });
      },
      COMPACT_STEP_BYTES,
    );
    if (items.length) {
      const sizes: number[] = [];
      const to = this.segments.append(encodeFrames(items, sizes));
      let off = to.off;
      for (let i = 0; i < items.length; i++) {
        const it = items[i]!;
        if (it.kind === KIND_RECORD) {
          const prev = this.index.locate(it.id)!;
          this.index.move(it.id, { seg: to.seg, off, size: sizes[i]! }, prev);
        }
        off += sizes[i]!;
      }
      this.index.advance(this.segments.end);
    }
    // A torn frame in a sealed segment ends what can be read of it.
    cur.off = torn ? (this.segments.sizeOf(seg) ?? end) : end;
  }
}
