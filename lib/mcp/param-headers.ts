/**
 * @module lib/mcp/param-headers — 2026-07-28's custom request headers (SEP-2243): a tool argument
 * whose schema property carries `x-mcp-header: <Name>` is mirrored in `Mcp-Param-<Name>`, plain or
 * in the Base64 sentinel form `=?base64?…?=`. The server checks each such header against the
 * argument it mirrors: present when the argument is, equal to it (numbers numerically), its
 * Base64 strictly valid. What disagrees is a HeaderMismatch (-32020).
 */

import { isPlainObject } from '../json/guards.ts';

const SENTINEL = /^=\?base64\?(.*)\?=$/;
const STRICT_BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** A header's value as sent: the sentinel form decoded; undefined when its Base64 is malformed. */
function decoded(raw: string): string | undefined {
  const m = SENTINEL.exec(raw);
  if (!m) return raw;
  if (!STRICT_BASE64.test(m[1]!)) return undefined;
  return Buffer.from(m[1]!, 'base64').toString('utf8');
}

const same = (header: string, value: unknown): boolean =>
  typeof value === 'number'
    ? header.trim() !== '' && Number(header) === value
    : String(value) === header;

/** Why the `Mcp-Param-*` headers disagree with the arguments; undefined when they agree. */
export function paramHeaderMismatch(
  schema: Record<string, unknown>,
  args: Record<string, unknown>,
  headers: Headers,
): string | undefined {
  const props = isPlainObject(schema.properties) ? schema.properties : {};
  for (const [prop, def] of Object.entries(props)) {
    const name = isPlainObject(def) ? def['x-mcp-header'] : undefined;
    if (typeof name !== 'string') continue;
    const raw = headers.get(`mcp-param-${name}`);
    const value = args[prop];
    if (value === undefined || value === null) continue;
    if (raw === null) return `the Mcp-Param-${name} header is missing`;
    const header = decoded(raw);
    if (header === undefined) return `Mcp-Param-${name} is not valid Base64`;
    if (!same(header, value)) return `Mcp-Param-${name} does not match arguments.${prop}`;
  }
  return undefined;
}
