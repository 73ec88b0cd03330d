/**
 * @module hub/mesh/postgres-cluster — several hubs on one PostgreSQL database. Each hub holds a
 * lease (a `mesh_hubs` row renewed every `leaseMs / 3`); a roster name is a `mesh_presences` row,
 * unique per project across the cluster and alive while its hub's lease is. Any hub removes the
 * presences of an expired hub and says so. Commits, presence changes and delivery outcomes travel
 * as notifications on one channel, which every hub listens to (lib/mesh/postgres-notes.ts).
 * This file wires the parts (hub/mesh/postgres-cluster-lease.ts, -read.ts, -notes.ts, -names.ts
 * over postgres-cluster-context.ts) and keeps the lease renewed.
 */

import { MESH_CHANNEL } from '../../lib/mesh/postgres-schema.ts';
import type { MeshCluster } from './cluster.ts';
import { createRemoteView, type PgClusterContext, serialLine } from './postgres-cluster-context.ts';
import { register, renew, sweep } from './postgres-cluster-lease.ts';
import { claim, release, takeOver } from './postgres-cluster-names.ts';
import { createOutcomeBatch, onNote } from './postgres-cluster-notes.ts';
import { load, refresh } from './postgres-cluster-read.ts';
import type { SQL } from 'bun';
import type { Log } from '../../lib/log.ts';

export interface PostgresClusterOptions {
  sql: SQL;
  log: Log;
  /** This hub's id (also the `origin` of its store's commit announcements). */
  hubId: string;
  /** How long a hub's presences outlive its last lease renewal. */
  leaseMs?: number;
  /** This hub's address, recorded with its lease for operators. */
  url?: string;
}

export const newHubId = (): string => `hub-${crypto.randomUUID()}`;

/** Registers this hub's lease, starts listening, loads the other hubs' presences. */
export async function createPostgresCluster(
  opts: PostgresClusterOptions,
): Promise<MeshCluster & { renew(): Promise<void> }> {
  const { sql, log, hubId } = opts;
  const leaseMs = opts.leaseMs ?? 3_000;
  const view = createRemoteView();
  const ctx: PgClusterContext = {
    sql,
    log,
    hubId,
    ...(opts.url ? { url: opts.url } : {}),
    leaseSecs: leaseMs / 1000,
    view,
    // Claims, takeovers and releases of this hub run one after another, so a release always lands before a later claim of that name.
    serial: serialLine(),
  };
  const outcomes = createOutcomeBatch(ctx);

  await register(ctx);
  let first = true;
  const subscription = await sql.listen(
    MESH_CHANNEL,
    (payload) => onNote(ctx, payload),
    () => {
      if (first) return void (first = false);
      // After a reconnect of the listening connection: catch up on presences and commits.
      log('warn', 'mesh cluster: notifications resumed after a break; re-reading the cluster');
      void load(ctx).then(
        () => view.emit({ type: 'resync' }),
        (e) => log('error', 'mesh cluster: re-reading presences failed', { error: String(e) }),
      );
    },
  );
  await sweep(ctx);
  await load(ctx);

  let renewing = false;
  const timer = setInterval(
    () => {
      if (renewing) return;
      renewing = true;
      renew(ctx)
        .catch((e) => log('error', 'mesh cluster: lease renewal failed', { error: String(e) }))
        .finally(() => (renewing = false));
    },
    Math.max(50, Math.floor(leaseMs / 3)),
  );

  return {
    hubId,
    shared: true,
    refresh: (project) => refresh(ctx, project),
    renew: () => renew(ctx),
    remote: (project) => view.list(project),
    remoteByName: (project, name) => view.get(project, name),
    claim: (c) => claim(ctx, c),
    takeOver: (project, name, presenceId) => takeOver(ctx, project, name, presenceId),
    release: (project, name, presenceId, reason) => release(ctx, project, name, presenceId, reason),
    deliver: (senderPresenceId, frame) => outcomes.deliver(senderPresenceId, frame),
    onEvent: (h) => view.onEvent(h),

    async close() {
      clearInterval(timer);
      outcomes.flush();
      await ctx.serial(async () => {});
      await subscription.unlisten().catch(() => {});
      // Our presences were released one by one at shutdown; the lease goes too.
      await sql`DELETE FROM mesh_hubs WHERE hub_id = ${hubId}`.catch(() => {});
    },
  };
}
