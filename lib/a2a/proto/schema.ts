/**
 * @module lib/a2a/proto/schema — the A2A schema: `lib/a2a/proto/a2a.proto` (the A2A project's
 * own file, unchanged) and the few well-known types it and the error details use, read from their
 * parsed declarations (lib/a2a/proto/declarations.json) and resolved on first use into the field
 * tables that the gRPC codec (lib/a2a/grpc/) and the card's signing form
 * (lib/a2a/card/canonical.ts) walk. The service's methods come from the same declarations.
 */

// Parsed ahead of time (lib/a2a/proto/declarations.ts makes it): a start parses no schema text.
import declarations from './declarations.json' with { type: 'json' };
import type { ProtoFile } from './parse.ts';
import { I32, I64, LEN, VARINT } from './wire-types.ts';

const SCALARS = {
  double: I64,
  float: I32,
  int32: VARINT,
  int64: VARINT,
  uint32: VARINT,
  uint64: VARINT,
  sint32: VARINT,
  sint64: VARINT,
  fixed32: I32,
  fixed64: I64,
  sfixed32: I32,
  sfixed64: I64,
  bool: VARINT,
  string: LEN,
  bytes: LEN,
} as const;
export type Scalar = keyof typeof SCALARS;

/** The wire type of one element of a field (a map's value, a packed list's item, or the field itself). */
export function elementWireType(f: Pick<Field, 'kind' | 'scalar'>): number {
  return f.kind === 'scalar' ? SCALARS[f.scalar!] : f.kind === 'enum' ? VARINT : LEN;
}

/** Well-known types whose ProtoJSON form is not an object of their fields. */
export type WellKnown = 'struct' | 'value' | 'list' | 'timestamp' | 'empty';

export interface Field {
  no: number;
  /** ProtoJSON (lowerCamelCase) name. */
  json: string;
  /** The name in the .proto (snake_case); ProtoJSON readers accept it too. */
  proto: string;
  kind: 'scalar' | 'enum' | 'message';
  scalar?: Scalar;
  /** Full name of the enum or message type. */
  ref?: string;
  repeated: boolean;
  /** Explicit presence (`optional`, a oneof member, a message): written even when default. */
  presence: boolean;
  oneof?: string;
  /** A `map<K, V>` field: K's scalar; the value is described by kind/scalar/ref. */
  mapKey?: Scalar;
  wireType: number;
}

export interface MessageType {
  fullName: string;
  fields: Field[];
  byNo: Map<number, Field>;
  wellKnown?: WellKnown;
}

export interface EnumType {
  fullName: string;
  names: Map<number, string>;
  numbers: Map<string, number>;
}

export interface Schema {
  messages: Map<string, MessageType>;
  enums: Map<string, EnumType>;
}

export interface Method {
  name: string;
  /** The HTTP/2 `:path` gRPC calls it by: `/lf.a2a.v1.A2AService/SendMessage`. */
  path: string;
  input: string;
  output: string;
  serverStreaming: boolean;
}

const WELL_KNOWN: Record<string, WellKnown> = {
  'google.protobuf.Struct': 'struct',
  'google.protobuf.Value': 'value',
  'google.protobuf.ListValue': 'list',
  'google.protobuf.Timestamp': 'timestamp',
  'google.protobuf.Empty': 'empty',
};

/** protoc's json_name: underscores dropped, the letter after each upper-cased. */
function jsonName(snake: string): string {
  return snake.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
}

/**
 * Resolves the declarations of several files into one schema.
 * @throws Error when a type name resolves to nothing (a bug in a shipped schema).
 */
function buildSchema(files: ProtoFile[]): Schema {
  const messages = new Map<string, MessageType>();
  const enums = new Map<string, EnumType>();
  for (const f of files)
    for (const e of f.enums)
      enums.set(e.fullName, {
        fullName: e.fullName,
        names: new Map(e.values.map((v) => [v.no, v.name])),
        numbers: new Map(e.values.map((v) => [v.name, v.no])),
      });
  const names = new Set([
    ...enums.keys(),
    ...files.flatMap((f) => f.messages.map((m) => m.fullName)),
  ]);
  /** Protobuf scoping: innermost scope first, then outwards, then the name as absolute. */
  const resolve = (scope: string, name: string): string => {
    const parts = scope.split('.');
    for (let n = parts.length; n >= 0; n--) {
      const candidate = [...parts.slice(0, n), name].filter(Boolean).join('.');
      if (names.has(candidate)) return candidate;
    }
    throw new Error(`schema: type ${name} (in ${scope}) is not declared`);
  };
  for (const f of files)
    for (const m of f.messages) {
      // Field-number order: the order protoc's encoders write fields in.
      const declared = [...m.fields].sort((x, y) => x.no - y.no);
      const fields: Field[] = declared.map((d) => {
        const base = {
          no: d.no,
          json: jsonName(d.name),
          proto: d.name,
          repeated: d.label === 'repeated',
          ...(d.oneof ? { oneof: d.oneof } : {}),
          ...(d.mapKey ? { mapKey: d.mapKey as Scalar } : {}),
        };
        const presence = d.label === 'optional' || d.oneof !== undefined;
        if (Object.hasOwn(SCALARS, d.type)) {
          const scalar = d.type as Scalar;
          return {
            ...base,
            kind: 'scalar',
            scalar,
            presence,
            wireType: d.mapKey ? LEN : SCALARS[scalar],
          };
        }
        const ref = resolve(m.fullName, d.type);
        const isEnum = enums.has(ref);
        return {
          ...base,
          kind: isEnum ? 'enum' : 'message',
          ref,
          presence: presence || !isEnum,
          wireType: isEnum && !d.mapKey ? VARINT : LEN,
        };
      });
      const wellKnown = WELL_KNOWN[m.fullName];
      messages.set(m.fullName, {
        fullName: m.fullName,
        fields,
        byNo: new Map(fields.map((x) => [x.no, x])),
        ...(wellKnown ? { wellKnown } : {}),
      });
    }
  return { messages, enums };
}

const files = declarations as unknown as ProtoFile[];
const a2aFile = files.at(-1)!;

let schema: Schema | undefined;
/**
 * lf.a2a.v1 with the well-known types and google.rpc error details, resolved on first use (the
 * first gRPC call or card signed), so an idle node holds the declarations only.
 */
export const A2A_SCHEMA: Schema = {
  get messages() {
    schema ??= buildSchema(files);
    return schema.messages;
  },
  get enums() {
    schema ??= buildSchema(files);
    return schema.enums;
  },
};

/** The package of the A2A messages: `lf.a2a.v1`. */
export const A2A_PACKAGE = a2aFile.package;

/** `lf.a2a.v1.A2AService`'s methods, by HTTP/2 path. */
export const A2A_METHODS: ReadonlyMap<string, Method> = new Map(
  a2aFile.services.flatMap((s) =>
    s.rpcs.map((r) => {
      const qualify = (n: string) => (n.includes('.') ? n : `${a2aFile.package}.${n}`);
      const path = `/${s.fullName}/${r.name}`;
      return [
        path,
        {
          name: r.name,
          path,
          input: qualify(r.input),
          output: qualify(r.output),
          serverStreaming: r.serverStreaming,
        },
      ] as const;
    }),
  ),
);
