/**
 * @module lib/a2a/card/canonical — the bytes an agent card is signed over (A2A 1.0 §8.4.1): the
 * card read as the v1.0 `AgentCard` message of lib/a2a/proto/schema.ts (members outside the
 * schema dropped, proto3 default values omitted, both JSON spellings of a field name accepted, the
 * first member present of a oneof kept), then empty values removed, the `signatures` member
 * excluded and the rest serialised with RFC 8785 (lib/a2a/card/jcs.ts). This is the form the
 * official JS SDK signs and verifies; signer and verifier both call it.
 */

import { isPlainObject, type JsonObject } from '../../json/guards.ts';
import { A2A_PACKAGE, A2A_SCHEMA, type Field, type MessageType } from '../proto/schema.ts';
import { canonicalJson } from './jcs.ts';

const AGENT_CARD = `${A2A_PACKAGE}.AgentCard`;
/** Part of the message, never of what is signed (§8.4.1 rule 3). */
const UNSIGNED = 'signatures';

const isSet = (v: unknown) => v !== null && v !== undefined;

/** A field as ProtoJSON reads it: the lowerCamel name, else the proto (snake_case) name. */
function member(o: JsonObject, f: Field): unknown {
  const camel = o[f.json];
  return isSet(camel) ? camel : o[f.proto];
}

/** One scalar or enum value in its JSON form (a list item or map value is never left out). */
function scalarOf(f: Field, v: unknown): unknown {
  if (f.kind === 'enum') {
    const names = A2A_SCHEMA.enums.get(f.ref!)!.names;
    return typeof v === 'number' ? (names.get(v) ?? v) : String(v);
  }
  if (f.scalar === 'bool') return Boolean(v);
  return f.scalar === 'string' || f.scalar === 'bytes' ? String(v) : Number(v);
}

/** One element of a field: a scalar or enum, a message, or a well-known type kept as given. */
function elementOf(f: Field, v: unknown): unknown {
  if (f.kind !== 'message') return scalarOf(f, v);
  const type = A2A_SCHEMA.messages.get(f.ref!)!;
  if (type.wellKnown === 'struct') return isPlainObject(v) ? v : undefined;
  if (!isSet(v)) return undefined;
  return type.wellKnown ? v : readMessage(type, v);
}

/** A singular field: without presence, its default (false, 0, "", the zero enum) is omitted. */
function singularOf(f: Field, v: unknown): unknown {
  if (f.kind === 'scalar' && f.scalar === 'bool' && !f.presence) return v ? true : undefined;
  if (!isSet(v)) return undefined;
  const value = elementOf(f, v);
  if (f.presence || f.kind === 'message') return value;
  const zero = f.kind === 'enum' ? A2A_SCHEMA.enums.get(f.ref!)!.names.get(0) : 0;
  return value === zero || value === 0 ? undefined : value;
}

function readField(f: Field, v: unknown): unknown {
  if (f.mapKey)
    return isPlainObject(v)
      ? Object.fromEntries(Object.entries(v).map(([k, e]) => [k, elementOf(f, e)]))
      : undefined;
  if (f.repeated) return Array.isArray(v) ? v.map((e) => elementOf(f, e)) : undefined;
  return singularOf(f, v);
}

function readMessage(type: MessageType, v: unknown): JsonObject {
  const o = isPlainObject(v) ? v : {};
  const out: JsonObject = {};
  const oneofsSet = new Set<string>();
  for (const f of type.fields) {
    if (type.fullName === AGENT_CARD && f.json === UNSIGNED) continue;
    const raw = member(o, f);
    // A oneof keeps the first member present, in field-number order.
    if (f.oneof && (!isSet(raw) || oneofsSet.has(f.oneof))) continue;
    if (f.oneof) oneofsSet.add(f.oneof);
    const value = readField(f, raw);
    if (value !== undefined) out[f.json] = value;
  }
  return out;
}

/** Drops "", null, empty arrays and empty objects, recursively (a message left empty goes too). */
function withoutEmpty(v: unknown): unknown {
  if (v === '' || v === null || v === undefined) return undefined;
  if (Array.isArray(v)) {
    const kept = v.map(withoutEmpty).filter((e) => e !== undefined);
    return kept.length ? kept : undefined;
  }
  if (typeof v === 'object') {
    const kept = Object.entries(v)
      .map(([k, e]) => [k, withoutEmpty(e)] as const)
      .filter(([, e]) => e !== undefined);
    return kept.length ? Object.fromEntries(kept) : undefined;
  }
  return v;
}

/**
 * The canonical signing input of a card, as text (sign its UTF-8 bytes).
 * @throws JcsError when a value left in the card has no canonical form (a lone surrogate).
 */
export function canonicalCard(card: unknown): string {
  const cleaned = withoutEmpty(readMessage(A2A_SCHEMA.messages.get(AGENT_CARD)!, card));
  return cleaned === undefined ? '{}' : canonicalJson(cleaned);
}
