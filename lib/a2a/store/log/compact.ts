/**
 * @module lib/a2a/store/log/compact — the task log's compaction: a sealed segment has its live
 * records copied forward to the newest segment, in bounded steps, and is deleted once the index no
 * longer points into it (committed first, so a crash never leaves a row pointing at a deleted
 * file). A background pass takes the segments under half live records, and every older one that
 * holds anything else first; a full cycle (`full`) takes every sealed segment holding anything
 * but live records. Both go oldest first, so a deletion line is dropped: no older segment can
 * hold the record it deletes (else, past a stuck segment, it is copied forward too).
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
  /** Who waits for background compaction to have nothing due (`settled`). */
  private readonly idle: (() => void)[] = [];

  constructor(
    private readonly segments: Segments,
    private readonly index: LogIndex,
    private readonly log: Log,
  ) {}

  /** True when a segment holds bytes that are not live records (dead ones, deletions, bad lines). */
  private holdsDead(seg: number): boolean {
    const live = this.index.liveOf(seg);
    return live.n <= 0 || live.bytes < (this.segments.sizeOf(seg) ?? 0);
  }

  /**
   * Where the next background pass step begins: the oldest sealed segment under half live, or
   * the oldest one before it holding anything but live records, so that every deletion the pass
   * meets is dropped (none is older) and what it copies forward is live records only.
   */
  candidate(): number | undefined {
    let firstDead: number | undefined;
    for (const seg of this.segments.list()) {
      if (seg === this.segments.current || this.stuck.has(seg)) continue;
      if (firstDead === undefined && this.holdsDead(seg)) firstDead = seg;
      const live = this.index.liveOf(seg);
      if (live.n <= 0 || live.bytes * 2 < (this.segments.sizeOf(seg) ?? 0)) return firstDead;
    }
    return undefined;
  }

  /** Resolves once background compaction has nothing due (running it now if something is). */
  settled(): Promise<void> {
    return new Promise<void>((resolve) => {
      this.idle.push(resolve);
      this.runSoon();
      this.wakeIdle();
    });
  }

  private wakeIdle(): void {
    if (this.running || !this.idle.length) return;
    if (this.due && !this.stopped) return this.runSoon();
    for (const resolve of this.idle.splice(0)) resolve();
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
      else {
        this.running = false;
        this.wakeIdle();
      }
    };
    setImmediate(step);
  }

  /** No more background steps (the store closes). */
  stop(): void {
    this.stopped = true;
    this.wakeIdle();
  }

  /** True while a segment is being copied forward or one is worth it. */
  get due(): boolean {
    if (this.cursor !== undefined) return true;
    const seg = this.candidate();
    return seg !== undefined && (this.passEnd === undefined || seg < this.passEnd);
  }

  /**
   * One bounded background step: copies the live records of up to COMPACT_STEP_BYTES of the
   * segment under way forward with one append, or deletes a segment that holds none. True while
   * more is due.
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
    this.advance();
    const more = this.due;
    if (!more) this.passEnd = undefined; // the pass is over
    return more;
  }

  /**
   * A full cycle, now: the segment being written is sealed, then every sealed segment that holds
   * anything but live records is compacted, oldest first, each once (what it copies lands after
   * them, so the cycle ends). Oldest first, no older segment holds a deleted task's record when a
   * deletion is reached, so every deletion is dropped: the log is left at its live records, but
   * for what a stuck segment (a line compaction could not read) still holds and needs.
   * @throws the file-system error of an append (disk full); what was done so far stands.
   */
  full(): void {
    while (this.cursor) this.advance(); // the background's segment under way
    this.passEnd = undefined;
    this.segments.roll();
    const end = this.segments.current;
    for (const seg of this.segments.list()) {
      if (seg >= end || this.stuck.has(seg) || !this.holdsDead(seg)) continue;
      this.cursor = { seg, off: 0 };
      while (this.cursor) this.advance();
    }
  }

  /** Copies the next part of the cursor's segment; at its end, deletes it (or marks it stuck). */
  private advance(): void {
    const cursor = this.cursor!;
    const { seg } = cursor;
    if (this.index.liveOf(seg).n > 0 || this.olderHoldsDead(seg)) this.copyForward(seg);
    else cursor.off = this.segments.sizeOf(seg) ?? 0;
    if (cursor.off < (this.segments.sizeOf(seg) ?? 0)) return;
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
  }

  /**
   * True when a segment older than `seg` holds anything but live records: a deleted task's record
   * may lie there, so a deletion in `seg` must be kept. A segment of live records only holds no
   * record of a deleted task; every record of a task lies before its deletion.
   */
  private olderHoldsDead(seg: number): boolean {
    for (const s of this.segments.list()) {
      if (s >= seg) break;
      if (this.holdsDead(s)) return true;
    }
    return false;
  }

  private copyForward(seg: number): void {
    const cur = this.cursor!;
    const keepDeletions = this.olderHoldsDead(seg);
    const items: Outgoing[] = [];
    const { end, torn } = this.segments.scan(
      seg,
      cur.off,
      (f) => {
        const at = this.index.locate(f.id);
        if (f.kind === KIND_RECORD) {
          if (at && at.seg === seg && at.off === f.off)
            items.push({ kind: f.kind, id: f.id, raw: f.body });
        } else if (keepDeletions && !at) items.push({ kind: f.kind, id: f.id, raw: f.body });
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
