/**
 * @module lib/errors/registry — every error code of the project, each declared once with its HTTP
 * status, and the one lookup every HTTP surface uses to pick a status. Statuses are looked up by
 * exact code, never guessed from a code's spelling.
 *
 * Codes the registry does not know (a capability's own, e.g. an executor's BUSY) keep their code
 * as data and get one documented default: the node that raised it answers 422 (it refused the
 * request as posed, `CAPABILITY_CODE_STATUS`); a surface relaying another node's failure answers
 * 502 (`upstreamStatus`).
 */

import { A2A_ERRORS } from './a2a.ts';
import { TOKEN_ERRORS } from './auth.ts';
import { CARD_SIGNATURE_ERRORS } from './card.ts';
import { CATALOG_ERRORS, FLEET_MESSAGE_ERRORS } from './fleet.ts';
import { DOMAIN_ERRORS, HUB_ERRORS } from './hub.ts';
import { MESH_CLIENT_ERRORS, MESH_HTTP_ERRORS, MESH_WIRE_ERRORS } from './mesh.ts';
import { JOIN_ERRORS } from './join.ts';
import { GRPC_ERRORS } from './grpc.ts';
import { LIMIT_ERRORS } from './limits.ts';
import { MCP_ERRORS } from './mcp.ts';
import { PEER_ERRORS } from './peer.ts';
import { PUSH_ERRORS } from './push.ts';
import type { ErrorSpec, ErrorTable } from './spec.ts';

export type { ErrorSpec, ErrorTable } from './spec.ts';

/** Every table, by layer. A code may appear in one table only. */
export const ERROR_TABLES = Object.freeze({
  a2a: A2A_ERRORS,
  grpc: GRPC_ERRORS,
  peer: PEER_ERRORS,
  catalog: CATALOG_ERRORS,
  'fleet-message': FLEET_MESSAGE_ERRORS,
  hub: HUB_ERRORS,
  domain: DOMAIN_ERRORS,
  'mesh-wire': MESH_WIRE_ERRORS,
  'mesh-http': MESH_HTTP_ERRORS,
  'mesh-client': MESH_CLIENT_ERRORS,
  limits: LIMIT_ERRORS,
  join: JOIN_ERRORS,
  card: CARD_SIGNATURE_ERRORS,
  mcp: MCP_ERRORS,
  push: PUSH_ERRORS,
  token: TOKEN_ERRORS,
});

type Tables = typeof ERROR_TABLES;
/** A code the registry declares. */
export type KnownCode = { [L in keyof Tables]: keyof Tables[L] }[keyof Tables] & string;

/** Status of a capability's own code (one the registry does not know), answered by its node. */
export const CAPABILITY_CODE_STATUS = 422;
/** Status of another node's failure that is not the caller's mistake, answered by a relaying surface. */
export const UPSTREAM_STATUS = 502;

/**
 * Merges tables into one lookup.
 * @throws Error when a code is declared twice (a bug in the tables).
 */
export function buildRegistry(
  tables: Readonly<Record<string, ErrorTable>>,
): ReadonlyMap<string, ErrorSpec> {
  const all = new Map<string, ErrorSpec>();
  const where = new Map<string, string>();
  for (const [layer, table] of Object.entries(tables)) {
    for (const [code, spec] of Object.entries(table)) {
      if (where.has(code))
        throw new Error(`errors: ${code} is declared in both ${where.get(code)} and ${layer}`);
      where.set(code, layer);
      all.set(code, Object.freeze({ ...spec }));
    }
  }
  return all;
}

const REGISTRY = buildRegistry(ERROR_TABLES);

/** Everything the registry knows of a code, or undefined for a code it does not declare. */
export function specOf(code: string): ErrorSpec | undefined {
  return REGISTRY.get(code);
}

export function isKnownCode(code: unknown): code is KnownCode {
  return typeof code === 'string' && REGISTRY.has(code);
}

/** The HTTP status of a code raised here; `fallback` for a code the registry does not declare. */
export function statusOf(code: string, fallback = CAPABILITY_CODE_STATUS): number {
  return REGISTRY.get(code)?.http ?? fallback;
}

/** The default message of a code, or the code itself. */
export function messageOf(code: string): string {
  return REGISTRY.get(code)?.message ?? code;
}

/**
 * The status a surface answers when a node it called failed with `code`. A caller's mistake
 * (a declared 4xx other than 401/403, which concern the hop's own signature) keeps its status,
 * since the arguments came from the caller; a timeout is 504; anything else, unknown codes
 * included, is 502.
 */
export function upstreamStatus(code: string): number {
  const http = REGISTRY.get(code)?.http;
  if (http === undefined) return UPSTREAM_STATUS;
  if (http >= 400 && http < 500 && http !== 401 && http !== 403) return http;
  return http === 504 ? 504 : UPSTREAM_STATUS;
}

/** Every declared code with its layer, in table order (for tests and documentation). */
export function declarations(): { layer: string; code: string; spec: ErrorSpec }[] {
  return Object.entries(ERROR_TABLES).flatMap(([layer, table]) =>
    Object.entries(table as ErrorTable).map(([code, spec]) => ({ layer, code, spec })),
  );
}
