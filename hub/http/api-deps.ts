/**
 * @module hub/http/api-deps — what the console API is made with: the fleet and its view, the trace,
 * the invoker, the hub's own capabilities and Ask Agent, the negotiation records, the SSE bounds
 * and the live feeds.
 */

import type { SseOptions } from '../../lib/a2a/sse.ts';
import type { Catalog } from '../../lib/catalog/catalog.ts';
import type { Fleet } from '../../lib/fleet/config.ts';
import type { FleetInvoker } from '../../lib/fleet/invoke.ts';
import type { TraceStore } from '../../lib/fleet/trace.ts';
import type { Log } from '../../lib/log.ts';
import type { FleetSnapshot } from '../fleet/view.ts';
import type { AskAnswer } from '../workbench/ask.ts';
import type { Feed, FleetFrame, TaskFeeds } from './live.ts';

export interface HubApiDeps {
  fleet: Fleet;
  view: { snapshot(): Promise<FleetSnapshot> };
  trace: TraceStore;
  invoker: FleetInvoker;
  log: Log;
  /** The hub's own capabilities (sector.movement, customer.reach, entity.resolve, …). */
  hubCatalog: Catalog;
  ask: (question: string) => Promise<AskAnswer>;
  /** Where negotiation records are kept (`DATA_DIR/hub/negotiations`). */
  negotiationsDir: string;
  /** Queue bound and shutdown registry of `/api/trace/stream` (a reader too far behind gets `event: close` STREAM_TOO_SLOW). */
  sse?: SseOptions;
  /** The hub's model, when one is configured: whether it answers its pings. */
  model?: { readonly up: boolean };
  /** What the live pages are pushed: the fleet, and the hub's task list. */
  live: { fleet: Feed<FleetFrame>; tasks: TaskFeeds };
}
