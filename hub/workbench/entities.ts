/**
 * @module hub/workbench/entities — entity alignment across crm and scanner with the USCC (GB 32100-2015) as
 * the key: `resolveEntity` answers matched / ambiguous / unmatched with candidates, and
 * `entityCoverage` counts what is aligned and lists every gap. Both read the nodes through
 * `fleet.invoke` only (crm.companies, sector.stocks), so every read is traced.
 */

import type { FleetInvoker } from '../../lib/fleet/invoke.ts';
import { coverageOf, type EntityCoverage } from './entity-coverage.ts';
import { loadEntityIndex, type EntityFailure } from './entity-index.ts';
import { checkQuery, type EntityQuery } from './entity-query.ts';
import { resolveInIndex, type EntityResolution } from './entity-resolve.ts';

export type { EntityResolution } from './entity-resolve.ts';

/**
 * Resolves a company by any of name, USCC and stock code; all given keys must agree.
 * Never throws: a bad query or a node that cannot be read is a coded value.
 */
export async function resolveEntity(
  invoker: FleetInvoker,
  query: EntityQuery,
): Promise<EntityResolution | EntityFailure> {
  const checked = checkQuery(query);
  if (!checked.ok) return checked;
  const loaded = await loadEntityIndex(invoker);
  return loaded.ok ? resolveInIndex(loaded.result, checked.result) : loaded;
}

/**
 * How many crm customers and scanner codes are aligned, and every gap with its kind. A crm
 * customer is aligned when its USCC is valid, its name identifies it alone and its stock code (if
 * any) is on scanner; a scanner code is aligned when exactly one crm company with a valid USCC
 * carries it. Never throws.
 */
export async function entityCoverage(
  invoker: FleetInvoker,
): Promise<EntityCoverage | EntityFailure> {
  const loaded = await loadEntityIndex(invoker);
  return loaded.ok ? coverageOf(loaded.result) : loaded;
}
