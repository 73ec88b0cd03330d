/**
 * @module hub/mesh/postgres-cluster-lease — this hub's lease in the cluster: a `mesh_hubs` row
 * registered and renewed, and the sweep that removes expired hubs and their presences, announcing
 * each departure as `hub_lost`; a lease found gone is taken again and the hub told `lease_lost`.
 */

import { MESH_CHANNEL } from '../../lib/mesh/postgres-schema.ts';
import type { PgClusterContext } from './postgres-cluster-context.ts';

export async function register(ctx: PgClusterContext): Promise<void> {
  const { sql, hubId, leaseSecs } = ctx;
  await sql`
    INSERT INTO mesh_hubs (hub_id, url, expires_at) VALUES (${hubId}, ${ctx.url ?? null}, now() + make_interval(secs => ${leaseSecs}))
    ON CONFLICT (hub_id) DO UPDATE SET expires_at = EXCLUDED.expires_at`;
}

/** Removes expired hubs and the presences of hubs without a live lease, announcing each departure. */
export const sweep = ({ sql, hubId }: PgClusterContext) => sql`
  WITH gone AS (DELETE FROM mesh_hubs WHERE expires_at < now()),
  left_ AS (
    DELETE FROM mesh_presences p
    WHERE NOT EXISTS (SELECT 1 FROM mesh_hubs h WHERE h.hub_id = p.hub_id AND h.expires_at >= now())
    RETURNING project, name, presence_id, hub_id, joined_at
  )
  SELECT pg_notify(${MESH_CHANNEL}, json_build_object('k', 'l', 'h', ${hubId}::text, 'o', hub_id, 'p', project, 'n', name,
    'id', presence_id, 't', joined_at, 'r', 'hub_lost')::text) FROM left_`;

export async function renew(ctx: PgClusterContext): Promise<void> {
  const { sql, hubId, leaseSecs, log } = ctx;
  const rows =
    await sql`UPDATE mesh_hubs SET expires_at = now() + make_interval(secs => ${leaseSecs}) WHERE hub_id = ${hubId} RETURNING 1`;
  if (rows.length === 0) {
    // Our lease ran out and another hub removed it (and our presences, which it announced): start a new one.
    log('warn', 'mesh cluster: this hub lost its lease; its presences were released');
    await register(ctx);
    ctx.view.emit({ type: 'lease_lost' });
  }
  await sweep(ctx);
}
