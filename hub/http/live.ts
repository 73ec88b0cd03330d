/**
 * @module hub/http/live — what the console's live pages are pushed rather than left to poll: the
 * fleet is re-read on a timer only while someone listens, the hub's task lists when a task changes
 * (one reading per principal), and each reading goes to every listener as one frame made once,
 * with an SSE id a reconnecting page's `Last-Event-ID` names (lib/sse/live.ts sends them).
 */

import type { Log } from '../../lib/log.ts';
import type { FleetSnapshot } from '../fleet/view.ts';
import { ownerKey, type Principal } from '../../lib/auth/principal.ts';
import { readyFrame } from '../../lib/sse/live.ts';
import type { ReadyFrame } from '../../lib/sse/queue.ts';

/** Something a page can listen to: `listen` gives the current state first when there is one. */
export interface Feed<T> {
  listen(fn: (item: T) => void): () => void;
  /** Reads the source now rather than at its next turn, when someone listens (the source changed). */
  refresh?(): void;
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
function polledFeed<T>(opts: PolledFeedOptions<T>): Feed<T> {
  const listeners = new Set<(item: T) => void>();
  let latest: T | undefined;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let running = false;
  let reading = false;
  let again = false;

  async function tick(): Promise<void> {
    timer = undefined;
    reading = true;
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
    reading = false;
    // The next reading is timed from the end of this one, so slow sources never overlap.
    if (listeners.size) timer = setTimeout(() => void tick(), again ? 0 : opts.everyMs);
    else running = false;
    again = false;
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
    refresh() {
      if (!running) return;
      if (reading) again = true;
      else if (timer) {
        clearTimeout(timer);
        void tick();
      }
    },
    close() {
      listeners.clear();
      if (timer) clearTimeout(timer);
      timer = undefined;
    },
  };
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

/** The fleet page's feed: each frame made once, with its SSE id (`<process>.<reading>`). */
export interface FleetFeed {
  /**
   * `last` is the `Last-Event-ID` of a reconnecting page: it gets the fleet now with only the
   * readings after it, nothing when it is current, and the whole kept history otherwise.
   */
  listen(fn: (frame: ReadyFrame) => void, last?: string | null): () => void;
  refresh(): void;
  close(): void;
}

/** This process's mark in the ids of its state frames: an id of another process means a fresh start. */
const PROCESS_MARK = crypto.randomUUID().slice(0, 8);

/**
 * The fleet, probed every `everyMs` while the Fleet page is open, with the last `keep` readings
 * (the sparklines' "last minutes") kept in memory for the next page that opens. Each frame's id
 * numbers its reading, so a page that reconnects is sent only the readings it missed.
 */
export function fleetFeed(opts: {
  view: { snapshot(): Promise<FleetSnapshot> };
  everyMs: number;
  log: Log;
  keep?: number;
}): FleetFeed {
  const keep = opts.keep ?? 60;
  /** The kept readings; the last is number `count`. */
  const history: FleetSample[] = [];
  let count = 0;
  const listeners = new Set<(f: ReadyFrame) => void>();
  let latest: FleetSnapshot | undefined;
  let detach: (() => void) | undefined;
  const source = polledFeed({
    read: () => opts.view.snapshot(),
    everyMs: opts.everyMs,
    log: opts.log,
    name: 'fleet',
  });
  const idOf = (n: number) => `${PROCESS_MARK}.${n}`;
  const onReading = (snapshot: FleetSnapshot) => {
    // A snapshot still cached by the view is the same reading, not a new sample.
    if (snapshot === latest) return;
    latest = snapshot;
    const sample = sampleOf(snapshot);
    history.push(sample);
    count++;
    if (history.length > keep) history.shift();
    const frame = readyFrame({ snapshot, samples: [sample] } satisfies FleetFrame, idOf(count));
    for (const fn of [...listeners]) fn(frame);
  };
  /** The readings a page that last saw `last` is missing (all kept ones when unknown). */
  const missing = (last: string | null | undefined): FleetSample[] => {
    const m = last ? /^([0-9a-f]{8})\.(\d{1,15})$/.exec(last) : null;
    const seen = m && m[1] === PROCESS_MARK ? Number(m[2]) : -1;
    const first = count - history.length + 1;
    return seen >= first - 1 && seen <= count ? history.slice(seen - first + 1) : [...history];
  };
  return {
    listen(fn, last) {
      if (latest) {
        const samples = missing(last);
        if (samples.length) fn(readyFrame({ snapshot: latest, samples }, idOf(count)));
      }
      listeners.add(fn);
      detach ??= source.listen(onReading);
      return () => {
        listeners.delete(fn);
        if (!listeners.size) detach?.(), (detach = undefined);
      };
    },
    refresh: () => source.refresh?.(),
    close() {
      listeners.clear();
      source.close();
    },
  };
}

/** The task lists the console's Tasks pages watch: each page its caller's own (tasks belong to their creator). */
export interface TaskFeeds {
  /**
   * Each frame's SSE id is a hash of the list it carries: a page that reconnects with
   * `Last-Event-ID` naming the list as it is now is sent nothing until it changes.
   */
  listen(caller: Principal, fn: (frame: ReadyFrame) => void, last?: string | null): () => void;
  /** A task of the hub changed: every watched list is read again (once, however many pages watch it). */
  changed(): void;
  /** Stops every list being read (the hub is stopping). */
  close(): void;
}

interface OwnerFeed {
  caller: Principal;
  listeners: Set<(frame: ReadyFrame) => void>;
  latest: string | undefined;
  /** The latest list's frame and its id. */
  frame: ReadyFrame | undefined;
  id: string | undefined;
  /** Listeners that already hold a list (their `Last-Event-ID`), not sent it again. */
  holding: Map<(frame: ReadyFrame) => void, string>;
  reading: boolean;
  /** A change arrived while reading: read again when done. */
  again: boolean;
  timer: ReturnType<typeof setTimeout> | undefined;
  /** When the scheduled reading is due (ms since the epoch). */
  due: number;
  /** When the last reading ended. */
  lastRead: number;
}

/**
 * The caller's task list (the binding's ListTasks answer), sent when it changed. One reading per
 * principal, shared by all of that principal's pages, and only when something happened: a task
 * of the hub changed (`changed`), or, every `everyMs`, while the list holds a task still running
 * (a delegated task advances when it is read, docs/architecture.md). A page that watches an idle
 * list costs nothing. The open readings are bounded by the SSE streams a process accepts.
 */
export function tasksFeeds(opts: {
  list: (caller: Principal) => Promise<unknown>;
  /** Whether a list holds a task that advances when read (submitted or working). */
  active: (list: unknown) => boolean;
  everyMs: number;
  log: Log;
  /** Least time between two readings of one list, in ms (default 250): a burst of changes is one reading. */
  minGapMs?: number;
}): TaskFeeds {
  const feeds = new Map<string, OwnerFeed>();
  const minGap = opts.minGapMs ?? 250;
  let closed = false;
  /** Reads `feed` after `delay` ms, unless a reading is already due sooner. */
  const schedule = (feed: OwnerFeed, delay: number) => {
    const at = Date.now() + delay;
    if (feed.timer !== undefined && feed.due <= at) return;
    clearTimeout(feed.timer);
    feed.due = at;
    feed.timer = setTimeout(() => void read(feed), delay);
  };

  async function read(feed: OwnerFeed): Promise<void> {
    if (feed.reading) return void (feed.again = true);
    clearTimeout(feed.timer);
    feed.timer = undefined;
    feed.reading = true;
    let list: unknown;
    try {
      list = await opts.list(feed.caller);
      const text = JSON.stringify(list);
      if (text !== feed.latest) {
        feed.latest = text;
        feed.id = new Bun.CryptoHasher('sha256').update(text).digest('base64url').slice(0, 22);
        feed.frame = readyFrame(list, feed.id);
        for (const fn of [...feed.listeners]) if (feed.holding.get(fn) !== feed.id) fn(feed.frame);
      }
      feed.holding.clear();
    } catch (e) {
      opts.log('warn', 'live tasks: reading failed', { error: (e as Error)?.name ?? 'unknown' });
    }
    feed.reading = false;
    feed.lastRead = Date.now();
    if (closed || !feed.listeners.size) return;
    if (feed.again) {
      feed.again = false;
      schedule(feed, minGap);
    } else if (list !== undefined && opts.active(list)) schedule(feed, opts.everyMs);
  }

  return {
    listen(caller, fn, last) {
      const key = ownerKey(caller);
      let feed = feeds.get(key);
      if (!feed) {
        feed = {
          caller,
          listeners: new Set(),
          latest: undefined,
          frame: undefined,
          id: undefined,
          holding: new Map(),
          reading: false,
          again: false,
          timer: undefined,
          due: 0,
          lastRead: 0,
        };
        feeds.set(key, feed);
        feed.listeners.add(fn);
        if (last) feed.holding.set(fn, last);
        void read(feed);
      } else {
        feed.listeners.add(fn);
        if (!feed.frame) {
          if (last) feed.holding.set(fn, last);
        } else if (feed.id !== last) fn(feed.frame);
      }
      const mine = feed;
      return () => {
        mine.listeners.delete(fn);
        mine.holding.delete(fn);
        if (mine.listeners.size) return;
        clearTimeout(mine.timer);
        if (feeds.get(key) === mine) feeds.delete(key);
      };
    },
    changed() {
      for (const feed of feeds.values())
        if (feed.reading) feed.again = true;
        else schedule(feed, Math.max(0, feed.lastRead + minGap - Date.now()));
    },
    close() {
      closed = true;
      for (const feed of feeds.values()) clearTimeout(feed.timer);
      feeds.clear();
    },
  };
}
