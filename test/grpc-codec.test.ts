/**
 * The gRPC binding's protobuf codec against an independent implementation and hostile bytes:
 * each message of fixtures/grpc/cases.json was encoded by `protoc --encode` (fixtures/grpc/make.ts);
 * the codec decodes those bytes to the hand-written ProtoJSON and encodes that JSON back to the
 * same bytes. Truncated varints, lengths past the end, wrong wire types, groups, field 0, invalid
 * UTF-8, nesting past 100 levels and random bytes end as coded failures; unknown fields are skipped.
 */

import { describe, expect, setDefaultTimeout, test } from 'bun:test';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { decodeMessage, MAX_DEPTH } from '../lib/a2a/grpc/decode.ts';
import { encodeMessage } from '../lib/a2a/grpc/encode.ts';
import { RequestReader } from '../lib/a2a/grpc/frames.ts';
import { parseProto } from '../lib/a2a/proto/parse.ts';
import { A2A_METHODS, A2A_SCHEMA } from '../lib/a2a/proto/schema.ts';
import { failureTrailers, fromA2AError } from '../lib/a2a/grpc/status.ts';
import { a2aError } from '../lib/a2a/errors.ts';
import { V1_METHODS } from '../lib/a2a/operations.ts';
import { FIXTURES } from './support/node.ts';

setDefaultTimeout(20_000); // per file (Bun scopes it so): real servers and processes are slow on a busy machine

const DIR = join(FIXTURES, 'grpc');
const { cases } = JSON.parse(readFileSync(join(DIR, 'cases.json'), 'utf8')) as {
  cases: { name: string; type: string; json: unknown }[];
};
const bin = (name: string) => new Uint8Array(readFileSync(join(DIR, `${name}.bin`)));
const decode = (type: string, bytes: number[] | Uint8Array) =>
  decodeMessage(A2A_SCHEMA, `lf.a2a.v1.${type}`, Uint8Array.from(bytes));
const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');

/** A varint, written here independently of the codec's writer. */
function varint(n: number): number[] {
  const out: number[] = [];
  while (n > 0x7f) out.push((n & 0x7f) | 0x80), (n = Math.floor(n / 128));
  out.push(n);
  return out;
}
const lenField = (no: number, body: number[]) => [
  ...varint((no << 3) | 2),
  ...varint(body.length),
  ...body,
];

describe('the schema', () => {
  test('is the A2A project’s a2a.proto: the eleven v1.0 methods, two of them server streaming', () => {
    expect([...A2A_METHODS.values()].map((m) => m.name).sort()).toEqual([...V1_METHODS].sort());
    expect([...A2A_METHODS.values()].filter((m) => m.serverStreaming).map((m) => m.path)).toEqual([
      '/lf.a2a.v1.A2AService/SendStreamingMessage',
      '/lf.a2a.v1.A2AService/SubscribeToTask',
    ]);
    expect(A2A_METHODS.get('/lf.a2a.v1.A2AService/DeleteTaskPushNotificationConfig')!.output).toBe(
      'google.protobuf.Empty',
    );
    const part = A2A_SCHEMA.messages.get('lf.a2a.v1.Part')!;
    expect(part.fields.map((f) => [f.no, f.json, f.oneof ?? ''])).toEqual([
      [1, 'text', 'content'],
      [2, 'raw', 'content'],
      [3, 'url', 'content'],
      [4, 'data', 'content'],
      [5, 'metadata', ''],
      [6, 'filename', ''],
      [7, 'mediaType', ''],
    ]);
  });

  test('parser refuses what it does not know instead of guessing', () => {
    expect(() => parseProto('package x; message A { string a = 1 }')).toThrow(/expected ';'/);
    expect(() => parseProto('extend Foo { }')).toThrow(/unexpected 'extend'/);
  });
});

describe('known encodings made by protoc', () => {
  for (const c of cases.filter((x) => x.json !== null))
    test(`${c.name}: decodes to its ProtoJSON and encodes back to the same bytes`, () => {
      const bytes = bin(c.name);
      const got = decodeMessage(A2A_SCHEMA, c.type, bytes);
      expect(got.ok && JSON.parse(JSON.stringify(got.result))).toEqual(c.json);
      expect(hex(encodeMessage(A2A_SCHEMA, c.type, c.json))).toBe(hex(bytes));
    });

  test('the status trailer of TaskNotFound is the google.rpc.Status protoc encodes', () => {
    const trailers = failureTrailers(fromA2AError(a2aError('TASK_NOT_FOUND')));
    expect(trailers['grpc-status']).toBe('5');
    expect(trailers['grpc-message']).toBe('Task not found');
    expect(hex(Buffer.from(trailers['grpc-status-details-bin']!, 'base64'))).toBe(
      hex(bin('status-error-info')),
    );
  });
});

describe('hostile bytes', () => {
  const malformed = (r: ReturnType<typeof decode>, why: RegExp) => {
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.error.code).toBe('PROTOBUF_MALFORMED');
      expect(r.error.message).toMatch(why);
    }
  };

  test('a truncated varint, an 11-byte varint, a length past the end', () => {
    malformed(decode('GetTaskRequest', [0x18, 0xff]), /truncated varint/);
    malformed(decode('GetTaskRequest', [0x18, ...Array(10).fill(0xff), 0x01]), /longer than 10/);
    malformed(decode('GetTaskRequest', [0x12, 0x05, 0x61]), /past the end/);
    malformed(decode('GetTaskRequest', [0x12, 0xff, 0xff, 0xff, 0xff, 0x0f]), /past the end/);
    // Every prefix of a real message is refused or decodes; none throws.
    const whole = bin('send-message-request');
    for (let n = 0; n < whole.length; n++) {
      const r = decodeMessage(A2A_SCHEMA, 'lf.a2a.v1.SendMessageRequest', whole.subarray(0, n));
      if (!r.ok) expect(r.error.code).toBe('PROTOBUF_MALFORMED');
    }
  });

  test('a known field with the wrong wire type, a group, field number 0, invalid UTF-8', () => {
    malformed(decode('GetTaskRequest', [0x10, 0x01]), /field id \(2\) arrived with wire type 0/);
    malformed(decode('Task', [0x1d, 0, 0, 0, 0]), /field status \(3\) arrived with wire type 5/);
    malformed(decode('GetTaskRequest', [0x7b, 0x7c]), /wire type 3 is not supported/);
    malformed(decode('GetTaskRequest', [0x02, 0x00]), /field number 0/);
    malformed(decode('GetTaskRequest', [0x12, 0x02, 0xc3, 0x28]), /not valid UTF-8/);
    malformed(
      decodeMessage(
        A2A_SCHEMA,
        'google.protobuf.Timestamp',
        Uint8Array.from([0x08, ...varint(2 ** 40)]),
      ),
      /Timestamp out of range/,
    );
  });

  test('unknown fields of every wire type are skipped and kept out of the result', () => {
    const bytes = [
      ...varint((99 << 3) | 0),
      ...varint(12345),
      ...lenField(100, [1, 2, 3]),
      ...varint((101 << 3) | 5),
      1,
      2,
      3,
      4,
      ...varint((102 << 3) | 1),
      ...Array(8).fill(7),
      ...lenField(2, [0x74, 0x2d, 0x31]),
    ];
    expect(decode('GetTaskRequest', bytes)).toEqual({ ok: true, result: { id: 't-1' } });
    // Unknown members of a value on the way out are not encoded either.
    expect(
      hex(encodeMessage(A2A_SCHEMA, 'lf.a2a.v1.GetTaskRequest', { id: 't-1', extra: 1 })),
    ).toBe('1203742d31');
  });

  test(`nesting: ${MAX_DEPTH} levels decode, ${MAX_DEPTH + 1} are refused, 200,000 levels in 1 MB too`, () => {
    /** ListValue { values: Value { list_value: ListValue { … } } }: `levels` messages in all. */
    const chain = (levels: number): Uint8Array => {
      let inner: number[] = [];
      for (let level = levels; level > 1; level--) inner = lenField(level % 2 === 0 ? 1 : 6, inner);
      return Uint8Array.from(inner);
    };
    expect(decodeMessage(A2A_SCHEMA, 'google.protobuf.ListValue', chain(MAX_DEPTH)).ok).toBe(true);
    const deep = decodeMessage(A2A_SCHEMA, 'google.protobuf.ListValue', chain(MAX_DEPTH + 1));
    expect(deep.ok ? 'ok' : deep.error.code).toBe('PROTOBUF_TOO_DEEP');
    // 200,000 levels in under 1 MB, built from the inside out: refused at level 101, no stack overflow.
    const buf = new Uint8Array(1_000_000);
    let at = buf.length;
    for (let level = 200_000; level > 1; level--) {
      const len = varint(buf.length - at);
      buf.set(len, (at -= len.length));
      buf[--at] = level % 2 === 0 ? 0x0a : 0x32;
    }
    const r = decodeMessage(A2A_SCHEMA, 'google.protobuf.ListValue', buf.subarray(at));
    expect(r.ok ? 'ok' : r.error.code).toBe('PROTOBUF_TOO_DEEP');
  });

  test('random and mutated bytes never throw', () => {
    let seed = 0x2545f491;
    const rand = () => ((seed = (seed * 1103515245 + 12345) >>> 0) >>> 8) / 0x1000000;
    const types = ['SendMessageRequest', 'Task', 'ListTasksRequest', 'AgentCard', 'StreamResponse'];
    const samples = cases.filter((c) => c.json !== null).map((c) => bin(c.name));
    let refused = 0;
    for (let i = 0; i < 3000; i++) {
      let bytes: Uint8Array;
      if (i % 2 === 0) {
        bytes = Uint8Array.from({ length: Math.floor(rand() * 64) }, () =>
          Math.floor(rand() * 256),
        );
      } else {
        bytes = Uint8Array.from(samples[i % samples.length]!);
        for (let k = 0; k < 3; k++)
          bytes[Math.floor(rand() * bytes.length)] = Math.floor(rand() * 256);
      }
      const r = decode(types[i % types.length]!, bytes);
      if (!r.ok) refused++;
    }
    expect(refused).toBeGreaterThan(1000);
  });

  test('a request message past the 4 MiB bound is refused from its 5-byte prefix, before its body', () => {
    const reader = new RequestReader(4 * 1024 * 1024);
    const prefix = Uint8Array.from([0, 0x00, 0x40, 0x00, 0x01]); // 4 MiB + 1
    expect(reader.push(prefix)?.reason).toBe('GRPC_MESSAGE_TOO_LARGE');
    const exact = new RequestReader(4 * 1024 * 1024);
    expect(exact.push(Uint8Array.from([0, 0x00, 0x40, 0x00, 0x00]))).toBeUndefined();
    // Split prefixes, a second message, a compressed flag, a message cut short.
    const split = new RequestReader(100);
    expect(split.push(Uint8Array.from([0, 0]))).toBeUndefined();
    expect(split.push(Uint8Array.from([0, 0, 2, 0x12]))).toBeUndefined();
    expect(split.push(Uint8Array.from([0x00]))).toBeUndefined();
    expect(Array.from(split.message() as Uint8Array)).toEqual([0x12, 0x00]);
    const two = new RequestReader(100);
    expect(two.push(Uint8Array.from([0, 0, 0, 0, 0, 0]))?.reason).toBe('GRPC_ONE_MESSAGE');
    expect(new RequestReader(100).push(Uint8Array.from([1, 0, 0, 0, 0]))?.reason).toBe(
      'GRPC_COMPRESSION_UNSUPPORTED',
    );
    const short = new RequestReader(100);
    short.push(Uint8Array.from([0, 0, 0, 0, 9, 1]));
    expect((short.message() as { reason: string }).reason).toBe('GRPC_ONE_MESSAGE');
  });
});
