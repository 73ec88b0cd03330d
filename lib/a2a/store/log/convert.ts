/**
 * @module lib/a2a/store/log/convert — a task log in the binary framing of earlier versions
 * (opt-in `TASK_STORE=log`) converted once, at open, into JSON Lines (lib/a2a/store/log/frame.ts).
 * That framing put each change in a frame of lib/checked-frame.ts (the body's length and CRC-32,
 * u32 little-endian each) whose body is `T` (a record) or `D` (a deletion), the task id in 36
 * ASCII bytes and, for a record, its JSON. The converted segments are written beside the old ones
 * (`segments.converting/`) and made durable, the index (which points into the old ones) is
 * dropped, and only then are the folders swapped (`segments/` to `segments.binary/`, the new one
 * to `segments/`) and the old one removed. A crash before the swap leaves the old segments
 * untouched (the partial copy is discarded and the conversion begins again); one after it is
 * finished at the next open.
 */

import {
  closeSync,
  existsSync,
  fdatasyncSync,
  fstatSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readdirSync,
  readSync,
  renameSync,
  rmSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import { FRAME_HEAD, openFrame } from '../../../checked-frame.ts';
import type { Log } from '../../../log.ts';
import { isTaskId } from '../task-store.ts';
import { decodeFrame, encodeFrames, KIND_DELETE, KIND_RECORD, type Outgoing } from './frame.ts';

const NAME = /^\d{8}\.log$/;
/** A body's kind byte and task id, before a record's JSON. */
const ID_END = 37;
/** How much is read at a time (a longer frame or line is read whole). */
const CHUNK = 1 << 20;
/** Changes per write of a converted segment. */
const BATCH = 1_000;
const INDEX_FILES = ['log.sqlite', 'log.sqlite-wal', 'log.sqlite-shm'];

interface Tally {
  segments: number;
  records: number;
  deletions: number;
  lines: number;
  bytesBefore: number;
  bytesAfter: number;
}

/** Positioned reads of one file through a window that grows for a longer frame or line. */
class Window {
  private at = 0;
  private buf = Buffer.alloc(0);
  readonly size: number;
  constructor(private readonly fd: number) {
    this.size = fstatSync(fd).size;
  }
  /** The bytes from `off` on: at least `n` when the file has them. */
  from(off: number, n: number): Buffer {
    if (off < this.at || off + n > this.at + this.buf.byteLength) {
      const len = Math.min(Math.max(n, CHUNK), this.size - off);
      this.buf = Buffer.allocUnsafe(len);
      readSync(this.fd, this.buf, 0, len, off);
      this.at = off;
    }
    return this.buf.subarray(off - this.at);
  }
}

/** The old frame at `off`, or undefined when there is none intact there. */
function oldFrame(win: Window, off: number): { kind: number; body: Buffer } | undefined {
  if (win.size - off < FRAME_HEAD + ID_END) return undefined;
  const len = win.from(off, FRAME_HEAD).readUInt32LE(0);
  if (len < ID_END || off + FRAME_HEAD + len > win.size) return undefined;
  const body = openFrame(win.from(off, FRAME_HEAD + len), 0, ID_END);
  if (typeof body === 'string') return undefined;
  const kind = body[0]!;
  return kind === KIND_RECORD || kind === KIND_DELETE
    ? { kind, body: Buffer.from(body) }
    : undefined;
}

/** True when a segment begins with a frame of the binary framing. */
function isBinary(path: string): boolean {
  const fd = openSync(path, 'r');
  try {
    return oldFrame(new Window(fd), 0) !== undefined;
  } finally {
    closeSync(fd);
  }
}

/** One old frame as the change to write, or why it cannot be one. */
function change(kind: number, body: Buffer): Outgoing | string {
  const id = body.toString('latin1', 1, ID_END);
  if (!isTaskId(id)) return 'not a task id';
  if (kind === KIND_DELETE) return { kind, id };
  let json = body.toString('utf8', ID_END);
  if (json.includes('\n'))
    try {
      json = JSON.stringify(JSON.parse(json)); // one line, whatever its spacing
    } catch {
      return 'not JSON';
    }
  return { kind, id, json };
}

/**
 * Converts one segment into `to`: its binary frames from the start; after the first that is not
 * intact, what follows as JSON Lines (lines a later version appended to it are kept, whole lines
 * that are neither are reported and dropped, as is a torn end).
 */
function convertFile(from: string, to: string, tally: Tally, log: Log): void {
  const fd = openSync(from, 'r');
  const out = openSync(to, 'wx', 0o600);
  try {
    const win = new Window(fd);
    const items: Outgoing[] = [];
    let written = 0;
    const flush = () => {
      if (!items.length) return;
      const buf = encodeFrames(items, []);
      for (let done = 0; done < buf.byteLength; )
        done += writeSync(out, buf, done, buf.byteLength - done, written + done);
      written += buf.byteLength;
      items.length = 0;
    };
    const push = (it: Outgoing) => {
      items.push(it);
      if (items.length >= BATCH) flush();
    };
    const skipped = (at: number, why: string) =>
      log('warn', `task log conversion: skipped a change, never applied: ${why}`, {
        segment: from,
        at,
      });
    let off = 0;
    for (let f = oldFrame(win, off); f; f = oldFrame(win, off)) {
      const it = change(f.kind, f.body);
      if (typeof it === 'string') skipped(off, it);
      else {
        push(it);
        if (it.kind === KIND_RECORD) tally.records++;
        else tally.deletions++;
      }
      off += FRAME_HEAD + f.body.byteLength;
    }
    for (let want = CHUNK; off < win.size; ) {
      const line = decodeFrame(win.from(off, Math.min(want, win.size - off)), 0, off);
      if (line === 'short') {
        if (want >= win.size - off) {
          skipped(off, `a torn end of ${win.size - off} bytes`);
          break;
        }
        want *= 2;
        continue;
      }
      want = CHUNK;
      if ('bad' in line) skipped(off, line.bad);
      else {
        push({ kind: line.kind, id: line.id, raw: line.body });
        tally.lines++;
      }
      off += line.size;
    }
    flush();
    fdatasyncSync(out);
    tally.segments++;
    tally.bytesBefore += win.size;
    tally.bytesAfter += written;
  } finally {
    closeSync(out);
    closeSync(fd);
  }
}

function syncDir(dir: string): void {
  const fd = openSync(dir, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** The index is rebuilt from the converted segments (it points into the old ones). */
function dropIndex(dir: string): void {
  for (const n of INDEX_FILES)
    try {
      unlinkSync(join(dir, n));
    } catch {}
}

/** Ends a swap a crash interrupted: the converted folder in place, the old one gone. */
function finishSwap(dir: string, log: Log): void {
  const segments = join(dir, 'segments');
  const converting = join(dir, 'segments.converting');
  const old = join(dir, 'segments.binary');
  if (!existsSync(old)) return;
  if (!existsSync(segments)) {
    // Between the two renames: the converted folder was complete before the first.
    renameSync(existsSync(converting) ? converting : old, segments);
    syncDir(dir);
    if (!existsSync(old)) return; // the old folder was put back: converted again below
  }
  dropIndex(dir);
  rmSync(old, { recursive: true, force: true });
  log('info', 'task log: a conversion to JSON Lines a restart interrupted is finished', {});
}

/**
 * Converts the log in `dir` when a segment is in the binary framing, once (a log in JSON Lines
 * is left as it is); answers whether it did.
 * @throws the file-system error when the folder cannot be read or written (the old segments stay).
 */
export function convertBinaryLog(dir: string, log: Log): boolean {
  finishSwap(dir, log);
  const segments = join(dir, 'segments');
  const converting = join(dir, 'segments.converting');
  rmSync(converting, { recursive: true, force: true }); // what a crash left of a conversion
  if (!existsSync(segments)) return false;
  const names = readdirSync(segments)
    .filter((n) => NAME.test(n))
    .sort();
  if (!names.some((n) => isBinary(join(segments, n)))) return false;
  const tally: Tally = {
    segments: 0,
    records: 0,
    deletions: 0,
    lines: 0,
    bytesBefore: 0,
    bytesAfter: 0,
  };
  mkdirSync(converting, { mode: 0o700 });
  for (const n of names) convertFile(join(segments, n), join(converting, n), tally, log);
  syncDir(converting);
  dropIndex(dir);
  renameSync(segments, join(dir, 'segments.binary'));
  renameSync(converting, segments);
  syncDir(dir);
  rmSync(join(dir, 'segments.binary'), { recursive: true, force: true });
  log('info', 'task log: segments in the earlier binary framing converted to JSON Lines', {
    ...tally,
  });
  return true;
}
