/**
 * @module hub/http/live — what the console's live pages are pushed rather than left to poll: a
 * feed re-reads one source (the fleet, the hub's tasks) on a timer only while someone listens and
 * hands each reading to every listener; `liveResponse` sends any subscription as Server-Sent
 * Events through a bounded queue per consumer.
 */

import { EventQueue } from '../../lib/event-queue.ts';
import { sseResponse, type SseOptions } from '../../lib/a2a/sse.ts';
import type { Log } from '../../lib/log.ts';
import type { FleetSnapshot } from '../fleet/view.ts';
import type { Principal } from '../../lib/auth/principal.ts';

/** Items one consumer may fall behind before its stream is cut (its EventSource reconnects afresh). */
export const LIVE_QUEUE_LIMIT = 64;

/** Something a page can listen to: `listen` gives the current state first when there is one. */
export interface Feed<T> {
  listen(fn: (item: T) => void): () => void;
  /** Stops the timer and drops every listener (the hub is stopping). */
  close(): void;
}

interface PolledFeedOptions<T> {
  read: () => Promise<T>;
  everyMs: number;
  log: Log;
  /** Which source this is, for the log line when a reading fails. */
  name: string;
  /** True when `next` says nothing new after `prev`; such readings are not sent. Default: every reading is sent. */
  same?: (prev: T, next: T) => boolean;
}

/**
 * A source read every `everyMs` while at least one listener is attached (the first listener
 * starts the reading at once; the last one to leave stops it). A new listener gets the latest
 * reading straight away.
 */
export function polledFeed<T>(opts: PolledFeedOptions<T>): Feed<T> {
  const listeners = new Set<(item: T) => void>();
  let latest: T | undefined;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let running = false;

  async function tick(): Promise<void> {
    timer = undefined;
    if (!listeners.size) return void (running = false);
    try {
      const next = await opts.read();
      const changed = latest === undefined || !opts.same?.(latest, next);
      latest = next;
      if (changed) for (const fn of [...listeners]) fn(next);
    } catch (e) {
      opts.log('warn', `live ${opts.name}: reading failed`, {
        error: (e as Error)?.name ?? 'unknown',
      });
    }
    // The next reading is timed from the end of this one, so slow sources never overlap.
    if (listeners.size) timer = setTimeout(() => void tick(), opts.everyMs);
    else running = false;
  }

  return {
    listen(fn) {
      listeners.add(fn);
      if (latest !== undefined) fn(latest);
      if (!running) {
        running = true;
        void tick();
      }
      return () => void listeners.delete(fn);
    },
    close() {
      listeners.clear();
      if (timer) clearTimeout(timer);
      timer = undefined;
    },
  };
}

/**
 * Streams what `subscribe` delivers as SSE (one JSON `data:` line each) until the client leaves;
 * a consumer more than `maxItems` behind is cut off.
 */
export function liveResponse<T>(
  req: Request,
  subscribe: (push: (item: T) => void) => () => void,
  sse?: SseOptions,
  maxItems = LIVE_QUEUE_LIMIT,
): Response {
  let unsubscribe = () => {};
  const queue = new EventQueue<T>(() => unsubscribe(), { maxItems });
  unsubscribe = subscribe((item) => queue.push(item));
  if (queue.isClosed) unsubscribe();
  req.signal.addEventListener('abort', () => queue.close(), { once: true });
  return sseResponse(
    queue,
    (item) => item,
    () => queue.close(),
    sse,
  );
}

/** One fleet reading as the Fleet page draws it over time. */
export interface FleetSample {
  at: string;
  nodes: { name: string; online: boolean; latencyMs: number | null }[];
}

/** A frame of `GET /api/fleet/stream`: the fleet now; `samples` is the kept history on the first frame, then the one new reading. */
export interface FleetFrame {
  snapshot: FleetSnapshot;
  samples: FleetSample[];
}

const sampleOf = (s: FleetSnapshot): FleetSample => ({
  at: s.checkedAt,
  nodes: s.nodes.map((n) => ({ name: n.name, online: n.online, latencyMs: n.latencyMs })),
});

/**
 * The fleet, probed every `everyMs` while the Fleet page is open, with the last `keep` readings
 * (the sparklines' "last minutes") kept in memory for the next page that opens.
 */
export function fleetFeed(opts: {
  view: { snapshot(): Promise<FleetSnapshot> };
  everyMs: number;
  log: Log;
  keep?: number;
}): Feed<FleetFrame> {
  const keep = opts.keep ?? 60;
  const history: FleetSample[] = [];
  const listeners = new Set<(f: FleetFrame) => void>();
  let latest: FleetSnapshot | undefined;
  let detach: (() => void) | undefined;
  const source = polledFeed({
    read: () => opts.view.snapshot(),
    everyMs: opts.everyMs,
    log: opts.log,
    name: 'fleet',
  });
  const onReading = (snapshot: FleetSnapshot) => {
    // A snapshot still cached by the view is the same reading, not a new sample.
    if (snapshot === latest) return;
    latest = snapshot;
    const sample = sampleOf(snapshot);
    history.push(sample);
    if (history.length > keep) history.shift();
    for (const fn of [...listeners]) fn({ snapshot, samples: [sample] });
  };
  return {
    listen(fn) {
      if (latest) fn({ snapshot: latest, samples: [...history] });
      listeners.add(fn);
      detach ??= source.listen(onReading);
      return () => {
        listeners.delete(fn);
        if (!listeners.size) detach?.(), (detach = undefined);
      };
    },
    close() {
      listeners.clear();
      source.close();
    },
  };
}

/** The task lists the console's Tasks pages watch: each page its caller's own (tasks belong to their creator). */
export interface TaskFeeds {
  listen(caller: Principal, fn: (item: unknown) => void): () => void;
  /** Stops every list being read (the hub is stopping). */
  close(): void;
}

/**
 * The caller's task list (the binding's ListTasks answer), re-read every `everyMs` while its page
 * listens and sent when it changed. One reading per listening page, since each principal sees
 * only its own tasks; the open readings are bounded by the SSE streams a process accepts.
 */
export function tasksFeeds(opts: {
  list: (caller: Principal) => Promise<unknown>;
  everyMs: number;
  log: Log;
}): TaskFeeds {
  const open = new Set<Feed<unknown>>();
  return {
    listen(caller, fn) {
      const feed = polledFeed({
        read: () => opts.list(caller),
        everyMs: opts.everyMs,
        log: opts.log,
        name: 'tasks',
        same: (a, b) => JSON.stringify(a) === JSON.stringify(b),
      });
      open.add(feed);
      const off = feed.listen(fn);
      return () => {
        off();
        feed.close();
        open.delete(feed);
      };
    },
    close() {
      for (const feed of open) feed.close();
      open.clear();
    },
  };
}
