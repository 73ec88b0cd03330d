/**
 * @module lib/a2a/grpc/decode — protobuf binary to ProtoJSON, walking the schema of
 * lib/a2a/proto/schema.ts: what it decodes is the same object the JSON bindings receive (camelCase
 * names, enum names, base64 bytes, RFC 3339 timestamps, Struct as a JSON object). Hostile bytes
 * end as a coded failure, never a throw: truncated or over-long varints, lengths past the end, a
 * wire type that does not match the field, invalid UTF-8, nesting deeper than 100 levels, more
 * than 100,000 values (counted as they are read, so a body of empty items is refused before it is
 * built). Unknown fields are skipped and kept out of the result.
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
import { ok, type Failure, type Result } from '../../errors/result.ts';
import { LEN } from '../proto/wire-types.ts';
import { Reader, WireError } from './wire.ts';

type Obj = Record<string, unknown>;

/** Messages nested deeper than this are refused (protobuf's own default recursion limit). */
export const MAX_DEPTH = 100;

/**
 * Messages, list items and map entries one request may decode into: 4 MiB of empty items would
 * build about two million objects, and no operation takes more than 10,000 items of a list.
 */
const MAX_VALUES = 100_000;

export type DecodeFailure = Failure<
  'PROTOBUF_MALFORMED' | 'PROTOBUF_TOO_DEEP' | 'PROTOBUF_TOO_MANY_VALUES'
>;

class TooDeep extends WireError {}
class TooMany extends WireError {}

/** Counts one decoded value; past the bound the decoding stops before building it. */
function spend(r: Reader): void {
  if (++r.values > MAX_VALUES)
    throw new TooMany(`The message holds more than ${MAX_VALUES} values (messages and list items)`);
}

/** Sets a key of a map or Struct read off the wire; `__proto__` stays an ordinary key. */
function setKey(target: Obj, key: string, value: unknown): void {
  if (key === '__proto__')
    Object.defineProperty(target, key, {
      value,
      enumerable: true,
      writable: true,
      configurable: true,
    });
  else target[key] = value;
}

/** Decodes one message of `typeName` from `bytes` into its ProtoJSON form. */
export function decodeMessage(
  schema: Schema,
  typeName: string,
  bytes: Uint8Array,
): Result<Obj, DecodeFailure> {
  const type = schema.messages.get(typeName);
  if (!type) throw new Error(`codec: no message type ${typeName}`);
  const r = new Reader(bytes);
  try {
    return ok(readMessage(schema, r, type, bytes.length, 1) as Obj);
  } catch (e) {
    if (e instanceof TooDeep)
      return { ok: false, error: { code: 'PROTOBUF_TOO_DEEP', message: e.message } };
    if (e instanceof TooMany)
      return { ok: false, error: { code: 'PROTOBUF_TOO_MANY_VALUES', message: e.message } };
    if (e instanceof WireError)
      return {
        ok: false,
        error: { code: 'PROTOBUF_MALFORMED', message: `Malformed ${typeName}: ${e.message}` },
      };
    throw e;
  }
}

function readScalar(r: Reader, s: Scalar, end: number): unknown {
  switch (s) {
    case 'string':
      return r.string(end);
    case 'bytes':
      return Buffer.from(r.bytes(end)).toString('base64');
    case 'bool':
      return r.uint32(end) !== 0;
    case 'int32':
      return r.uint32(end) | 0;
    case 'uint32':
      return r.uint32(end);
    case 'sint32': {
      const n = r.uint32(end);
      return (n >>> 1) ^ -(n & 1);
    }
    case 'int64':
      return BigInt.asIntN(64, r.uint64(end)).toString();
    case 'uint64':
      return r.uint64(end).toString();
    case 'sint64': {
      const n = r.uint64(end);
      return ((n >> 1n) ^ -(n & 1n)).toString();
    }
    case 'fixed32':
      return r.fixed32(end);
    case 'sfixed32':
      return r.fixed32(end) | 0;
    case 'fixed64':
      return r.fixed64(end).toString();
    case 'sfixed64':
      return BigInt.asIntN(64, r.fixed64(end)).toString();
    case 'double':
      return r.double(end);
    case 'float':
      return r.float(end);
  }
}

function readElement(schema: Schema, r: Reader, f: Field, end: number, depth: number): unknown {
  if (f.kind === 'scalar') return readScalar(r, f.scalar!, end);
  if (f.kind === 'enum') {
    const n = r.uint32(end) | 0;
    // ProtoJSON writes an enum number it has no name for as the number.
    return schema.enums.get(f.ref!)!.names.get(n) ?? n;
  }
  const stop = r.lengthEnd(end);
  const value = readMessage(schema, r, schema.messages.get(f.ref!)!, stop, depth + 1);
  return value;
}

/** The value of a map entry or list item that the wire left out. */
function defaultOf(schema: Schema, f: Field, depth: number): unknown {
  if (f.kind === 'message')
    return readMessage(
      schema,
      new Reader(new Uint8Array(0)),
      schema.messages.get(f.ref!)!,
      0,
      depth + 1,
    );
  if (f.kind === 'enum') return schema.enums.get(f.ref!)!.names.get(0) ?? 0;
  return f.scalar === 'string' || f.scalar === 'bytes' ? '' : f.scalar === 'bool' ? false : 0;
}

function wrongType(f: Field, wt: number): WireError {
  return new WireError(`field ${f.proto} (${f.no}) arrived with wire type ${wt}`);
}

function readMapEntry(schema: Schema, r: Reader, f: Field, end: number, depth: number, out: Obj) {
  spend(r);
  const stop = r.lengthEnd(end);
  const keyWt = elementWireType({ kind: 'scalar', scalar: f.mapKey! });
  let key: unknown = f.mapKey === 'string' ? '' : 0;
  let value: unknown;
  while (r.pos < stop) {
    const tag = r.uint32(stop);
    const no = tag >>> 3;
    const wt = tag & 7;
    if (no === 1 && wt === keyWt) key = readScalar(r, f.mapKey!, stop);
    else if (no === 2 && wt === elementWireType(f)) value = readElement(schema, r, f, stop, depth);
    else if (no === 1 || no === 2) throw wrongType(f, wt);
    else r.skip(wt, stop);
  }
  if (value === undefined) value = defaultOf(schema, f, depth);
  let map = out[f.json];
  if (!isPlainObject(map)) out[f.json] = map = {};
  setKey(map as Obj, String(key), value);
}

function readMessage(
  schema: Schema,
  r: Reader,
  type: MessageType,
  end: number,
  depth: number,
): unknown {
  if (depth > MAX_DEPTH) throw new TooDeep(`The message nests deeper than ${MAX_DEPTH} levels`);
  spend(r);
  const out: Obj = {};
  while (r.pos < end) {
    const tag = r.uint32(end);
    const no = tag >>> 3;
    const wt = tag & 7;
    if (no === 0) throw new WireError('field number 0');
    const f = type.byNo.get(no);
    if (!f) {
      r.skip(wt, end);
      continue;
    }
    if (f.mapKey) {
      if (wt !== LEN) throw wrongType(f, wt);
      readMapEntry(schema, r, f, end, depth, out);
      continue;
    }
    const elementWt = elementWireType(f);
    if (f.repeated) {
      let list = out[f.json] as unknown[] | undefined;
      if (!list) out[f.json] = list = [];
      if (wt === LEN && elementWt !== LEN) {
        // A packed list of numbers: one length, then the items back to back.
        const stop = r.lengthEnd(end);
        while (r.pos < stop) {
          spend(r);
          list.push(readElement(schema, r, f, stop, depth));
        }
        continue;
      }
      if (wt !== elementWt) throw wrongType(f, wt);
      spend(r);
      list.push(readElement(schema, r, f, end, depth));
      continue;
    }
    if (wt !== elementWt) throw wrongType(f, wt);
    // A oneof keeps its last member; a singular field seen twice keeps its last value.
    if (f.oneof)
      for (const g of type.fields) if (g.oneof === f.oneof && g !== f) delete out[g.json];
    out[f.json] = readElement(schema, r, f, end, depth);
  }
  return type.wellKnown ? fromWellKnown(type.wellKnown, out) : out;
}

const MIN_SECONDS = -62_135_596_800; // 0001-01-01T00:00:00Z
const MAX_SECONDS = 253_402_300_799; // 9999-12-31T23:59:59Z

function fromWellKnown(kind: WellKnown, raw: Obj): unknown {
  switch (kind) {
    case 'struct':
      return raw.fields ?? {};
    case 'list':
      return raw.values ?? [];
    case 'empty':
      return {};
    case 'value':
      if ('nullValue' in raw) return null;
      if ('numberValue' in raw) return raw.numberValue;
      if ('stringValue' in raw) return raw.stringValue;
      if ('boolValue' in raw) return raw.boolValue;
      if ('structValue' in raw) return raw.structValue;
      if ('listValue' in raw) return raw.listValue;
      return null;
    case 'timestamp': {
      const seconds = Number(raw.seconds ?? 0);
      const nanos = Number(raw.nanos ?? 0);
      if (seconds < MIN_SECONDS || seconds > MAX_SECONDS || nanos < 0 || nanos > 999_999_999)
        throw new WireError('Timestamp out of range');
      const base = new Date(seconds * 1000).toISOString().slice(0, 19);
      if (nanos === 0) return `${base}Z`;
      const digits = String(nanos).padStart(9, '0');
      const frac =
        nanos % 1_000_000 === 0
          ? digits.slice(0, 3)
          : nanos % 1000 === 0
            ? digits.slice(0, 6)
            : digits;
      return `${base}.${frac}Z`;
    }
  }
}
