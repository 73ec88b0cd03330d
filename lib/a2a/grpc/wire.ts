/**
 * @module lib/a2a/grpc/wire — the protobuf wire format's primitives: a reader that checks every
 * length against the bytes it has (a truncated varint, a length past the end or a wire type the
 * format does not have is a `WireError`, never a read past the buffer) and a writer that grows
 * one buffer and back-fills the length of each nested message.
 */

import { I32, I64, LEN, VARINT } from '../proto/wire-types.ts';

/** Malformed protobuf bytes; lib/a2a/grpc/decode.ts turns it into a coded error. */
export class WireError extends Error {}

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
const utf8Encoder = new TextEncoder();

export class Reader {
  pos = 0;
  /** Messages, list items and map entries decoded so far (lib/a2a/grpc/decode.ts bounds them). */
  values = 0;
  private view: DataView | undefined;

  constructor(readonly buf: Uint8Array) {}

  /** A varint as a 32-bit unsigned number (longer varints keep their low 32 bits, as protobuf does). */
  uint32(end: number): number {
    const buf = this.buf;
    let result = 0;
    for (let k = 0, shift = 0; k < 10; k++, shift += 7) {
      if (this.pos >= end) throw new WireError('truncated varint');
      const b = buf[this.pos++]!;
      if (k < 5) result |= (b & 0x7f) << shift;
      if (b < 0x80) return result >>> 0;
    }
    throw new WireError('varint longer than 10 bytes');
  }

  /** A varint as a 64-bit unsigned bigint. */
  uint64(end: number): bigint {
    let result = 0n;
    for (let k = 0, shift = 0n; k < 10; k++, shift += 7n) {
      if (this.pos >= end) throw new WireError('truncated varint');
      const b = this.buf[this.pos++]!;
      result |= BigInt(b & 0x7f) << shift;
      if (b < 0x80) return BigInt.asUintN(64, result);
    }
    throw new WireError('varint longer than 10 bytes');
  }

  /** The end offset of a length-delimited value that starts here, checked against `end`. */
  lengthEnd(end: number): number {
    const len = this.uint32(end);
    if (len > end - this.pos) throw new WireError('length runs past the end of the message');
    return this.pos + len;
  }

  bytes(end: number): Uint8Array {
    const stop = this.lengthEnd(end);
    const out = this.buf.slice(this.pos, stop);
    this.pos = stop;
    return out;
  }

  string(end: number): string {
    const stop = this.lengthEnd(end);
    let s: string;
    try {
      s = utf8.decode(this.buf.subarray(this.pos, stop));
    } catch {
      throw new WireError('string field is not valid UTF-8');
    }
    this.pos = stop;
    return s;
  }

  private fixed(width: 4 | 8, end: number): DataView {
    if (end - this.pos < width) throw new WireError('truncated fixed-width value');
    this.view ??= new DataView(this.buf.buffer, this.buf.byteOffset, this.buf.byteLength);
    return this.view;
  }

  double(end: number): number {
    const v = this.fixed(8, end).getFloat64(this.pos, true);
    this.pos += 8;
    return v;
  }

  float(end: number): number {
    const v = this.fixed(4, end).getFloat32(this.pos, true);
    this.pos += 4;
    return v;
  }

  fixed32(end: number): number {
    const v = this.fixed(4, end).getUint32(this.pos, true);
    this.pos += 4;
    return v;
  }

  fixed64(end: number): bigint {
    const v = this.fixed(8, end).getBigUint64(this.pos, true);
    this.pos += 8;
    return v;
  }

  /** Skips a field of an unknown number. */
  skip(wireType: number, end: number): void {
    switch (wireType) {
      case VARINT:
        this.uint32(end);
        return;
      case I64:
        this.fixed(8, end);
        this.pos += 8;
        return;
      case LEN:
        this.pos = this.lengthEnd(end);
        return;
      case I32:
        this.fixed(4, end);
        this.pos += 4;
        return;
      default:
        throw new WireError(`wire type ${wireType} is not supported`);
    }
  }
}

/** Bytes a varint of `n` (0 ≤ n < 2^32) takes. */
function varintSize(n: number): number {
  return n < 0x80 ? 1 : n < 0x4000 ? 2 : n < 0x200000 ? 3 : n < 0x10000000 ? 4 : 5;
}

/** Room left for the length of a nested message before its body is known. */
const LENGTH_ROOM = 5;

export class Writer {
  private buf = new Uint8Array(512);
  private view = new DataView(this.buf.buffer);
  private pos = 0;
  private readonly starts: number[] = [];

  private ensure(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.pos + n) size *= 2;
    const next = new Uint8Array(size);
    next.set(this.buf.subarray(0, this.pos));
    this.buf = next;
    this.view = new DataView(next.buffer);
  }

  tag(no: number, wireType: number): this {
    return this.uint32(((no << 3) | wireType) >>> 0);
  }

  uint32(n: number): this {
    this.ensure(5);
    while (n > 0x7f) {
      this.buf[this.pos++] = (n & 0x7f) | 0x80;
      n >>>= 7;
    }
    this.buf[this.pos++] = n;
    return this;
  }

  /** An int32: negative values take 10 bytes (sign-extended to 64 bits). */
  int32(n: number): this {
    return n >= 0 ? this.uint32(n) : this.uint64(BigInt.asUintN(64, BigInt(n)));
  }

  uint64(n: bigint): this {
    this.ensure(10);
    let v = BigInt.asUintN(64, n);
    while (v > 0x7fn) {
      this.buf[this.pos++] = Number(v & 0x7fn) | 0x80;
      v >>= 7n;
    }
    this.buf[this.pos++] = Number(v);
    return this;
  }

  bytes(b: Uint8Array): this {
    this.uint32(b.length);
    this.ensure(b.length);
    this.buf.set(b, this.pos);
    this.pos += b.length;
    return this;
  }

  string(s: string): this {
    // UTF-8 takes at most 3 bytes per UTF-16 unit: a short string's length fits one byte, a
    // longer one's is back-filled like a message's.
    if (s.length < 43) {
      this.ensure(1 + s.length * 3);
      const at = this.pos++;
      const n = utf8Encoder.encodeInto(s, this.buf.subarray(this.pos)).written;
      this.buf[at] = n;
      this.pos += n;
      return this;
    }
    this.fork();
    this.ensure(s.length * 3);
    this.pos += utf8Encoder.encodeInto(s, this.buf.subarray(this.pos)).written;
    return this.join();
  }

  double(n: number): this {
    this.ensure(8);
    this.view.setFloat64(this.pos, n, true);
    this.pos += 8;
    return this;
  }

  float(n: number): this {
    this.ensure(4);
    this.view.setFloat32(this.pos, n, true);
    this.pos += 4;
    return this;
  }

  fixed32(n: number): this {
    this.ensure(4);
    this.view.setUint32(this.pos, n >>> 0, true);
    this.pos += 4;
    return this;
  }

  fixed64(n: bigint): this {
    this.ensure(8);
    this.view.setBigUint64(this.pos, BigInt.asUintN(64, n), true);
    this.pos += 8;
    return this;
  }

  /** Starts a length-delimited value; `join` writes its length in front of it. */
  fork(): this {
    this.ensure(LENGTH_ROOM);
    this.starts.push(this.pos);
    this.pos += LENGTH_ROOM;
    return this;
  }

  join(): this {
    const start = this.starts.pop()!;
    const bodyStart = start + LENGTH_ROOM;
    const len = this.pos - bodyStart;
    const size = varintSize(len);
    if (size < LENGTH_ROOM) this.buf.copyWithin(start + size, bodyStart, this.pos);
    this.pos -= LENGTH_ROOM - size;
    let at = start;
    let n = len;
    while (n > 0x7f) {
      this.buf[at++] = (n & 0x7f) | 0x80;
      n >>>= 7;
    }
    this.buf[at] = n;
    return this;
  }

  /** The bytes written so far, as a copy. */
  finish(): Uint8Array {
    return this.buf.slice(0, this.pos);
  }
}
