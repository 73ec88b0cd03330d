/**
 * @module lib/a2a/store/log/segments — the task log's segment files, `<dir>/segments/<n>.log`
 * (n counting up, 8 digits), each a file of JSON Lines (lib/a2a/store/log/frame.ts): appends go
 * to the newest one, one `write` per batch, until it passes the segment size and the next is
 * created; reads are positioned reads through open descriptors; a failed append is cut back off,
 * so a segment never holds half a batch followed by more.
 */

import {
  closeSync,
  fdatasyncSync,
  fstatSync,
  ftruncateSync,
  mkdirSync,
  openSync,
  readdirSync,
  readSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import { type BadLine, decodeFrame, type Frame } from './frame.ts';

const NAME = /^(\d{8})\.log$/;
/** How much a scan reads at a time (a longer line is read whole). */
const SCAN_CHUNK = 1 << 20;

/** Where a frame lies. */
export interface Loc {
  seg: number;
  off: number;
  size: number;
}

export class Segments {
  readonly dir: string;
  private readonly fds = new Map<number, number>();
  private readonly sizes = new Map<number, number>();
  private head = 0;
  /** Bytes of every segment, kept as they change (hasRoom reads it per new task). */
  private total = 0;

  /** Opens the folder's segments (creating the folder and a first segment when there is none). */
  constructor(
    root: string,
    private readonly segmentBytes: number,
    private readonly sync: boolean,
  ) {
    this.dir = join(root, 'segments');
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    const found = readdirSync(this.dir)
      .map((n) => NAME.exec(n)?.[1])
      .filter((n): n is string => n !== undefined)
      .map(Number)
      .sort((a, b) => a - b);
    for (const n of found) {
      const fd = openSync(this.path(n), 'r+');
      this.fds.set(n, fd);
      this.sizes.set(n, fstatSync(fd).size);
      this.total += this.sizes.get(n)!;
    }
    if (!found.length) this.create(1);
    else this.head = found[found.length - 1]!;
  }

  /** Segment numbers, oldest first. */
  list(): number[] {
    return [...this.sizes.keys()].sort((a, b) => a - b);
  }

  /** The newest segment, the one appends go to. */
  get current(): number {
    return this.head;
  }

  sizeOf(seg: number): number | undefined {
    return this.sizes.get(seg);
  }

  /** Bytes of every segment on disk. */
  get bytes(): number {
    return this.total;
  }

  /** The end of the log: where the next append lands unless it rolls to a new segment. */
  get end(): { seg: number; off: number } {
    return { seg: this.head, off: this.sizes.get(this.head)! };
  }

  /**
   * Appends a batch with one write (plus `fdatasync` when the store syncs); answers where it
   * starts. A batch lands whole in one segment: a new one is begun when the current one is full.
   * @throws the file-system error (disk full); the segment is cut back to its size before.
   */
  append(buf: Uint8Array): { seg: number; off: number } {
    if (this.sizes.get(this.head)! >= this.segmentBytes) this.create(this.head + 1);
    const seg = this.head;
    const fd = this.fds.get(seg)!;
    const off = this.sizes.get(seg)!;
    try {
      let done = 0;
      while (done < buf.byteLength)
        done += writeSync(fd, buf, done, buf.byteLength - done, off + done);
      if (this.sync) fdatasyncSync(fd);
    } catch (e) {
      try {
        ftruncateSync(fd, off);
      } catch {}
      throw e;
    }
    this.sizes.set(seg, off + buf.byteLength);
    this.total += buf.byteLength;
    return { seg, off };
  }

  /** Makes every append so far durable (before a migration removes what it copied). */
  syncAll(): void {
    for (const fd of this.fds.values()) fdatasyncSync(fd);
  }

  /** The line at a location, checked; undefined when it is not there whole and intact. */
  read(loc: Loc): Frame | undefined {
    const fd = this.fds.get(loc.seg);
    if (fd === undefined || loc.off + loc.size > this.sizes.get(loc.seg)!) return undefined;
    const buf = Buffer.allocUnsafe(loc.size);
    if (readSync(fd, buf, 0, loc.size, loc.off) !== loc.size) return undefined;
    const f = decodeFrame(buf, 0, loc.off);
    return typeof f === 'string' || 'bad' in f || f.size !== loc.size ? undefined : f;
  }

  /**
   * Calls `onFrame` for each intact line of a segment from `from` on, in order, until the end or
   * (between reads) `limit` bytes, and `onBad` for each whole line that is not intact (skipped);
   * answers where it stopped, `torn` when the segment ends inside a line (no newline yet).
   */
  scan(
    seg: number,
    from: number,
    onFrame: (f: Frame) => void,
    limit = Number.POSITIVE_INFINITY,
    onBad?: (off: number, line: BadLine) => void,
  ): { end: number; torn: boolean } {
    const fd = this.fds.get(seg);
    if (fd === undefined) return { end: from, torn: false };
    const size = this.sizes.get(seg)!;
    let at = from;
    let want = SCAN_CHUNK;
    while (at < size && at - from < limit) {
      const n = Math.min(want, size - at);
      const buf = Buffer.allocUnsafe(n);
      readSync(fd, buf, 0, n, at);
      let i = 0;
      for (;;) {
        const f = decodeFrame(buf, i, at);
        if (f === 'short') break;
        if ('bad' in f) onBad?.(at + i, f);
        else onFrame(f);
        i += f.size;
      }
      if (i === 0) {
        if (n === size - at) return { end: at, torn: true }; // the file ends inside a line
        want = n * 2; // one line longer than a read: read more of it
        continue;
      }
      at += i;
      want = SCAN_CHUNK;
    }
    return { end: at, torn: false };
  }

  /** The 1-based line number of the line at byte `off` of a segment (to report where a bad one lies). */
  lineAt(seg: number, off: number): number {
    const fd = this.fds.get(seg);
    if (fd === undefined) return 0;
    let line = 1;
    const buf = Buffer.allocUnsafe(SCAN_CHUNK);
    for (let at = 0; at < off; at += SCAN_CHUNK) {
      const n = readSync(fd, buf, 0, Math.min(SCAN_CHUNK, off - at), at);
      for (let i = buf.indexOf(0x0a); i >= 0 && i < n; i = buf.indexOf(0x0a, i + 1)) line++;
    }
    return line;
  }

  /** The file name of a segment, as an operator finds it. */
  fileOf(seg: number): string {
    return this.path(seg);
  }

  /** Cuts a segment at `size` (a torn end). */
  truncate(seg: number, size: number): void {
    ftruncateSync(this.fds.get(seg)!, size);
    this.total += size - this.sizes.get(seg)!;
    this.sizes.set(seg, size);
  }

  /** Deletes a segment no live record lies in (never the current one). */
  remove(seg: number): void {
    if (seg === this.head) return;
    const fd = this.fds.get(seg);
    if (fd === undefined) return;
    closeSync(fd);
    this.fds.delete(seg);
    this.total -= this.sizes.get(seg)!;
    this.sizes.delete(seg);
    unlinkSync(this.path(seg));
  }

  /** Begins a new segment after the current one, so that later appends go there. */
  roll(): void {
    if (this.sizes.get(this.head)! > 0) this.create(this.head + 1);
  }

  close(): void {
    for (const fd of this.fds.values()) closeSync(fd);
    this.fds.clear();
  }

  private path(seg: number): string {
    return join(this.dir, `${String(seg).padStart(8, '0')}.log`);
  }

  private create(seg: number): void {
    const fd = openSync(this.path(seg), 'wx+', 0o600);
    this.fds.set(seg, fd);
    this.sizes.set(seg, 0);
    this.head = seg;
  }
}
