/**
 * @module lib/a2a/grpc/frames — gRPC's length-prefixed messages over HTTP/2 DATA (gRPC over HTTP/2):
 * one byte of compressed flag, four bytes of big-endian length, the message. Reads the one request
 * message of a call from the chunks as they arrive, refusing a length past the bound as soon as the
 * prefix is in, before the body is buffered; frames the answers.
 */

import { grpcFailure, type GrpcFailure } from './status.ts';

const PREFIX = 5;

/** Collects a call's request bytes: exactly one uncompressed message of at most `max` bytes. */
export class RequestReader {
  private readonly chunks: Uint8Array[] = [];
  private size = 0;
  private declared = -1;

  constructor(private readonly max: number) {}

  /** Adds a chunk; a failure means the call is refused at once (the rest is not read). */
  push(chunk: Uint8Array): GrpcFailure | undefined {
    this.chunks.push(chunk);
    this.size += chunk.length;
    if (this.declared < 0 && this.size >= PREFIX) {
      const head = this.head();
      if (head[0] !== 0)
        return head[0] === 1
          ? grpcFailure('GRPC_COMPRESSION_UNSUPPORTED')
          : grpcFailure('GRPC_ONE_MESSAGE', `Bad message prefix flag ${head[0]}`);
      this.declared = new DataView(head.buffer, head.byteOffset, PREFIX).getUint32(1);
      if (this.declared > this.max)
        return grpcFailure(
          'GRPC_MESSAGE_TOO_LARGE',
          `The request message is ${this.declared} bytes; the bound is ${this.max}`,
        );
    }
    if (this.declared >= 0 && this.size > PREFIX + this.declared)
      return grpcFailure('GRPC_ONE_MESSAGE');
    return undefined;
  }

  private head(): Uint8Array {
    if (this.chunks[0]!.length >= PREFIX) return this.chunks[0]!;
    const all = this.joined();
    this.chunks.length = 0;
    this.chunks.push(all);
    return all;
  }

  private joined(): Uint8Array {
    if (this.chunks.length === 1) return this.chunks[0]!;
    const all = new Uint8Array(this.size);
    let at = 0;
    for (const c of this.chunks) all.set(c, at), (at += c.length);
    return all;
  }

  /** At the end of the request: the message, or why there is none. */
  message(): Uint8Array | GrpcFailure {
    if (this.declared < 0 || this.size !== PREFIX + this.declared)
      return grpcFailure(
        'GRPC_ONE_MESSAGE',
        this.size === 0
          ? 'The call carried no request message'
          : 'The request message is cut short',
      );
    return this.joined().subarray(PREFIX);
  }
}

/** One answer message with its prefix. */
export function frame(message: Uint8Array): Uint8Array {
  const out = new Uint8Array(PREFIX + message.length);
  new DataView(out.buffer).setUint32(1, message.length);
  out.set(message, PREFIX);
  return out;
}
