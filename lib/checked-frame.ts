/**
 * @module lib/checked-frame — the framing of the kit's append-only logs (the task log's segments,
 * the call trace's log): a body's length and its CRC-32 (u32 each, little-endian), then the body.
 * The checksum finds a torn or overwritten frame, which a reader never parses.
 */

/** Bytes before a body: its length, then its CRC-32. */
export const FRAME_HEAD = 8;

/** Writes the head of the frame whose `len`-byte body lies at `at + FRAME_HEAD` of `buf`. */
export function sealFrame(buf: Buffer, at: number, len: number): void {
  buf.writeUInt32LE(len, at);
  buf.writeUInt32LE(Bun.hash.crc32(buf.subarray(at + FRAME_HEAD, at + FRAME_HEAD + len)), at + 4);
}

/**
 * The body of the frame at `at` of `buf`: `short` when the buffer ends inside the frame (read
 * more, or a torn end), `bad` when its body is shorter than `minBody` or its checksum is wrong.
 */
export function openFrame(buf: Uint8Array, at: number, minBody = 0): Uint8Array | 'short' | 'bad' {
  if (buf.byteLength - at < FRAME_HEAD) return 'short';
  const view = new DataView(buf.buffer, buf.byteOffset + at, FRAME_HEAD);
  const len = view.getUint32(0, true);
  if (len < minBody) return 'bad';
  if (buf.byteLength - at - FRAME_HEAD < len) return 'short';
  const body = buf.subarray(at + FRAME_HEAD, at + FRAME_HEAD + len);
  return Bun.hash.crc32(body) === view.getUint32(4, true) ? body : 'bad';
}
