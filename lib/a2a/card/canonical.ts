/**
 * @module lib/a2a/card/canonical — the bytes an agent card is signed over (A2A 1.0 §8.4.1): the
 * card read as the v1.0 `AgentCard` message (members outside the schema dropped, proto3 default
 * values omitted, both JSON spellings of a field name accepted), then empty values removed, the
 * `signatures` member excluded and the rest serialised with RFC 8785 (lib/a2a/card/jcs.ts). This is
 * the form the official JS SDK signs and verifies; signer and verifier both call it.
 */

import { canonicalJson } from './jcs.ts';

/** How one field of the schema is read: s string, b bool (false omitted), ob optional bool, … */
type Field =
  | 's'
  | 'b'
  | 'ob'
  | 'ss'
  | 'struct'
  | 'smap'
  | { msg: Schema }
  | { msgs: Schema }
  | { map: Schema };
/** A message's fields by their JSON name, or a oneof: the first member present wins. */
type Schema = { fields: Record<string, Field> } | { oneof: Record<string, Schema> };

const obj = (fields: Record<string, Field>): Schema => ({ fields });
const strings = (names: string[]) => Object.fromEntries(names.map((n) => [n, 's' as const]));

const AgentInterface = obj(strings(['url', 'protocolBinding', 'tenant', 'protocolVersion']));
const AgentProvider = obj(strings(['url', 'organization']));
const AgentExtension = obj({ uri: 's', description: 's', required: 'b', params: 'struct' });
const AgentCapabilities = obj({
  streaming: 'ob',
  pushNotifications: 'ob',
  extensions: { msgs: AgentExtension },
  extendedAgentCard: 'ob',
});
const StringList = obj({ list: 'ss' });
const SecurityRequirement = obj({ schemes: { map: StringList } });
const AgentSkill = obj({
  ...strings(['id', 'name', 'description']),
  tags: 'ss',
  examples: 'ss',
  inputModes: 'ss',
  outputModes: 'ss',
  securityRequirements: { msgs: SecurityRequirement },
});
const flow = (names: string[], extra: Record<string, Field> = {}) =>
  obj({ ...strings(names), scopes: 'smap', ...extra });
const OAuthFlows: Schema = {
  oneof: {
    authorizationCode: flow(['authorizationUrl', 'tokenUrl', 'refreshUrl'], { pkceRequired: 'b' }),
    clientCredentials: flow(['tokenUrl', 'refreshUrl']),
    implicit: flow(['authorizationUrl', 'refreshUrl']),
    password: flow(['tokenUrl', 'refreshUrl']),
    deviceCode: flow(['deviceAuthorizationUrl', 'tokenUrl', 'refreshUrl']),
  },
};
const SecurityScheme: Schema = {
  oneof: {
    apiKeySecurityScheme: obj(strings(['description', 'location', 'name'])),
    httpAuthSecurityScheme: obj(strings(['description', 'scheme', 'bearerFormat'])),
    oauth2SecurityScheme: obj({
      description: 's',
      flows: { msg: OAuthFlows },
      oauth2MetadataUrl: 's',
    }),
    openIdConnectSecurityScheme: obj(strings(['description', 'openIdConnectUrl'])),
    mtlsSecurityScheme: obj(strings(['description'])),
  },
};
const AgentCard = obj({
  name: 's',
  description: 's',
  supportedInterfaces: { msgs: AgentInterface },
  provider: { msg: AgentProvider },
  version: 's',
  documentationUrl: 's',
  capabilities: { msg: AgentCapabilities },
  securitySchemes: { map: SecurityScheme },
  securityRequirements: { msgs: SecurityRequirement },
  defaultInputModes: 'ss',
  defaultOutputModes: 'ss',
  skills: { msgs: AgentSkill },
  // `signatures` is part of the message but never of what is signed (§8.4.1 rule 3).
  iconUrl: 's',
});

const snake = (name: string) => name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
const isSet = (v: unknown) => v !== null && v !== undefined;
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null;
/** A field as ProtoJSON reads it: the lowerCamel name, else the proto (snake_case) name. */
function member(o: Record<string, unknown>, name: string): unknown {
  const camel = o[name];
  return isSet(camel) ? camel : o[snake(name)];
}

function readField(field: Field, v: unknown): unknown {
  if (field === 's') return isSet(v) ? String(v) : undefined;
  if (field === 'b') return v ? true : undefined;
  if (field === 'ob') return isSet(v) ? Boolean(v) : undefined;
  if (field === 'ss') return Array.isArray(v) ? v.map((e) => String(e)) : undefined;
  if (field === 'struct') return isObject(v) ? v : undefined;
  if (field === 'smap')
    return isObject(v)
      ? Object.fromEntries(Object.entries(v).map(([k, e]) => [k, String(e)]))
      : undefined;
  if ('msg' in field) return isSet(v) ? readMessage(field.msg, v) : undefined;
  if ('msgs' in field)
    return Array.isArray(v) ? v.map((e) => readMessage(field.msgs, e)) : undefined;
  return isObject(v)
    ? Object.fromEntries(Object.entries(v).map(([k, e]) => [k, readMessage(field.map, e)]))
    : undefined;
}

function readMessage(schema: Schema, v: unknown): Record<string, unknown> {
  const o: Record<string, unknown> = isObject(v) ? v : {};
  const out: Record<string, unknown> = {};
  if ('oneof' in schema) {
    for (const [name, inner] of Object.entries(schema.oneof)) {
      const value = member(o, name);
      if (isSet(value)) {
        out[name] = readMessage(inner, value);
        break;
      }
    }
    return out;
  }
  for (const [name, field] of Object.entries(schema.fields)) {
    const value = readField(field, member(o, name));
    if (value !== undefined) out[name] = value;
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
  if (isObject(v)) {
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
  const cleaned = withoutEmpty(readMessage(AgentCard, card));
  return cleaned === undefined ? '{}' : canonicalJson(cleaned);
}
