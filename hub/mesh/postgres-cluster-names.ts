/**
 * @module hub/mesh/postgres-cluster-names — roster names across the cluster: a claim inserts the
 * `mesh_presences` row (unique per project) or answers who holds it, a takeover moves a held
 * presence to this hub, a release deletes it; each announces itself on the channel, and all three
 * run in this hub's one line so a release lands before a later claim of that name.
 */

import { MESH_CHANNEL } from '../../lib/mesh/postgres-schema.ts';
import type { LeaveReason } from '../../lib/mesh/wire.ts';
import type { MeshCluster, NameHolder } from './cluster.ts';
import type { PgClusterContext } from './postgres-cluster-context.ts';
import { sweep } from './postgres-cluster-lease.ts';
import type { Note } from './postgres-cluster-notes.ts';

export function claim(
  ctx: PgClusterContext,
  c: Parameters<MeshCluster['claim']>[0],
): ReturnType<MeshCluster['claim']> {
  const { sql, hubId } = ctx;
  return ctx.serial(async () => {
    await sweep(ctx);
    const note = JSON.stringify({
      k: 'j',
      h: hubId,
      p: c.project,
      n: c.name,
      id: c.presenceId,
      t: c.joinedAt,
    } satisfies Note);
    for (;;) {
      const [made] = await sql`
      WITH made AS (
        INSERT INTO mesh_presences (project, name, presence_id, hub_id, joined_at, resume_hash)
        VALUES (${c.project}, ${c.name}, ${c.presenceId}, ${hubId}, ${c.joinedAt}, ${c.resumeHash})
        ON CONFLICT (project, name) DO NOTHING RETURNING presence_id
      )
      SELECT presence_id, pg_notify(${MESH_CHANNEL}, ${note}) FROM made`;
      if (made) return { claimed: true as const };
      const [h] =
        await sql`SELECT presence_id, hub_id, joined_at, resume_hash FROM mesh_presences WHERE project = ${c.project} AND name = ${c.name}`;
      // Released between the two statements: try again.
      if (!h) continue;
      const holder: NameHolder = {
        presenceId: h.presence_id,
        hubId: h.hub_id,
        joinedAt: Number(h.joined_at),
        resumeHash: Buffer.from(h.resume_hash),
      };
      return { claimed: false as const, holder };
    }
  });
}

export function takeOver(
  ctx: PgClusterContext,
  project: string,
  name: string,
  presenceId: string,
): Promise<boolean> {
  const { sql, hubId } = ctx;
  return ctx.serial(async () => {
    const rows = await sql`
    WITH moved AS (
      UPDATE mesh_presences SET hub_id = ${hubId} WHERE project = ${project} AND name = ${name} AND presence_id = ${presenceId}
      RETURNING project, name, presence_id, joined_at
    )
    SELECT pg_notify(${MESH_CHANNEL}, json_build_object('k', 'm', 'h', ${hubId}::text, 'p', project, 'n', name, 'id', presence_id, 't', joined_at)::text)
    FROM moved`;
    if (rows.length > 0) ctx.view.drop(project, name, presenceId);
    return rows.length > 0;
  });
}

export function release(
  ctx: PgClusterContext,
  project: string,
  name: string,
  presenceId: string,
  reason: LeaveReason,
): void {
  const { sql, hubId } = ctx;
  void ctx
    .serial(
      () => sql`
        WITH gone AS (DELETE FROM mesh_presences WHERE presence_id = ${presenceId} AND hub_id = ${hubId} RETURNING project, name, presence_id, joined_at)
        SELECT pg_notify(${MESH_CHANNEL}, json_build_object('k', 'l', 'h', ${hubId}::text, 'o', ${hubId}::text, 'p', project, 'n', name,
          'id', presence_id, 't', joined_at, 'r', ${reason}::text)::text) FROM gone`,
    )
    .catch((e) =>
      ctx.log('error', 'mesh cluster: releasing a name failed', {
        project,
        name,
        error: String(e),
      }),
    );
}
