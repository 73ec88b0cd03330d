/**
 * @module hub/mcp/tool-names — how a fleet capability becomes an MCP tool: its name
 * (`<node>_<capability>` with dots as underscores, the node's prefix not repeated, the characters
 * every harness accepts, at most 64, unique in the list) and its JSON Schema, made from the
 * capability's argument specs.
 */

import { createHash } from 'node:crypto';
import type { ArgSpec } from '../../lib/catalog/catalog.ts';
import type { InputSchema } from '../../lib/mcp/protocol.ts';

/** The longest tool name MCP clients accept (Claude's and OpenAI's harnesses: 64). */
const TOOL_NAME_MAX = 64;
const SUFFIX_LENGTH = 7; // `_` and six hex digits

/**
 * `scanner` + `sector.movement` → `scanner_sector_movement`; `crm` + `crm.industries` →
 * `crm_industries`: a capability's first part is left out when the node's name begins with it
 * (`tsm-hub` + `tsm.health` → `tsm-hub_health`), so the node is not named twice. A name past 64
 * characters is cut and ends in its suffix (below), so two long names stay apart.
 */
function toolName(node: string, capability: string): string {
  const parts = capability.split('.');
  const rest = parts.length > 1 && node.startsWith(parts[0]!) ? parts.slice(1) : parts;
  const name = `${node}_${rest.join('_')}`.replace(/[^A-Za-z0-9_-]/g, '_');
  if (name.length <= TOOL_NAME_MAX) return name;
  return name.slice(0, TOOL_NAME_MAX - SUFFIX_LENGTH) + suffixOf(node, capability);
}

/** Six hex digits of the capability's full address: the same on every start, whatever else is listed. */
const suffixOf = (node: string, capability: string) =>
  `_${createHash('sha256').update(`${node}/${capability}`).digest('hex').slice(0, 6)}`;

/**
 * A unique name for each (node, capability), keyed `node/capability`. Where two make one name
 * (`crm` + `crm.industries` and `crm` + `industries`), the first in (node, capability) order keeps
 * it and each other one ends in its suffix, so the names hold across restarts and catalog orders.
 */
export function toolNames(
  tools: readonly { node: string; capability: string }[],
): Map<string, string> {
  const key = (t: { node: string; capability: string }) => `${t.node}/${t.capability}`;
  const sorted = [...tools].sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
  const taken = new Set<string>();
  const out = new Map<string, string>();
  for (const t of sorted) {
    if (out.has(key(t))) continue;
    let name = toolName(t.node, t.capability);
    if (taken.has(name))
      name = name.slice(0, TOOL_NAME_MAX - SUFFIX_LENGTH) + suffixOf(t.node, t.capability);
    taken.add(name);
    out.set(key(t), name);
  }
  return out;
}

/** The JSON Schema of a capability's arguments (unknown arguments are refused, as the catalog does). */
export function schemaOf(args: Record<string, ArgSpec>): InputSchema {
  const properties: Record<string, unknown> = {};
  const required: string[] = [];
  for (const [name, spec] of Object.entries(args)) {
    properties[name] = {
      type: spec.type,
      description: spec.description,
      ...(spec.enum ? { enum: [...spec.enum] } : {}),
      ...(spec.type === 'string' ? { maxLength: spec.maxLength ?? 1024 } : {}),
    };
    if (spec.required) required.push(name);
  }
  return {
    type: 'object',
    properties,
    ...(required.length ? { required } : {}),
    additionalProperties: false,
  };
}
