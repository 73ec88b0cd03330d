/**
 * @module hub/mesh/postgres-cluster-read — the other hubs' presences read from the database into
 * the view: all of them (at start and after a break in the notifications), or one project's
 * (before a claim or a send to an unknown name, as notifications can trail), telling the hub of
 * each difference from what it knew.
 */

import type { RemotePeer } from './cluster.ts';
import type { PgClusterContext } from './postgres-cluster-context.ts';

/** Re-reads the other hubs' presences, telling the hub about differences from what it knew. */
export async function load(ctx: PgClusterContext): Promise<void> {
  const { sql, hubId, view } = ctx;
  const rows = await sql`
    SELECT p.project, p.name, p.presence_id, p.joined_at, p.hub_id FROM mesh_presences p JOIN mesh_hubs h USING (hub_id)
    WHERE p.hub_id <> ${hubId} AND h.expires_at >= now() ORDER BY p.joined_at`;
  const seen = new Set<string>();
  for (const r of rows) {
    const peer: RemotePeer = {
      project: r.project,
      name: r.name,
      presenceId: r.presence_id,
      joinedAt: Number(r.joined_at),
      hubId: r.hub_id,
    };
    seen.add(peer.presenceId);
    const known = view.get(peer.project, peer.name);
    if (known?.presenceId === peer.presenceId) {
      known.hubId = peer.hubId;
      continue;
    }
    if (known) {
      view.drop(known.project, known.name, known.presenceId);
      view.emit({ type: 'left', peer: known, reason: 'hub_lost' });
    }
    view.put(peer);
    view.emit({ type: 'joined', peer });
  }
  for (const peer of view.all())
    if (!seen.has(peer.presenceId)) {
      view.drop(peer.project, peer.name, peer.presenceId);
      view.emit({ type: 'left', peer, reason: 'hub_lost' });
    }
}

/**
 * Adds the presences of one project that the database has and the view lacks (their notifications
 * are still on the way), telling the hub as if the notification had come. Departures are left to
 * their notifications, which carry the reason.
 */
export async function refresh(ctx: PgClusterContext, project: string): Promise<void> {
  const { sql, hubId, view } = ctx;
  const rows = await sql`
    SELECT p.name, p.presence_id, p.joined_at, p.hub_id FROM mesh_presences p JOIN mesh_hubs h USING (hub_id)
    WHERE p.project = ${project} AND p.hub_id <> ${hubId} AND h.expires_at >= now() ORDER BY p.joined_at`;
  for (const r of rows) {
    const known = view.get(project, r.name);
    if (known?.presenceId === r.presence_id) continue;
    const peer: RemotePeer = {
      project,
      name: r.name,
      presenceId: r.presence_id,
      joinedAt: Number(r.joined_at),
      hubId: r.hub_id,
    };
    if (known) {
      view.drop(project, known.name, known.presenceId);
      view.emit({ type: 'left', peer: known, reason: 'connection_closed' });
    }
    view.put(peer);
    view.emit({ type: 'joined', peer });
  }
}
