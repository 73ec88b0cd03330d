/**
 * @module hub/mesh/postgres-cluster — several hubs on one PostgreSQL database. Each hub holds a
 * lease (a `mesh_hubs` row renewed every `leaseMs / 3`); a roster name is a `mesh_presences` row,
 * unique per project across the cluster and alive while its hub's lease is. Any hub removes the
 * presences of an expired hub and says so. Commits, presence changes and delivery outcomes travel
 * as notifications on one channel, which every hub listens to (lib/mesh/postgres-notes.ts).
 */

import type { SQL } from 'bun';
import type { Log } from '../../lib/log.ts';
import {
  NOTE_SEPARATOR,
  deliveryNotes,
  noteOrigin,
  parseCommitNote,
  parseDeliveryNote,
} from '../../lib/mesh/postgres-notes.ts';
import { MESH_CHANNEL } from '../../lib/mesh/postgres-schema.ts';
import type { LeaveReason } from '../../lib/mesh/wire.ts';
import type { ClusterEvent, MeshCluster, NameHolder, RemotePeer } from './cluster.ts';

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

/** Presence changes travel as JSON notes; commits and delivery outcomes have their own text notes. */
type Note =
  | { k: 'j'; h: string; p: string; n: string; id: string; t: number }
  | { k: 'l'; h: string; o: string; p: string; n: string; id: string; t: number; r: LeaveReason }
  | { k: 'm'; h: string; p: string; n: string; id: string; t: number };

export const newHubId = (): string => `hub-${crypto.randomUUID()}`;

/** Registers this hub's lease, starts listening, loads the other hubs' presences. */
export async function createPostgresCluster(
  opts: PostgresClusterOptions,
): Promise<MeshCluster & { renew(): Promise<void> }> {
  const { sql, log, hubId } = opts;
  const leaseMs = opts.leaseMs ?? 3_000;
  const leaseSecs = leaseMs / 1000;
  const handlers: ((e: ClusterEvent) => void)[] = [];
  const emit = (e: ClusterEvent) => {
    for (const h of handlers) h(e);
  };
  // Other hubs' presences: project -> name -> peer.
  const remote = new Map<string, Map<string, RemotePeer>>();
  const putRemote = (peer: RemotePeer) => {
    let names = remote.get(peer.project);
    if (!names) remote.set(peer.project, (names = new Map()));
    names.set(peer.name, peer);
  };
  const dropRemote = (
    project: string,
    name: string,
    presenceId: string,
  ): RemotePeer | undefined => {
    const names = remote.get(project);
    const peer = names?.get(name);
    if (!peer || peer.presenceId !== presenceId) return undefined;
    names!.delete(name);
    if (names!.size === 0) remote.delete(project);
    return peer;
  };
  // Claims, takeovers and releases of this hub run one after another, so a release always lands before a later claim of that name.
  let chain: Promise<unknown> = Promise.resolve();
  const serial = <T>(fn: () => Promise<T>): Promise<T> => {
    const run = chain.then(fn, fn);
    chain = run.catch(() => {});
    return run;
  };

  async function register(): Promise<void> {
    await sql`
      INSERT INTO mesh_hubs (hub_id, url, expires_at) VALUES (${hubId}, ${opts.url ?? null}, now() + make_interval(secs => ${leaseSecs}))
      ON CONFLICT (hub_id) DO UPDATE SET expires_at = EXCLUDED.expires_at`;
  }

  /** Removes expired hubs and the presences of hubs without a live lease, announcing each departure. */
  const sweep = () => sql`
    WITH gone AS (DELETE FROM mesh_hubs WHERE expires_at < now()),
    left_ AS (
      DELETE FROM mesh_presences p
      WHERE NOT EXISTS (SELECT 1 FROM mesh_hubs h WHERE h.hub_id = p.hub_id AND h.expires_at >= now())
      RETURNING project, name, presence_id, hub_id, joined_at
    )
    SELECT pg_notify(${MESH_CHANNEL}, json_build_object('k', 'l', 'h', ${hubId}::text, 'o', hub_id, 'p', project, 'n', name,
      'id', presence_id, 't', joined_at, 'r', 'hub_lost')::text) FROM left_`;

  /** Re-reads the other hubs' presences, telling the hub about differences from what it knew. */
  async function load(): Promise<void> {
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
      const known = remote.get(peer.project)?.get(peer.name);
      if (known?.presenceId === peer.presenceId) {
        known.hubId = peer.hubId;
        continue;
      }
      if (known) {
        dropRemote(known.project, known.name, known.presenceId);
        emit({ type: 'left', peer: known, reason: 'hub_lost' });
      }
      putRemote(peer);
      emit({ type: 'joined', peer });
    }
    for (const names of [...remote.values()])
      for (const peer of [...names.values()])
        if (!seen.has(peer.presenceId)) {
          dropRemote(peer.project, peer.name, peer.presenceId);
          emit({ type: 'left', peer, reason: 'hub_lost' });
        }
  }

  function onNote(payload: string): void {
    const origin = noteOrigin(payload);
    if (origin !== undefined) {
      // This hub's own commits and outcomes come back too: skipped before any parsing.
      if (origin === hubId) return;
      if (payload.charCodeAt(0) === 99) {
        const c = parseCommitNote(payload);
        if (c) emit({ type: 'committed', project: c.project, sequence: c.sequence });
        return;
      }
      const d = parseDeliveryNote(payload);
      if (d)
        for (const [senderPresenceId, frame] of d.items)
          emit({ type: 'delivery', senderPresenceId, frame });
      return;
    }
    let n: Note;
    try {
      n = JSON.parse(payload) as Note;
    } catch {
      return;
    }
    switch (n.k) {
      case 'j':
        // Already known from a refresh: nothing new to tell.
        if (n.h === hubId || remote.get(n.p)?.get(n.n)?.presenceId === n.id) return;
        putRemote({ project: n.p, name: n.n, presenceId: n.id, joinedAt: n.t, hubId: n.h });
        return emit({
          type: 'joined',
          peer: { project: n.p, name: n.n, presenceId: n.id, joinedAt: n.t, hubId: n.h },
        });
      case 'l': {
        if (n.o === hubId) {
          // Another hub removed one of ours: our lease had run out.
          if (n.h !== hubId) emit({ type: 'swept', presenceId: n.id });
          return;
        }
        const peer = dropRemote(n.p, n.n, n.id);
        if (peer) emit({ type: 'left', peer, reason: n.r });
        return;
      }
      case 'm': {
        if (n.h === hubId) return;
        const peer: RemotePeer = {
          project: n.p,
          name: n.n,
          presenceId: n.id,
          joinedAt: n.t,
          hubId: n.h,
        };
        putRemote(peer);
        return emit({ type: 'moved', peer });
      }
    }
  }

  // Delivery outcomes for senders on other hubs leave in batches, one notification per turn (split under the size limit).
  let outcomes: [string, string][] = [];
  let outcomesScheduled = false;
  function sendOutcomes(): void {
    outcomesScheduled = false;
    const notes = deliveryNotes(hubId, outcomes);
    outcomes = [];
    if (notes.length === 0) return;
    // One statement for the turn's notes. A notifying transaction holds the database's notification
    // lock through its commit; outcomes need no durability, so this one does not wait for its WAL
    // flush (which would hold up the hubs' group commits queued behind that lock).
    // The notes go as one text (JSON never holds the separator raw), cheaper to send than a text array.
    sql`SELECT set_config('synchronous_commit', 'off', true), pg_notify(${MESH_CHANNEL}, note)
        FROM unnest(string_to_array(${notes.join(NOTE_SEPARATOR)}, ${NOTE_SEPARATOR})) AS note`.catch(
      (e) =>
        log('warn', 'mesh cluster: a delivery outcome could not be sent', { error: String(e) }),
    );
  }

  await register();
  let first = true;
  const subscription = await sql.listen(MESH_CHANNEL, onNote, () => {
    if (first) return void (first = false);
    // After a reconnect of the listening connection: catch up on presences and commits.
    log('warn', 'mesh cluster: notifications resumed after a break; re-reading the cluster');
    void load().then(
      () => emit({ type: 'resync' }),
      (e) => log('error', 'mesh cluster: re-reading presences failed', { error: String(e) }),
    );
  });
  await sweep();
  await load();

  async function renew(): Promise<void> {
    const rows =
      await sql`UPDATE mesh_hubs SET expires_at = now() + make_interval(secs => ${leaseSecs}) WHERE hub_id = ${hubId} RETURNING 1`;
    if (rows.length === 0) {
      // Our lease ran out and another hub removed it (and our presences, which it announced): start a new one.
      log('warn', 'mesh cluster: this hub lost its lease; its presences were released');
      await register();
      emit({ type: 'lease_lost' });
    }
    await sweep();
  }
  let renewing = false;
  const timer = setInterval(
    () => {
      if (renewing) return;
      renewing = true;
      renew()
        .catch((e) => log('error', 'mesh cluster: lease renewal failed', { error: String(e) }))
        .finally(() => (renewing = false));
    },
    Math.max(50, Math.floor(leaseMs / 3)),
  );

  /**
   * Adds the presences of one project that the database has and the view lacks (their notifications
   * are still on the way), telling the hub as if the notification had come. Departures are left to
   * their notifications, which carry the reason.
   */
  async function refresh(project: string): Promise<void> {
    const rows = await sql`
      SELECT p.name, p.presence_id, p.joined_at, p.hub_id FROM mesh_presences p JOIN mesh_hubs h USING (hub_id)
      WHERE p.project = ${project} AND p.hub_id <> ${hubId} AND h.expires_at >= now() ORDER BY p.joined_at`;
    for (const r of rows) {
      const known = remote.get(project)?.get(r.name);
      if (known?.presenceId === r.presence_id) continue;
      const peer: RemotePeer = {
        project,
        name: r.name,
        presenceId: r.presence_id,
        joinedAt: Number(r.joined_at),
        hubId: r.hub_id,
      };
      if (known) {
        dropRemote(project, known.name, known.presenceId);
        emit({ type: 'left', peer: known, reason: 'connection_closed' });
      }
      putRemote(peer);
      emit({ type: 'joined', peer });
    }
  }

  return {
    hubId,
    shared: true,
    refresh,
    renew,
    remote: (project) =>
      [...(remote.get(project)?.values() ?? [])].sort((a, b) => a.joinedAt - b.joinedAt),
    remoteByName: (project, name) => remote.get(project)?.get(name),

    claim: (c) =>
      serial(async () => {
        await sweep();
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
      }),

    takeOver: (project, name, presenceId) =>
      serial(async () => {
        const rows = await sql`
          WITH moved AS (
            UPDATE mesh_presences SET hub_id = ${hubId} WHERE project = ${project} AND name = ${name} AND presence_id = ${presenceId}
            RETURNING project, name, presence_id, joined_at
          )
          SELECT pg_notify(${MESH_CHANNEL}, json_build_object('k', 'm', 'h', ${hubId}::text, 'p', project, 'n', name, 'id', presence_id, 't', joined_at)::text)
          FROM moved`;
        if (rows.length > 0) dropRemote(project, name, presenceId);
        return rows.length > 0;
      }),

    release: (project, name, presenceId, reason) =>
      void serial(
        () => sql`
          WITH gone AS (DELETE FROM mesh_presences WHERE presence_id = ${presenceId} AND hub_id = ${hubId} RETURNING project, name, presence_id, joined_at)
          SELECT pg_notify(${MESH_CHANNEL}, json_build_object('k', 'l', 'h', ${hubId}::text, 'o', ${hubId}::text, 'p', project, 'n', name,
            'id', presence_id, 't', joined_at, 'r', ${reason}::text)::text) FROM gone`,
      ).catch((e) =>
        log('error', 'mesh cluster: releasing a name failed', { project, name, error: String(e) }),
      ),

    deliver(senderPresenceId, frame) {
      outcomes.push([senderPresenceId, JSON.stringify(frame)]);
      if (!outcomesScheduled) {
        outcomesScheduled = true;
        setImmediate(sendOutcomes);
      }
    },

    onEvent: (h) => void handlers.push(h),

    async close() {
      clearInterval(timer);
      if (outcomes.length > 0) sendOutcomes();
      await chain;
      await subscription.unlisten().catch(() => {});
      // Our presences were released one by one at shutdown; the lease goes too.
      await sql`DELETE FROM mesh_hubs WHERE hub_id = ${hubId}`.catch(() => {});
    },
  };
}
