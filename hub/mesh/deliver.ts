/**
 * @module hub/mesh/deliver — committed messages to this hub's presences, in sequence order (the
 * delivery stream calls in): held while a claim is answered, skipped when a claim or recovery
 * covered them, encoded once for all their recipients; a recipient chosen at send time that has
 * left makes a `disconnected` outcome for the sender.
 */

import type { MeshMessage } from '../../lib/mesh/wire.ts';
import { cut, outcome } from './departures.ts';
import { tellWatchers } from './project-view.ts';
import type { LocalSend, RealtimeContext } from './realtime-context.ts';
import type { Presence } from './roster.ts';
import type { StreamEntry } from './stream.ts';

/** Deliveries that may wait for a claim are bounded. */
const MAX_BACKLOG = 10_000;

/** The `message` frame of a message whose JSON is at hand. */
const messageFrame = (json: string): string => `{"type":"message","message":${json}}`;
export const frameOf = (m: MeshMessage) => () => messageFrame(JSON.stringify(m));

/**
 * Offers a committed message to one presence: held while its claim is answered, skipped when its
 * claim or recovery covered it. `frame` encodes the `message` frame (once, for all its recipients).
 */
export function offer(
  ctx: RealtimeContext,
  q: Presence,
  m: MeshMessage,
  frame: () => string,
): void {
  if (!q.open) return;
  const next = q.offer(m, MAX_BACKLOG);
  if (next === 'overflow') cut(ctx, q, 'heartbeat_timeout', 'backlog overflow');
  else if (next === 'send') ctx.io.out(q.ws, frame());
}

/**
 * Delivers one committed message on this hub: a broadcast to every presence here but its sender,
 * a direct message to its recipient's presence if it is here. A recipient this hub chose at send
 * time that has left hears `disconnected`.
 */
export function deliver(ctx: RealtimeContext, e: StreamEntry<LocalSend>): void {
  const m = e.message;
  tellWatchers(ctx, m.project, () => ({ type: 'message', message: m }));
  // Encoded only when someone here receives it; a message this hub sent is not encoded again.
  let text: string | undefined;
  const frame = () => (text ??= messageFrame(e.json ?? JSON.stringify(m)));
  if (m.target.type === 'project') {
    for (const q of ctx.roster.list(m.project))
      if (q.presenceId !== m.from.presenceId) offer(ctx, q, m, frame);
  } else if (m.target.presenceId) {
    const q = ctx.roster.byId(m.target.presenceId);
    if (q && q.project === m.project) offer(ctx, q, m, frame);
  }
  for (const q of e.local?.frozen ?? [])
    if (!q.open)
      outcome(ctx, m.from.presenceId, {
        type: 'delivery',
        messageId: m.messageId,
        to: q.name,
        status: 'disconnected',
      });
}
