/**
 * @module lib/a2a/store/log/frame — how a record lies in a task log segment: a checked frame
 * (lib/checked-frame.ts: the body's length and CRC-32), whose body is one kind byte (`T` a task record, `D` a
 * deletion), the task id (36 ASCII bytes) and, for a record, its JSON (lib/a2a/store/task-folder.ts
 * `encodeRecord`). The checksum finds a torn or overwritten record, which the reader never parses.
 */

import { FRAME_HEAD, openFrame, sealFrame } from '../../../checked-frame.ts';

/** Bytes before the body: its length, then its CRC-32. */
export const HEAD = FRAME_HEAD;
/** The kind byte and the id that open every body. */
const ID_END = 37;
export const KIND_RECORD = 0x54; // 'T'
export const KIND_DELETE = 0x44; // 'D'

/** One frame as found in a segment. */
export interface Frame {
  kind: number;
  id: string;
  /** Where the frame starts and how many bytes it takes, head included. */
  off: number;
  size: number;
  /** The body (kind, id, JSON), a view of the read buffer. */
  body: Uint8Array;
}

/** A frame to append: the kind, the id and, for a record, its JSON text. */
export interface Outgoing {
  kind: number;
  id: string;
  json?: string;
  /** A body copied as it lies in another segment (compaction), instead of kind, id and JSON. */
  raw?: Uint8Array;
}

/** Encodes frames back to back into one buffer; `sizes` gets each frame's size, head included. */
export function encodeFrames(items: readonly Outgoing[], sizes: number[]): Buffer {
  let total = 0;
  const lens: number[] = [];
  for (const it of items) {
    const len = it.raw
      ? it.raw.byteLength
      : ID_END + (it.json ? Buffer.byteLength(it.json, 'utf8') : 0);
    lens.push(len);
    total += HEAD + len;
  }
  const buf = Buffer.allocUnsafe(total);
  let at = 0;
  for (let i = 0; i < items.length; i++) {
    const it = items[i]!;
    const len = lens[i]!;
    const body = at + HEAD;
    if (it.raw) buf.set(it.raw, body);
    else {
      buf[body] = it.kind;
      buf.write(it.id, body + 1, 36, 'latin1');
      if (it.json) buf.write(it.json, body + ID_END, len - ID_END, 'utf8');
    }
    sealFrame(buf, at, len);
    sizes.push(HEAD + len);
    at += HEAD + len;
  }
  return buf;
}

/**
 * The frame at `at` of `buf` (whose first byte lies at file offset `base`): the frame, `short`
 * when the buffer ends inside it (read more, or a torn end), `bad` when its checksum or kind is
 * wrong (a torn or overwritten record).
 */
export function decodeFrame(buf: Uint8Array, at: number, base: number): Frame | 'short' | 'bad' {
  const body = openFrame(buf, at, ID_END);
  if (typeof body === 'string') return body;
  const kind = body[0]!;
  if (kind !== KIND_RECORD && kind !== KIND_DELETE) return 'bad';
  const id = Buffer.from(body.buffer, body.byteOffset + 1, 36).toString('latin1');
  return { kind, id, off: base + at, size: HEAD + body.byteLength, body };
}

/** The JSON text of a record's body. */
export const bodyJson = (body: Uint8Array): string =>
  Buffer.from(body.buffer, body.byteOffset + ID_END, body.byteLength - ID_END).toString('utf8');

/** The length a frame's head declares (to size a read before the frame is checked). */
export const declaredSize = (head: Uint8Array): number =>
  HEAD + new DataView(head.buffer, head.byteOffset, 4).getUint32(0, true);
