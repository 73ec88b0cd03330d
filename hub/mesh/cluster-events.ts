/**
 * @module hub/mesh/cluster-events — what the other hubs on the database say, applied here: their
 * commits (to the delivery stream), presences joining, leaving, moving and swept, a lost lease,
 * delivery outcomes for senders here, and a resync after the listener reconnected.
 */

import type { ClusterEvent } from './cluster.ts';
import { cut, movedAway } from './departures.ts';
import { tellRoster, toProject } from './project-view.ts';
import type { RealtimeContext } from './realtime-context.ts';

export function onClusterEvent(ctx: RealtimeContext, e: ClusterEvent): void {
  const { roster, stream } = ctx;
  switch (e.type) {
    case 'committed':
      return stream.committedElsewhere(e.project, e.sequence);
    case 'joined':
      toProject(ctx, e.peer.project, {
        type: 'presence_joined',
        peer: { name: e.peer.name, presenceId: e.peer.presenceId },
      });
      return tellRoster(ctx, e.peer.project);
    case 'left':
      toProject(ctx, e.peer.project, {
        type: 'presence_left',
        peer: { name: e.peer.name, presenceId: e.peer.presenceId },
        reason: e.reason,
      });
      return tellRoster(ctx, e.peer.project);
    case 'moved': {
      // Its client resumed on another hub: the old socket here goes without a departure.
      const p = roster.byId(e.peer.presenceId);
      if (p) movedAway(ctx, p);
      return;
    }
    case 'swept': {
      const p = roster.byId(e.presenceId);
      if (p)
        cut(
          ctx,
          p,
          'hub_lost',
          'its name was released while this hub was cut off from the database',
        );
      return;
    }
    case 'lease_lost':
      for (const p of roster.all()) cut(ctx, p, 'hub_lost', 'this hub lost its lease');
      return;
    case 'delivery': {
      const p = roster.byId(e.senderPresenceId);
      if (p?.open) ctx.io.out(p.ws, e.frame);
      return;
    }
    case 'resync':
      for (const project of stream.projects())
        ctx.store.position(project).then(
          (h) => h && stream.committedElsewhere(project, h.sequence),
          (err) =>
            ctx.log('error', 'mesh: re-reading a stream head failed', {
              project,
              error: String(err),
            }),
        );
      return;
  }
}
