/**
 * @module lib/a2a/grpc/encode — ProtoJSON to protobuf binary, walking the schema of
 * lib/a2a/proto/schema.ts: the operations' answers (and the status details) as the bytes protoc
 * would write for them, fields in field-number order, members the schema does not know left out.
 */

import {
  elementWireType,
  type Field,
  type MessageType,
  type Scalar,
  type Schema,
  type WellKnown,
} from '../proto/schema.ts';
import { isPlainObject } from '../../json/guards.ts';
import { MAX_DEPTH } from './decode.ts';
import { LEN } from '../proto/wire-types.ts';
import { Writer } from './wire.ts';

type Obj = Record<string, unknown>;

/** A value that does not fit the schema on the way out: a bug in what the server built. */
export class EncodeError extends Error {}

/**
 * Encodes a ProtoJSON value as one message of `typeName`. Unknown members are left out.
 * @throws EncodeError when a member does not fit its field (a bug in what the server built).
 */
export function encodeMessage(schema: Schema, typeName: string, value: unknown): Uint8Array {
  const type = schema.messages.get(typeName);
  if (!type) throw new Error(`codec: no message type ${typeName}`);
  const w = new Writer();
  writeMessage(schema, w, type, value, 1);
  return w.finish();
}

const TIMESTAMP =
  /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?([Zz]|[+-]\d{2}:\d{2})$/;

function toWellKnown(kind: WellKnown, v: unknown): Obj {
  switch (kind) {
    case 'struct':
      if (!isPlainObject(v)) throw new EncodeError('a Struct must be an object');
      return { fields: v };
    case 'list':
      if (!Array.isArray(v)) throw new EncodeError('a ListValue must be an array');
      return { values: v };
    case 'empty':
      return {};
    case 'value':
      if (v === null) return { nullValue: 0 };
      if (typeof v === 'number') return { numberValue: v };
      if (typeof v === 'string') return { stringValue: v };
      if (typeof v === 'boolean') return { boolValue: v };
      if (Array.isArray(v)) return { listValue: v };
      if (isPlainObject(v)) return { structValue: v };
      throw new EncodeError(`a Value cannot hold ${typeof v}`);
    case 'timestamp': {
      const m = typeof v === 'string' ? TIMESTAMP.exec(v) : null;
      if (!m) throw new EncodeError('a Timestamp must be an RFC 3339 string');
      const [, y, mo, d, h, mi, s, frac, zone] = m;
      let seconds =
        Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s)) / 1000;
      if (zone && zone !== 'Z' && zone !== 'z') {
        const sign = zone[0] === '-' ? -1 : 1;
        seconds -= sign * (Number(zone.slice(1, 3)) * 3600 + Number(zone.slice(4, 6)) * 60);
      }
      return { seconds, nanos: frac ? Number(frac.padEnd(9, '0')) : 0 };
    }
  }
}

function int(v: unknown, what: string): number {
  const n = typeof v === 'string' && /^-?\d+$/.test(v) ? Number(v) : v;
  if (typeof n !== 'number' || !Number.isInteger(n))
    throw new EncodeError(`${what} must be an integer`);
  return n;
}

function big(v: unknown, what: string): bigint {
  if (typeof v === 'bigint') return v;
  if (typeof v === 'number' && Number.isInteger(v)) return BigInt(v);
  if (typeof v === 'string' && /^-?\d+$/.test(v)) return BigInt(v);
  throw new EncodeError(`${what} must be an integer`);
}

function writeScalar(w: Writer, s: Scalar, v: unknown, what: string): void {
  switch (s) {
    case 'string':
      if (typeof v !== 'string') throw new EncodeError(`${what} must be a string`);
      w.string(v);
      return;
    case 'bytes':
      if (v instanceof Uint8Array) w.bytes(v);
      else if (typeof v === 'string') w.bytes(Buffer.from(v, 'base64'));
      else throw new EncodeError(`${what} must be bytes or base64`);
      return;
    case 'bool':
      if (typeof v !== 'boolean') throw new EncodeError(`${what} must be a boolean`);
      w.uint32(v ? 1 : 0);
      return;
    case 'int32':
      w.int32(int(v, what));
      return;
    case 'uint32':
      w.uint32(int(v, what) >>> 0);
      return;
    case 'sint32': {
      const n = int(v, what);
      w.uint32(((n << 1) ^ (n >> 31)) >>> 0);
      return;
    }
    case 'fixed32':
    case 'sfixed32':
      w.fixed32(int(v, what));
      return;
    case 'int64':
    case 'uint64':
      w.uint64(big(v, what));
      return;
    case 'sint64': {
      const n = big(v, what);
      w.uint64((n << 1n) ^ (n >> 63n));
      return;
    }
    case 'fixed64':
    case 'sfixed64':
      w.fixed64(big(v, what));
      return;
    case 'double':
    case 'float': {
      const n = typeof v === 'string' ? Number(v) : v;
      if (typeof n !== 'number') throw new EncodeError(`${what} must be a number`);
      if (s === 'double') w.double(n);
      else w.float(n);
      return;
    }
  }
}

function enumNumber(schema: Schema, f: Field, v: unknown): number {
  if (typeof v === 'number' && Number.isInteger(v)) return v;
  const n = typeof v === 'string' ? schema.enums.get(f.ref!)!.numbers.get(v) : undefined;
  if (n === undefined) throw new EncodeError(`${f.proto} has no value ${String(v).slice(0, 64)}`);
  return n;
}

/** One element without its tag. */
function writeBare(schema: Schema, w: Writer, f: Field, v: unknown, depth: number): void {
  if (f.kind === 'scalar') writeScalar(w, f.scalar!, v, f.proto);
  else if (f.kind === 'enum') w.int32(enumNumber(schema, f, v));
  else {
    w.fork();
    writeMessage(schema, w, schema.messages.get(f.ref!)!, v, depth + 1);
    w.join();
  }
}

function isDefault(f: Field, v: unknown): boolean {
  if (f.kind === 'enum') return v === 0 || (typeof v === 'string' && v.endsWith('_UNSPECIFIED'));
  return (
    v === '' ||
    v === 0 ||
    v === false ||
    v === 0n ||
    v === '0' ||
    (v instanceof Uint8Array && v.length === 0)
  );
}

const VALUE = 'google.protobuf.Value';

function writeMessage(
  schema: Schema,
  w: Writer,
  type: MessageType,
  value: unknown,
  depth: number,
): void {
  if (depth > MAX_DEPTH) throw new EncodeError(`nested deeper than ${MAX_DEPTH} levels`);
  const raw = type.wellKnown ? toWellKnown(type.wellKnown, value) : value;
  if (!isPlainObject(raw)) throw new EncodeError(`${type.fullName} must be an object`);
  for (const f of type.fields) {
    let v = raw[f.json];
    if (v === undefined && f.proto !== f.json) v = raw[f.proto];
    if (v === undefined) continue;
    // null is JSON's "not set", except where a Value holds it.
    if (v === null && (f.ref !== VALUE || f.repeated)) continue;
    if (f.mapKey) {
      if (!isPlainObject(v)) throw new EncodeError(`${f.proto} must be an object`);
      const keyScalar = f.mapKey;
      for (const [k, x] of Object.entries(v)) {
        w.tag(f.no, LEN).fork();
        w.tag(1, elementWireType({ kind: 'scalar', scalar: keyScalar }));
        writeScalar(w, keyScalar, k, `${f.proto} key`);
        w.tag(2, elementWireType(f));
        writeBare(schema, w, f, x === null && f.ref !== VALUE ? {} : x, depth);
        w.join();
      }
      continue;
    }
    if (f.repeated) {
      if (!Array.isArray(v)) throw new EncodeError(`${f.proto} must be a list`);
      if (v.length === 0) continue;
      if (elementWireType(f) !== LEN) {
        w.tag(f.no, LEN).fork();
        for (const x of v) writeBare(schema, w, f, x, depth);
        w.join();
      } else for (const x of v) writeBare(schema, w.tag(f.no, LEN), f, x, depth);
      continue;
    }
    if (!f.presence && isDefault(f, v)) continue;
    writeBare(schema, w.tag(f.no, elementWireType(f)), f, v, depth);
  }
}
