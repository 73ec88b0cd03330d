/**
 * @module lib/a2a/store/log/frame — how a change lies in a task log segment: one line of JSON
 * (JSON Lines), newline-terminated, readable with `jq` or any JSON tool:
 *
 *   {"crc":"1a2b3c4d","id":"<task id>","op":"put","rec":<the record, lib/a2a/store/task-folder.ts>}
 *   {"crc":"1a2b3c4d","id":"<task id>","op":"del"}
 *
 * `crc` is the CRC-32 (8 lowercase hex digits) of the line's bytes after the checksum's closing
 * quote, up to and including its last `}`. The members' order and the fixed width of what comes
 * before `rec` let a reader check a line and find its record without parsing it; a line whose
 * checksum does not match (torn, or edited by hand) is never parsed.
 */

/** Bytes before the checked part: `{"crc":"` + 8 hex digits + `"`. */
const CHECKED_FROM = 17;
/** Where the id begins, where `op`'s value begins, where the record's JSON begins. */
const ID_AT = 24;
const OP_AT = 68;
const REC_AT = 79;
/** The shortest line: a deletion, newline included. */
const DEL_LINE = 74;
const NL = 0x0a;
export const KIND_RECORD = 0x54; // 'T'
export const KIND_DELETE = 0x44; // 'D'

/** One line as found in a segment. */
export interface Frame {
  kind: number;
  id: string;
  /** Where the line starts and how many bytes it takes, newline included. */
  off: number;
  size: number;
  /** The whole line, newline included: a view of the read buffer. */
  body: Uint8Array;
}

/** A line that is whole (newline-terminated) but not one the log wrote: where, and why. */
export interface BadLine {
  bad: string;
  size: number;
}

/** A change to append: the kind, the id and, for a record, its JSON text. */
export interface Outgoing {
  kind: number;
  id: string;
  json?: string;
  /** A line copied whole as it lies in another segment (compaction), instead of kind, id and JSON. */
  raw?: Uint8Array;
}

const hex8 = (n: number) => (n >>> 0).toString(16).padStart(8, '0');

/** The buffer lines are encoded into, reused from call to call up to SCRATCH_MAX bytes. */
const SCRATCH_MAX = 1 << 20;
let scratch: Buffer = Buffer.allocUnsafe(64 * 1024);

/** `buf` with room for `need` more bytes at `at`: itself, or a larger copy of its first `at` bytes. */
function room(buf: Buffer, at: number, need: number): Buffer {
  if (at + need <= buf.byteLength) return buf;
  const bigger = Buffer.allocUnsafe(Math.max(2 * buf.byteLength, at + need));
  bigger.set(buf.subarray(0, at));
  if (bigger.byteLength <= SCRATCH_MAX) scratch = bigger;
  return bigger;
}

/**
 * Encodes lines back to back, each record's JSON transcoded once, straight into its place;
 * `sizes` gets each line's size, newline included. The answer is a view of a buffer the next
 * call reuses: write it before encoding more.
 */
export function encodeFrames(items: readonly Outgoing[], sizes: number[]): Uint8Array {
  let buf = scratch;
  let at = 0;
  for (const it of items) {
    let len: number;
    if (it.raw) {
      len = it.raw.byteLength;
      buf = room(buf, at, len);
      buf.set(it.raw, at);
    } else {
      const rest =
        it.kind === KIND_RECORD
          ? `,"id":"${it.id}","op":"put","rec":${it.json}}`
          : `,"id":"${it.id}","op":"del"}`;
      // At most three UTF-8 bytes per UTF-16 unit.
      buf = room(buf, at, CHECKED_FROM + 3 * rest.length + 1);
      len = CHECKED_FROM + buf.write(rest, at + CHECKED_FROM, 'utf8') + 1;
      const crc = Bun.hash.crc32(buf.subarray(at + CHECKED_FROM, at + len - 1));
      buf.write(`{"crc":"${hex8(crc)}"`, at, CHECKED_FROM, 'latin1');
      buf[at + len - 1] = NL;
    }
    sizes.push(len);
    at += len;
  }
  return buf.subarray(0, at);
}

const ascii = (buf: Uint8Array, from: number, to: number) =>
  Buffer.from(buf.buffer, buf.byteOffset + from, to - from).toString('latin1');

/**
 * The line at `at` of `buf` (whose first byte lies at file offset `base`): the change, `short`
 * when the buffer ends before its newline (read more, or a torn end), or a `BadLine` when it is
 * whole but its layout or checksum is wrong.
 */
export function decodeFrame(buf: Uint8Array, at: number, base: number): Frame | 'short' | BadLine {
  const nl = buf.indexOf(NL, at);
  if (nl < 0) return 'short';
  const size = nl + 1 - at;
  if (size < DEL_LINE || ascii(buf, at, at + 8) !== '{"crc":"' || buf[at + 16] !== 0x22)
    return { bad: 'not a line of the task log', size };
  const want = Number.parseInt(ascii(buf, at + 8, at + 16), 16);
  if (Bun.hash.crc32(buf.subarray(at + CHECKED_FROM, nl)) !== want)
    return { bad: 'checksum does not match', size };
  const op = ascii(buf, at + OP_AT, at + OP_AT + 3);
  const kind = op === 'put' && size > REC_AT + 2 ? KIND_RECORD : op === 'del' ? KIND_DELETE : 0;
  if (!kind) return { bad: 'not a line of the task log', size };
  const id = ascii(buf, at + ID_AT, at + ID_AT + 36);
  return { kind, id, off: base + at, size, body: buf.subarray(at, nl + 1) };
}

/** The JSON text of a record's line. */
export const bodyJson = (body: Uint8Array): string =>
  Buffer.from(body.buffer, body.byteOffset + REC_AT, body.byteLength - REC_AT - 2).toString('utf8');
