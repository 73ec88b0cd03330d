/**
 * @module hub/mcp/tool-names — how a fleet capability becomes an MCP tool: its name
 * (`<node>_<capability>` with dots as underscores, the characters every harness accepts, at most
 * 64) and its JSON Schema, made from the capability's argument specs.
 */

import type { ArgSpec } from '../../lib/catalog/catalog.ts';
import type { InputSchema } from '../../lib/mcp/protocol.ts';

/** `scanner` + `sector.movement` → `scanner_sector_movement`. */
export function toolName(node: string, capability: string): string {
  return `${node}_${capability}`.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 64);
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
