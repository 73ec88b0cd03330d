/**
 * @module hub/http/hub-live — the hub's two live feeds wired: the fleet page's, from the fleet
 * view, and the Tasks pages', each the hub node's task list as ListTasks answers it to that
 * page's principal, re-read often while a task is still running.
 */

import type { TaskEngine } from '../../lib/a2a/engine/engine.ts';
import { isA2AError } from '../../lib/a2a/errors.ts';
import { listPageToV1 } from '../../lib/a2a/wire/v1.ts';
import type { Principal } from '../../lib/auth/principal.ts';
import type { Log } from '../../lib/log.ts';
import type { FleetSnapshot } from '../fleet/view.ts';
import { fleetFeed, tasksFeeds } from './live.ts';

export interface HubLiveOptions {
  view: { snapshot(): Promise<FleetSnapshot> };
  /** The hub node's engine (made after the feeds). */
  tasks: () => TaskEngine;
  log: Log;
  /** How often the sources are re-read while someone watches, in ms (fleet 5000, tasks 2000). */
  liveMs?: { fleet?: number; tasks?: number };
}

export function hubLiveFeeds(o: HubLiveOptions) {
  const { view, log } = o;
  // A Tasks page's list, as the binding's ListTasks answers it to that page's principal (reading advances delegated tasks).
  const listTasks = async (caller: Principal) => {
    const page = await o
      .tasks()
      .listTasks({ pageSize: 50, includeArtifacts: true, historyLength: 2 }, caller);
    return isA2AError(page) ? { tasks: [] } : listPageToV1(page, true);
  };
  return {
    fleet: fleetFeed({ view, everyMs: o.liveMs?.fleet ?? 5000, log }),
    tasks: tasksFeeds({
      list: listTasks,
      active: (page) =>
        (page as { tasks?: { status?: { state?: string } }[] }).tasks?.some((t) =>
          ['TASK_STATE_SUBMITTED', 'TASK_STATE_WORKING'].includes(t.status?.state ?? ''),
        ) ?? false,
      everyMs: o.liveMs?.tasks ?? 2000,
      log,
    }),
  };
}
