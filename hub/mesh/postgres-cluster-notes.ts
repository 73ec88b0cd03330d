/**
 * @module hub/mesh/postgres-cluster-notes — what travels on the cluster's channel: presence changes
 * as JSON notes, commits and delivery outcomes as text notes (lib/mesh/postgres-notes.ts). Heard
 * notes become the hub's cluster events; outcomes for senders on other hubs leave in batches.
 */

import {
  NOTE_SEPARATOR,
  deliveryNotes,
  noteOrigin,
  parseCommitNote,
  parseDeliveryNote,
} from '../../lib/mesh/postgres-notes.ts';
import { MESH_CHANNEL } from '../../lib/mesh/postgres-schema.ts';
import type { DeliveryFrame, LeaveReason } from '../../lib/mesh/wire.ts';
import type { RemotePeer } from './cluster.ts';
import type { PgClusterContext } from './postgres-cluster-context.ts';

/** Presence changes travel as JSON notes; commits and delivery outcomes have their own text notes. */
export type Note =
  | { k: 'j'; h: string; p: string; n: string; id: string; t: number }
  | { k: 'l'; h: string; o: string; p: string; n: string; id: string; t: number; r: LeaveReason }
  | { k: 'm'; h: string; p: string; n: string; id: string; t: number };

/** One notification heard on the channel, told to the hub as its cluster event. */
export function onNote(ctx: PgClusterContext, payload: string): void {
  const { hubId, view } = ctx;
  const origin = noteOrigin(payload);
  if (origin !== undefined) {
    // This hub's own commits and outcomes come back too: skipped before any parsing.
    if (origin === hubId) return;
    if (payload.charCodeAt(0) === 99) {
      const c = parseCommitNote(payload);
      if (c) view.emit({ type: 'committed', project: c.project, sequence: c.sequence });
      return;
    }
    const d = parseDeliveryNote(payload);
    if (d)
      for (const [senderPresenceId, frame] of d.items)
        view.emit({ type: 'delivery', senderPresenceId, frame });
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
      if (n.h === hubId || view.get(n.p, n.n)?.presenceId === n.id) return;
      view.put({ project: n.p, name: n.n, presenceId: n.id, joinedAt: n.t, hubId: n.h });
      return view.emit({
        type: 'joined',
        peer: { project: n.p, name: n.n, presenceId: n.id, joinedAt: n.t, hubId: n.h },
      });
    case 'l': {
      if (n.o === hubId) {
        // Another hub removed one of ours: our lease had run out.
        if (n.h !== hubId) view.emit({ type: 'swept', presenceId: n.id });
        return;
      }
      const peer = view.drop(n.p, n.n, n.id);
      if (peer) view.emit({ type: 'left', peer, reason: n.r });
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
      view.put(peer);
      return view.emit({ type: 'moved', peer });
    }
  }
}

/**
 * Delivery outcomes for senders on other hubs leave in batches, one notification per turn (split
 * under the size limit).
 */
export function createOutcomeBatch({ sql, log, hubId }: PgClusterContext) {
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
  return {
    deliver(senderPresenceId: string, frame: DeliveryFrame): void {
      outcomes.push([senderPresenceId, JSON.stringify(frame)]);
      if (!outcomesScheduled) {
        outcomesScheduled = true;
        setImmediate(sendOutcomes);
      }
    },
    /** Sends what is waiting now (at close). */
    flush(): void {
      if (outcomes.length > 0) sendOutcomes();
    },
  };
}
