/**
 * @module hub/mesh/project-view — a project as its members and watchers see it: everyone present
 * across the cluster in join order, presence frames to the members whose claim was answered, and
 * the roster and messages told to the project's watchers (the console).
 */

import type { Peer, ServerFrame } from '../../lib/mesh/wire.ts';
import type { ProjectEvent, RealtimeContext } from './realtime-context.ts';
import type { Presence } from './roster.ts';

/** Everyone present in a project, on this hub and on the others, in join order. */
export function peersOf(ctx: RealtimeContext, project: string): (Peer & { joinedAt: number })[] {
  const local = ctx.roster
    .list(project)
    .map((p) => ({ name: p.name, presenceId: p.presenceId, joinedAt: p.joinedAt }));
  const remote = ctx.cluster
    .remote(project)
    .map((p) => ({ name: p.name, presenceId: p.presenceId, joinedAt: p.joinedAt }));
  // A presence that moved here from another hub joined earlier than its place in the local roster says.
  return [...local, ...remote].sort((a, b) => a.joinedAt - b.joinedAt);
}

/** Presence frames go to presences whose `claimed` was sent; a claim in progress gets the roster in `claimed` itself. */
export function toProject(
  ctx: RealtimeContext,
  project: string,
  frame: ServerFrame,
  except?: Presence,
): void {
  const text = JSON.stringify(frame);
  for (const q of ctx.roster.list(project)) if (q !== except && q.ready) ctx.io.out(q.ws, text);
}

const rosterEvent = (ctx: RealtimeContext, project: string): ProjectEvent => ({
  type: 'roster',
  peers: peersOf(ctx, project),
});

/** Tells a project's watchers an event, made only when someone watches. */
export function tellWatchers(
  ctx: RealtimeContext,
  project: string,
  event: () => ProjectEvent,
): void {
  const set = ctx.watchers.get(project);
  if (!set?.size) return;
  const e = event();
  for (const fn of [...set]) fn(e);
}

/** Tells a project's watchers its roster after a change. */
export const tellRoster = (ctx: RealtimeContext, project: string): void =>
  tellWatchers(ctx, project, () => rosterEvent(ctx, project));

/** Hears a project's roster (now, and after every change) and its new messages; returns the unsubscribe function. */
export function watchProject(
  ctx: RealtimeContext,
  project: string,
  fn: (e: ProjectEvent) => void,
): () => void {
  let set = ctx.watchers.get(project);
  if (!set) ctx.watchers.set(project, (set = new Set()));
  set.add(fn);
  fn(rosterEvent(ctx, project));
  return () => {
    set.delete(fn);
    if (!set.size && ctx.watchers.get(project) === set) ctx.watchers.delete(project);
  };
}
